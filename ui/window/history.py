"""The window's history view: why an agent spoke (or not) at any earlier message.

Clicking a message in the conversation, or ◀ / ▶ (← / →) in the decision strip, shows the
trigger that produced it: its decisions in the strip, and in the side panes the memories each
agent retrieved and the thought bubbles as they stood. The snapshot comes from the engine's read
side (:class:`playground.history.snapshot.SessionHistory`, the same one replay uses); this module only
renders it.

While looking back the live panes are set aside, not changed: they keep following the run, and
the history panes (a memory pane and a thoughts pane of their own, fed by a private bridge)
take their place. New messages still appear in the conversation, which no longer scrolls to
them, and the strip counts them; "Back to live" puts the live panes back as they are by then.
During a replay, a click moves the replay to the trigger instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from playground import errors, events
from playground.history import snapshot as history
from playground.history.recording import Recording
from playground.history.snapshot import SessionHistory, Snapshot
from ui.bridge import EngineBridge
from ui.panes.decisions.decision_strip import PAST_STYLE
from ui.panes.memory.memory_pane import MemoryPane
from ui.panes.thoughts.thoughts_pane import ThoughtsPane
from ui.replay.controller import attached_states
from ui.session.run_state import state_of
from ui.window.host import WindowHost

#: Bubbles the history's thoughts pane makes ahead of need, per participant looked at (in idle
#: time during a run: a click that had to make them would stall the window).
WARM_BUBBLES = 24

#: The banner over the history panes, after the moment shown: while the session runs, or once
#: it has ended (finished, stopped or failed: nothing goes on, and nothing can be changed).
GOES_ON = "The live run goes on."
ENDED = "The session has ended; this is how it stood then."
#: The status line's hint, likewise.
BACK_TO_LIVE = "“Back to live” (in the decision strip) follows the run again."
BACK_TO_END = "“Back to live” (in the decision strip) shows the session as it ended."

READ_ONLY = (
    "You are looking at step {step}, as it was then: go Back to live (in the decision strip)"
    " to change the session."
)
READ_ONLY_ENDED = "You are looking at step {step}, as it was then; the session has ended."


class _PastPane(QWidget):
    """A history pane under a banner that says which moment it shows."""

    def __init__(self, pane: QWidget) -> None:
        super().__init__()
        self.pane = pane
        self.banner = QLabel("")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(PAST_STYLE)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.banner)
        lay.addWidget(pane, 1)


class HistoryView(QObject):
    """Looking back at earlier triggers in ``window`` (see the module docstring).

    Attributes:
        snapshot: what is shown, or None while live.
        new_messages: messages posted live since the user started looking back.
    """

    changed = Signal(object)  # the Snapshot shown, or None (back to live)

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = w = window
        self.snapshot: Snapshot | None = None
        self.new_messages = 0
        self._history: SessionHistory | None = None
        self._bus = events.EventBus()
        self.bridge = EngineBridge(self)
        self.bridge.attach(self._bus)
        self.memory: MemoryPane | None = None
        self.thoughts: ThoughtsPane | None = None
        self._past: list[tuple[QWidget, _PastPane]] = []  # (live pane, its stand-in)
        w.conversation.message_clicked.connect(self.show_message)
        w.decisions.step_requested.connect(self.step)
        w.decisions.live_requested.connect(self.back_to_live)
        w.controller.about_to_start.connect(self._forget)
        w.bridge.message_posted.connect(self._posted)
        w.replay.opened.connect(self._replay_opened)
        w.replay.closed.connect(self._replay_closed)
        # Idle-time preparation, so that the first look back does not stall a run.
        self._warm = QTimer(self)
        self._warm.setInterval(0)
        self._warm.timeout.connect(self._warm_up)
        self._warm_left = 0
        w.controller.session_changed.connect(self._prepare)
        w.selection.changed.connect(lambda _name: self._prepare() if self.memory else None)

    @property
    def looking_back(self) -> bool:
        return self.snapshot is not None

    # -- the read side ---------------------------------------------------------------------------

    def _source(self) -> SessionHistory | None:
        """The history of the session on screen (the replayed one, or the live one), read up to
        what has been written."""
        w = self.window
        rec: Recording | None = w.replay.recording
        if rec is not None:
            if self._history is None or self._history.recording is not rec:
                self._history = SessionHistory.over(rec)
            return self._history
        c = w.controller
        room, recorder = c.room, c.recorder
        if room is None or recorder is None:
            return None
        h = self._history
        if h is None or h.session_id != room.session_id or h.recording.db is not recorder.db:
            self._history = h = SessionHistory.load(recorder.db, room.session_id)
        else:
            h.refresh()
        return h

    def _session(self) -> SessionHistory | None:
        """:meth:`_source`, with what goes wrong said in the window."""
        try:
            h = self._source()
        except (errors.PlaygroundError, sqlite3.Error) as exc:
            self.window.show_error(f"History: {exc}")
            return None
        if h is None:
            self.window.hint("There is no session to look back on yet.")
        return h

    def _read(self, what: str, ask: Callable[[SessionHistory], Snapshot]) -> Snapshot | None:
        h = self._session()
        if h is None:
            return None
        try:
            return ask(h)
        except (errors.PlaygroundError, sqlite3.Error) as exc:
            self.window.show_error(f"History ({what}): {exc}")
            return None

    # -- commands --------------------------------------------------------------------------------

    def show_message(self, message_id: int) -> None:
        """Show the trigger that produced ``message_id`` (or, for a message no trigger
        produced, the state right after it)."""
        snap = self._read(f"message #{message_id}", lambda h: h.at_message(message_id))
        if snap is not None:
            self._show(snap)

    def show_trigger(self, index: int) -> None:
        """Show the trigger at ``index`` (from 0) of the session."""
        snap = self._read(f"trigger {index + 1}", lambda h: h.at_trigger(index))
        if snap is not None:
            self._show(snap)

    def step(self, direction: int) -> None:
        """The previous (``-1``) or next (``+1``) trigger; past the latest one, live again."""
        h = self._session()
        if h is None or not h.triggers:
            return
        snap = self.snapshot
        if snap is None:  # live: the strip shows the latest trigger
            target = len(h.triggers) - 1 + direction
        elif snap.trigger is not None:
            target = snap.trigger.index + direction
        else:  # a message no trigger produced: between the trigger before it and the next one
            before = h.latest_trigger_at(snap.seq)
            index = before.index if before is not None else -1
            target = index + 1 if direction > 0 else index
        if target >= len(h.triggers) and self.window.replay.recording is None:
            self.back_to_live()
        elif 0 <= target < len(h.triggers):
            self.show_trigger(target)
        else:
            self.window.hint(
                "That was the first trigger." if direction < 0 else "That was the latest trigger."
            )

    def back_to_live(self) -> None:
        """Put the live panes back and follow the run again."""
        w = self.window
        if self.snapshot is None:
            return
        self.snapshot = None
        self.new_messages = 0
        for live, past in self._past:
            splitter = past.parentWidget()
            if isinstance(splitter, QSplitter):
                splitter.replaceWidget(splitter.indexOf(past), live)
            live.show()
        self._past = []
        w.decisions.show_live()
        w.conversation.follow_latest = True
        w.conversation.focus_message(-1)
        w.conversation.list.scrollToBottom()
        w.hint("Back to live.")
        self.changed.emit(None)

    # -- showing ---------------------------------------------------------------------------------

    def _show(self, snap: Snapshot) -> None:
        w = self.window
        text = snap.describe()
        focus = snap.message_id or (snap.trigger.produced if snap.trigger else None)
        if w.replay.recording is not None:  # a replay shows any moment itself
            w.replay.stop_playing()
            w.replay.seek(snap.seq)
            if focus:
                w.conversation.focus_message(focus)
            w.hint(text)
            return
        first = self.snapshot is None
        self.snapshot = snap
        if first:
            self.new_messages = 0
        self._rebuild(snap)
        ended = state_of(w.controller) == "ended"
        self._swap_in(f"As at step {snap.step} — {text}. " + (ENDED if ended else GOES_ON))
        w.decisions.show_past(text, snap.prediction, snap.decisions, snap.timing)
        w.decisions.set_past_note(self._note())
        w.conversation.follow_latest = False
        if focus:
            w.conversation.focus_message(focus)
        w.hint(f"{text}. " + (BACK_TO_END if ended else BACK_TO_LIVE))
        self.changed.emit(snap)

    def _panes(self) -> tuple[MemoryPane, ThoughtsPane]:
        """The history panes, made on first use (most sessions never look back)."""
        if self.memory is None or self.thoughts is None:
            w = self.window
            self.memory = MemoryPane(self.bridge, w.selection)
            for b in (self.memory.add_button, self.memory.edit_button, self.memory.delete_button):
                b.hide()  # the past cannot be edited
            self.thoughts = ThoughtsPane(self.bridge, w.selection)
            self.thoughts.set_live(False)  # no ✕: the past cannot be edited either
            self.thoughts.force_express_requested.connect(self._read_only)
            self.thoughts.delete_requested.connect(self._read_only)
            self.thoughts.message_focus_requested.connect(w.conversation.focus_message)
        return self.memory, self.thoughts

    def _read_only(self, *_: object) -> None:
        step = self.snapshot.step if self.snapshot is not None else 0
        ended = state_of(self.window.controller) == "ended"
        self.window.hint((READ_ONLY_ENDED if ended else READ_ONLY).format(step=step))

    def _rebuild(self, snap: Snapshot) -> None:
        self._warm.stop()
        self._rebuild_state(snap.state)

    def _rebuild_state(self, state: history.State) -> None:
        memory, thoughts = self._panes()
        sel = self.window.selection
        memory.begin_rebuild()
        thoughts.begin_rebuild()
        sel.blockSignals(True)  # the live panes follow the same selection: leave them be
        try:
            thoughts.load_thoughts(state.thoughts)
            thoughts.load_messages(state.messages)
            attached = attached_states(self._history.recording, state.seq) if self._history else []
            for e in [*state.events, *attached]:  # a simulated user's message with its state
                if e.kind != "message_posted":
                    self._bus.publish(e)
        finally:
            sel.blockSignals(False)
        memory.end_rebuild()
        thoughts.end_rebuild()

    def _swap_in(self, banner: str) -> None:
        w = self.window
        memory, thoughts = self._panes()
        if not self._past:
            for live, pane in ((w.memory, memory), (w.thoughts, thoughts)):
                splitter = live.parentWidget()
                if not isinstance(splitter, QSplitter):
                    continue
                past = pane.parentWidget()
                if not isinstance(past, _PastPane):
                    past = _PastPane(pane)
                past.setMinimumWidth(live.minimumWidth())
                past.setSizePolicy(live.sizePolicy())
                splitter.replaceWidget(splitter.indexOf(live), past)
                past.show()
                self._past.append((live, past))
        for _live, past in self._past:
            past.banner.setText(banner)

    def _note(self) -> str:
        n = self.new_messages
        return f"{n} new message{'s' if n != 1 else ''} since" if n else ""

    # -- ahead of need ----------------------------------------------------------------------------

    def _prepare(self, *_: object) -> None:
        self._warm_left = WARM_BUBBLES
        self._warm.start()

    def _warm_up(self) -> None:
        """One small piece of idle work: make the history panes, give them the participants
        (a rebuild at the latest position), then make bubbles ahead of need, one per call."""
        if self.snapshot is not None or self.window.replay.recording is not None:
            self._warm.stop()
            return
        if self.memory is None or self.thoughts is None:
            self._panes()
            return
        if self._warm_left == WARM_BUBBLES:
            h = None
            try:
                h = self._source()
                if h is not None:
                    self._rebuild_state(history.state_at(h.recording, h.recording.last))
            except (errors.PlaygroundError, sqlite3.Error):
                h = None  # said when the user looks back
            if h is None:
                self._warm.stop()
                return
        self._warm_left -= 1
        if self.thoughts.reserve() or self._warm_left <= 0:
            self._warm.stop()

    # -- live events -------------------------------------------------------------------------------

    def _posted(self, _message: object) -> None:
        if self.snapshot is not None and self.window.replay.recording is None:
            self.new_messages += 1
            self.window.decisions.set_past_note(self._note())

    def _forget(self) -> None:
        """A new session replaces the one on screen."""
        self.back_to_live()
        self._history = None

    def _replay_opened(self, _recording: object) -> None:
        self.back_to_live()
        self._history = None
        # A replay steps with ← / → itself (the transport); a click on a message still works.
        self.window.decisions.set_navigation(False)

    def _replay_closed(self) -> None:
        self._history = None
        self.window.decisions.set_navigation(True)
