"""MainWindow: assembles the panes, toolbar, status bar and dialogs; wiring only, no engine logic."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.history.recording import Recording
from playground.room.loops import agent_streak
from ui.bridge import EngineBridge
from ui.dialogs.new_session import NewSessionDialog
from ui.experiments.menu import ExperimentsMenu
from ui.panes.conversation.conversation_pane import ConversationPane
from ui.panes.decisions.decision_strip import DecisionStrip
from ui.panes.memory.memory_pane import MemoryPane
from ui.panes.participants.participants_bar import ParticipantsBar
from ui.panes.thoughts.thoughts_pane import ThoughtsPane
from ui.policies import PolicyMenu
from ui.rating.menu import RatingMenu
from ui.replay.fork_dialog import ForkDialog
from ui.replay.leave_live import LeaveLiveQuestion, describe, live_room
from ui.replay.panel import ReplayPanel
from ui.screen_fit import fit_window
from ui.selection import SelectedParticipant
from ui.session.controller import SessionController
from ui.session.run_state import LIVE
from ui.session.run_state import describe as describe_run_state
from ui.storm.menu import StormMenu
from ui.widgets.busy_overlay import BusyOverlay
from ui.widgets.session_library import SessionLibraryDialog
from ui.window.ended_offer import EndedSessionOffer
from ui.window.file_menu import FileMenu
from ui.window.geometry_view import GeometryView
from ui.window.history import HistoryView
from ui.window.messages import WindowMessages
from ui.window.session_dialogs import SessionDialogs
from ui.window.shortcuts import WindowKeys
from ui.window.thought_undo import ThoughtUndo
from ui.window.window_layout import ROOT_MARGINS, CompactWindow, ConversationFirst, fit_panes


class MainWindow(QMainWindow):
    """The playground: participants bar, memory | conversation | thoughts, decision strip, controls."""

    def __init__(self, controller: SessionController, bridge: EngineBridge) -> None:
        super().__init__()
        self.controller = controller
        self.bridge = bridge
        self.selection = SelectedParticipant(self)
        self._tasks: set[asyncio.Future[object]] = set()
        self._closing = False
        #: The recording the panes show (see reset_views); None: a live session, or nothing.
        self._views_of: object = None
        #: The question before a live session is ended for a saved one (while it is open).
        self.leave_question: LeaveLiveQuestion | None = None
        self.setWindowTitle("Thought Playground")

        self.participants = ParticipantsBar(bridge, self.selection)
        self.memory = MemoryPane(bridge, self.selection)
        self.conversation = ConversationPane(bridge, self.selection, self.participants.colors)
        self.decisions = DecisionStrip(bridge)
        self.thoughts = ThoughtsPane(bridge, self.selection)

        self.messages = WindowMessages(controller.engine_label(), self)  # banner, status line
        self.banner = self.messages.banner

        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(4, 0, 4, 0)
        brow = QHBoxLayout()
        brow.addWidget(self.banner, 1)
        brow.addWidget(self.messages.banner_close)
        cl.addLayout(brow)
        # The conversation over the decision strip; the conversation keeps its rows first.
        self.center_split = QSplitter(Qt.Orientation.Vertical)
        self.center_split.addWidget(self.conversation)
        self.center_split.addWidget(self.decisions)
        cl.addWidget(self.center_split, 1)
        self.conversation_first = ConversationFirst(
            self.center_split, self.conversation, self.decisions
        )

        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.memory)
        splitter.addWidget(center)
        splitter.addWidget(self.thoughts)
        fit_panes(splitter, self.memory, center, self.thoughts)

        root = QWidget()
        rl = QVBoxLayout(root)
        rl.setContentsMargins(*ROOT_MARGINS)
        rl.setSpacing(3)
        rl.addWidget(self.participants)
        rl.addWidget(splitter, 1)
        self.setCentralWidget(root)
        self._build_toolbar()
        self.messages.add_to(self.statusBar())
        self._build_menu()
        self._build_rating_menu()
        self._build_experiments_menu()
        self.storm = StormMenu(self)  # simulated users: add, edit profiles; the STORM view
        self.keys.add_help_menu()  # last on the menu bar
        self.dialogs = SessionDialogs(self, self.add_menu)  # New session…, Engine…, Join…
        self._connect()
        self._build_replay()
        self.undo = ThoughtUndo(self)  # ✕ on a bubble can be undone: Ctrl+Z, status-bar Undo
        self.act_undo = self.undo.action
        self.keys.add_edit_menu(self.act_undo)  # Edit ▸ Undo (Ctrl+Z)
        self.busy = BusyOverlay(self.conversation)  # what a session's set-up waits for
        self.controller.busy_changed.connect(self.busy.show_text)
        self.history = HistoryView(self)  # a click on a message shows the trigger behind it
        self.ended_offer = EndedSessionOffer(self)  # an ended session: ways to go on
        self.geometry_view = GeometryView(self)  # View ▸ Geometry: trajectory and series
        self.hint(
            "Choose “New session” to start: a random 4 of 8 personas with an icebreaker, or pick your own."
        )
        self.compact = CompactWindow(self)  # a short window: the conversation keeps the room
        fit_window(self, (1440, 900))  # its screen's available geometry at most; kept size

    # -- building --------------------------------------------------------------------------------

    def _build_toolbar(self) -> None:
        self.toolbar = tb = self.addToolBar("Session")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        icon = self.style().standardIcon
        sp = QStyle.StandardPixmap
        self.act_new = QAction("New session…", self)
        self.act_run = QAction(icon(sp.SP_MediaPlay), "Run", self)
        self.act_pause = QAction(icon(sp.SP_MediaPause), "Pause", self)
        self.act_step = QAction(icon(sp.SP_MediaSkipForward), "Step", self)
        self.act_stop = QAction(icon(sp.SP_MediaStop), "Stop", self)
        self.act_run.setToolTip("Run the simulation")
        self.act_step.setToolTip("Process one trigger, then pause")
        self.act_join = QAction("Join as human…", self)
        self.act_invite = QAction("Invite people (browser)…", self)
        self.act_engine = QAction("Engine…", self)
        for a in (self.act_new, self.act_run, self.act_pause, self.act_step, self.act_stop):
            tb.addAction(a)
        tb.addSeparator()
        self.pace = QComboBox()
        self.pace.addItem("As fast as possible", "fast")
        self.pace.addItem("Human typing speed", "typing")
        self.pace.setToolTip("Simulation speed")
        tb.addWidget(self.pace)
        tb.addSeparator()
        tb.addAction(self.act_join)
        self.participants_button = QToolButton()
        self.participants_button.setText("Participants ▾")
        self.participants_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.participants_menu = QMenu(self)
        self.participants_menu.addAction(self.act_invite)
        self.act_settings = self.participants_menu.addAction(
            "Settings of the selected participant (policy, proactivity)…"
        )
        self.policy_menu = PolicyMenu(self.participants_menu, self)
        self.add_menu = self.participants_menu.addMenu("Add participant")
        self.act_remove = self.participants_menu.addAction("Remove the selected participant")
        self.participants_button.setMenu(self.participants_menu)
        tb.addWidget(self.participants_button)
        tb.addAction(self.act_engine)
        self.run_label = QLabel("")  # the run state, at the status bar's right (_set_running)
        self.run_label.setObjectName("runState")
        self.statusBar().addPermanentWidget(self.run_label)
        self._set_running(False)

    def _connect(self) -> None:
        c = self.controller
        self.act_new.triggered.connect(self.dialogs.open_new_session)
        self.act_run.triggered.connect(lambda: self.spawn(c.run()))
        self.act_pause.triggered.connect(c.pause)
        self.act_step.triggered.connect(lambda: self.spawn(c.step()))
        self.act_stop.triggered.connect(lambda: self.spawn(c.stop()))
        self.act_join.triggered.connect(self.dialogs.open_join)
        self.act_invite.triggered.connect(self.dialogs.open_invite)
        self.act_engine.triggered.connect(self.dialogs.open_engine_settings)
        self.act_settings.triggered.connect(self.dialogs.open_participant_settings)
        self.act_remove.triggered.connect(
            lambda: self.spawn(c.room_commands.remove_participant(self.selection.name))
        )
        self.participants_menu.aboutToShow.connect(self.dialogs.fill_add_menu)
        self.pace.currentIndexChanged.connect(lambda: c.set_pace(self.pace.currentData()))
        c.pace_changed.connect(lambda pace: self.pace.setCurrentIndex(self.pace.findData(pace)))
        c.about_to_start.connect(self.reset_views)
        c.error.connect(self.show_error)
        c.notice.connect(self.hint)
        c.running_changed.connect(self._set_running)
        c.engine_changed.connect(self.messages.engine_label.setText)
        c.mode_changed.connect(self._mode)
        c.embedder_ready.connect(lambda: self.hint("Embedding model loaded."))
        c.session_changed.connect(
            lambda sid: self.hint(f"Session {sid} — saved continuously to {c.db_path}")
        )
        self.bridge.usage_recorded.connect(self.messages.show_usage)
        self.bridge.error_occurred.connect(lambda where, msg: self.show_error(f"{where}: {msg}"))
        self.bridge.session_finished.connect(self.messages.session_finished)
        self.bridge.thought_refused.connect(self.messages.refused)
        self.bridge.condition_changed.connect(self.messages.condition_changed)
        self.bridge.session_finished.connect(lambda *_: self._set_running(False))
        self.conversation.send_requested.connect(lambda text: self.spawn(c.send(text)))
        self.bridge.message_posted.connect(lambda _m: self._agents_waiting())
        self.bridge.session_finished.connect(lambda *_: self._agents_waiting())
        self.conversation.note_requested.connect(
            lambda mid, text: self.spawn(c.annotate(mid, text))
        )
        self.conversation.label_requested.connect(lambda mid, q, a: self.spawn(c.label(mid, q, a)))
        self.thoughts.force_express_requested.connect(
            lambda agent, tid: self.spawn(c.room_commands.force_express(agent, tid))
        )
        self.thoughts.delete_requested.connect(
            lambda agent, tid: self.spawn(c.room_commands.delete_thought(agent, tid))
        )
        self.thoughts.message_focus_requested.connect(self.conversation.focus_message)
        self.memory.add_requested.connect(
            lambda agent, kind, text, w: self.spawn(
                c.room_commands.add_memory(agent, kind, text, w)
            )
        )
        self.memory.edit_requested.connect(
            lambda agent, mid, kind, text, w: self.spawn(
                c.room_commands.edit_memory(agent, mid, kind, text, w)
            )
        )
        self.memory.delete_requested.connect(
            lambda agent, mid: self.spawn(c.room_commands.delete_memory(agent, mid))
        )

    # -- helpers -----------------------------------------------------------------------------------

    def spawn(self, coro: Awaitable[object]) -> asyncio.Future[object]:
        """Run a controller command on the loop; its errors are already turned into messages."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def hint(self, text: str) -> None:
        self.messages.hint(text)

    def show_error(self, text: str) -> None:
        self.messages.show_error(text)

    def hide_error(self) -> None:
        self.messages.hide_error()

    def _set_running(self, _running: object = None) -> None:
        """Follow the run state (:mod:`ui.session.run_state`; the argument is not trusted): Run and
        Step only while paused (never during a step or a set-up), Pause only while running."""
        state = self.controller.run_state()
        has_room = state in LIVE
        self.act_run.setEnabled(state == "paused")
        self.act_step.setEnabled(state == "paused")
        self.act_pause.setEnabled(state == "running")
        self.act_stop.setEnabled(has_room)
        self.act_join.setEnabled(has_room and not self.controller.human)
        self.act_invite.setEnabled(has_room)
        self.run_label.setText(describe_run_state(self.controller))
        # Memories and thoughts change only in a live session (not an ended one, not a replay).
        replaying = getattr(getattr(self, "replay", None), "active", False)
        frozen = state == "ended" or bool(replaying)
        self.memory.set_live(not frozen)
        self.thoughts.set_live(not frozen)
        can_type = has_room and bool(self.controller.human)  # nobody types into an ended session
        self.conversation.composer.setEnabled(can_type)
        self.conversation.send_button.setEnabled(can_type)

    def _agents_waiting(self) -> None:
        """Say in the conversation pane when the agents wait for the person to speak (after
        ``max_agent_streak`` agent messages in a row, :func:`playground.room.loops.run_realtime`)."""
        c, room = self.controller, self.controller.room
        live = room is not None and room.status == "running" and c.mode == "realtime"
        streak = agent_streak(room) if room is not None and live else 0
        limit = c.settings.room.max_agent_streak
        self.conversation.show_waiting(streak if streak >= limit else 0)

    def _mode(self, mode: str) -> None:
        self.conversation.set_human(self.controller.human if mode == "realtime" else None)
        self._agents_waiting()
        if mode == "realtime":
            who = self.controller.human
            room_settings = self.controller.settings.room
            # The turn cap first: the status bar is elided at 1024 px, and this is what changes.
            self.hint(
                (f"You joined as {who}: real time" if who else "Real time: people take part")
                + f" until Stop; the turn cap ({room_settings.max_turns}) no longer applies."
                " Agents answer, stay silent or interrupt; after"
                f" {room_settings.pause_seconds:g} s of silence they may speak up."
            )
        self._set_running(self.controller.task is not None and not self.controller.task.done())

    def reset_views(self, *, keep_messages: int | None = None, session: object = None) -> None:
        """Clear every pane.

        Message, memory and thought ids restart at 1 in every session, and a name can sit in
        two sessions with other colours: the panes may reuse a widget by id or name only
        within the recording they show. So a rebuild of another recording than the one on
        screen (``session``) starts from empty panes, as a new session does.

        Args:
            keep_messages: a replay rebuilding a moment: keep the conversation's first messages;
                the panes collect the new state and lay it out once in their ``end_rebuild``,
                reusing the widgets they have.
            session: the recording the rebuild shows (compared by identity; None: unknown,
                so nothing is reused).
        """
        self.decisions.reset()
        same = session is not None and session is self._views_of
        if keep_messages is None or not same:
            self.selection.select("")
            for pane in (self.participants, self.memory, self.conversation, self.thoughts):
                pane.reset()
            self._views_of = session
        if keep_messages is not None:
            keep_messages = keep_messages if same else 0
            self.participants.begin_rebuild()
            self.memory.begin_rebuild()
            self.conversation.begin_rebuild(keep_messages)
            self.thoughts.begin_rebuild()
        self.messages.reset_usage()
        self.hide_error()

    # -- saved sessions: replay and "new session like this one" ----------------------------------

    def _build_replay(self) -> None:
        self.replay_panel = ReplayPanel(self)
        self.replay = self.replay_panel.controller
        self.transport = self.replay_panel.transport

    def open_fork(self) -> ForkDialog | None:
        """Fork the replayed session from its current moment (the Fork dialog)."""
        return self.replay_panel.open_fork()

    def open_replay(self, db_path: str, session_id: str) -> asyncio.Future[object]:
        """Replay a saved session in the three panes, with the window brought to the front (it
        may be asked from the Experiments or STORM window). A live session ends first, and only
        if the user says so (:meth:`confirm_leaving_live`)."""
        return self.spawn(self._open_replay(db_path, session_id))

    async def _open_replay(self, db_path: str, session_id: str) -> None:
        self.bring_to_front()
        try:
            db = self.controller.database_at(db_path)
            recording = Recording.load(db, session_id)
        except errors.PlaygroundError as exc:
            self.show_error(f"Open session: {exc}")
            return
        sid = recording.session["id"]
        if not await self.confirm_leaving_live(f"opening session {sid} in replay"):
            return
        await self.controller.release("a saved session was opened for replay")
        self.replay.open(recording)

    def bring_to_front(self) -> None:
        """Show the window above the others, with the focus (restored if minimised)."""
        if self.isMinimized():
            self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.show()
        self.raise_()
        self.activateWindow()

    async def confirm_leaving_live(self, target: str) -> bool:
        """True when nothing live would be lost by opening ``target`` (no live session), or the
        user chose to end the live session; False when they cancelled (it runs on untouched).

        The question (:class:`LeaveLiveQuestion`) is ``self.leave_question`` while it is open;
        a newer request cancels an older one."""
        asked = None
        while (room := live_room(self.controller)) is not None and room is not asked:
            if self.leave_question is not None:
                self.leave_question.reject()  # an earlier request: cancelled
            question = LeaveLiveQuestion(self, describe(self.controller, room), target)
            self.leave_question = question
            try:
                end = await question.ask()
            finally:
                if self.leave_question is question:
                    self.leave_question = None
                with contextlib.suppress(RuntimeError):  # already gone with the window
                    question.deleteLater()
            if self._closing or self.controller.closed:
                return False
            if not end:
                self.hint(f"Session {room.session_id} runs on (cancelled: {target}).")
                return False
            asked = room  # another session started meanwhile: ask about that one too
        return True

    def _build_menu(self) -> None:
        self.file_menu = FileMenu(self)
        self.act_open_session = self.file_menu.act_open_session
        self.act_open_database = self.file_menu.act_open_database
        # Session (every toolbar action), View (F6) and Help menus; the window's shortcuts.
        self.keys = WindowKeys(self)

    @property
    def library_dialog(self) -> SessionLibraryDialog | None:
        return self.file_menu.library_dialog

    def open_library(self, db_path: str | None = None) -> SessionLibraryDialog:
        """Show the saved sessions of a database (default: the controller's), non-modal."""
        return self.file_menu.open_library(db_path)

    def open_database_file(self, path: str | None = None) -> SessionLibraryDialog | None:
        return self.file_menu.open_database_file(path)

    def new_session_like(self, db_path: str, session_id: str) -> NewSessionDialog | None:
        return self.file_menu.new_session_like(db_path, session_id)

    # -- rating (blind rating, plans, report, participant questionnaire) ---------------------------

    def _build_rating_menu(self) -> None:
        """The Rating menu; it also offers the questionnaire when a person leaves a session."""
        self.rating = RatingMenu(self)

    def _build_experiments_menu(self) -> None:
        """The Experiments menu: launch, watch, cancel and resume batch experiments."""
        self.experiments = ExperimentsMenu(self)

    # -- closing -----------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closing or self.controller.closed:
            event.accept()
            return
        # Stop cleanly first (the session is marked interrupted), then close for real.
        event.ignore()
        self._closing = True
        if self.leave_question is not None:  # nothing is opened: the window closes
            self.leave_question.reject()

        async def finish() -> None:
            try:
                self.replay.close()
                await self.controller.shutdown()
                self.close()
            except RuntimeError:  # the Qt objects are already gone (interpreter or test teardown)
                pass

        self.spawn(finish())
