"""ReplayPanel: the replay's place in the main window: the transport bar, the replay controller
driving the window's panes, keyboard shortcuts, and the window's look while replaying."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QVBoxLayout

from playground.history.recording import Recording
from playground.settings import RoomSettings
from playground.storage import SessionReader, study_rows
from ui.panes.conversation.row_placement import RESERVED_ROWS
from ui.replay.controller import ReplayController
from ui.replay.fork_dialog import ForkDialog
from ui.replay.reviews import ReviewsWindow
from ui.replay.transport import TransportBar
from ui.widgets.tool_window import show_single


class ReplayPanel(QObject):
    """Wires a :class:`ReplayController` and a :class:`TransportBar` into ``window``.

    Args:
        window: the main window (its panes, selection, bridge, controller and status bar).
    """

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = w = window
        self.transport = TransportBar(RoomSettings().typing_cps)
        self.transport.hide()
        central = w.centralWidget()
        root_layout = central.layout() if central is not None else None
        assert isinstance(root_layout, QVBoxLayout)
        root_layout.insertWidget(1, self.transport)
        self.controller = ReplayController(
            w.bridge,
            reset_views=w.reset_views,
            rebuilt=self._rebuilt,
            load_thoughts=w.thoughts.load_thoughts,
            load_messages=self._load_messages,
            prepare=self._prepare,
            reveal=w.conversation.reveal,
            selection=w.selection,
            default_cps=RoomSettings().typing_cps,
            parent=self,
        )
        t, r = self.transport, self.controller
        t.play_toggled.connect(r.toggle)
        t.step_requested.connect(r.step)
        t.speed_changed.connect(r.set_speed)
        t.cps_changed.connect(r.set_cps)
        t.timeline.scrubbed.connect(r.seek)
        t.close_requested.connect(r.close)
        t.fork_requested.connect(self.open_fork)
        t.reviews_requested.connect(self.open_reviews)
        self.reviews: ReviewsWindow | None = None
        r.playing_changed.connect(t.set_playing)
        r.position_changed.connect(self._moved)
        r.opened.connect(self._opened)
        r.closed.connect(self._closed)
        r.error.connect(w.show_error)
        w.controller.about_to_start.connect(r.close)
        keys = [
            ("Space", r.toggle, "While replaying: play or pause"),
            ("Right", lambda: r.step(1), "While replaying: one step on"),
            ("Left", lambda: r.step(-1), "While replaying: one step back"),
            ("Shift+Right", lambda: r.step(1, "message"), "While replaying: the next message"),
            ("Shift+Left", lambda: r.step(-1, "message"), "While replaying: the message before"),
        ]
        self.shortcuts: list[QShortcut] = []
        for key, slot, does in keys:
            sc = QShortcut(QKeySequence(key), w)
            sc.setWhatsThis(does)  # Help ▸ Keyboard shortcuts says what it does
            sc.activated.connect(slot)
            sc.setEnabled(False)
            self.shortcuts.append(sc)

    def _load_messages(self, messages: list) -> None:
        w = self.window
        w.thoughts.load_messages(messages)
        w.conversation.load_messages(messages)

    def _prepare(self) -> bool:
        """One row and one bubble more, until a jump has all it needs (idle time)."""
        w = self.window
        rows = w.conversation.reserve(RESERVED_ROWS)
        return w.thoughts.reserve() and rows

    def _rebuilt(self) -> None:
        w = self.window
        for pane in (w.participants, w.memory, w.conversation, w.thoughts):
            pane.end_rebuild()

    def _opened(self, rec: Recording) -> None:
        w, s = self.window, rec.session
        w.conversation.all_notes = True
        w.conversation.set_composer_visible(False)
        self.transport.timeline.set_recording(rec)
        self.transport.title.setText(f"<b>Replay</b> · {s['status']}")
        changes = SessionReader(rec.db).condition_changes(s["id"])
        self.transport.title.setToolTip(
            f"Session {s['id']} · {s['status']} ({s.get('end_reason') or ''})"
            f" · condition {s.get('condition') or '–'} · seed {s.get('seed')}"
            + "".join(
                f"\nCondition: {c['old']} → {c['new']} at step {c['step']} ({c['why']})"
                for c in changes
            )
        )
        w.setWindowTitle(f"Thought Playground — replay of {s['id']}")
        reviews = study_rows.review_count(rec.db, s["id"])
        self.transport.reviews_button.setText(f"Reviews ({reviews})…")
        self.transport.reviews_button.setVisible(reviews > 0)
        self.transport.show()
        for sc in self.shortcuts:
            sc.setEnabled(True)
        w.messages.engine_label.setText(f"replay · {engine_text(s)}")
        w._set_running(False)
        w.hint(
            f"Replaying session {s['id']} ({s['status']}): read-only. Space plays, ←/→ step, "
            "Shift+←/→ jump by message; “Fork from here…” continues it live."
        )

    def _closed(self) -> None:
        w = self.window
        w.conversation.all_notes = False
        w.conversation.set_composer_visible(True)
        w.setWindowTitle("Thought Playground")
        self.transport.hide()
        for sc in self.shortcuts:
            sc.setEnabled(False)
        w.reset_views()
        w.messages.engine_label.setText(w.controller.engine_label())
        w.hint("Replay closed.")

    def _moved(self, seq: int) -> None:
        rec = self.controller.recording
        if rec is None:
            return
        self.transport.timeline.set_position(seq)
        m = rec.moment_at(seq)
        where = (
            "start"
            if m is None
            else f"message #{m.message_id}"
            if m.kind == "message"
            else f"decisions of step {m.step}"
        )
        self.transport.where.setText(
            f"{where} · {rec.messages_shown(seq)} of {len(rec.message_seq)} messages"
        )

    def open_reviews(self) -> ReviewsWindow | None:
        """The reviews of the session being replayed, in a window of their own."""
        rec = self.controller.recording
        if rec is None:
            return None
        if self.reviews is not None and self.reviews.session_id != rec.session["id"]:
            self.reviews.close()
            self.reviews.deleteLater()
            self.reviews = None
        self.reviews = show_single(
            self.reviews, lambda: ReviewsWindow(rec.db, rec.session["id"], self.window)
        )
        return self.reviews

    def open_fork(self) -> ForkDialog | None:
        """The Fork dialog for the current moment; accepting it starts the fork."""
        rec = self.controller.recording
        if rec is None:
            return None
        w = self.window
        seq = self.controller.position
        m = rec.moment_at(seq)
        where = f"message #{rec.messages_shown(seq)}" + (
            f" (decisions of step {m.step})" if m is not None and m.kind == "decision" else ""
        )
        dlg = ForkDialog(where, w.controller.engine_label(), w)
        dlg.accepted.connect(lambda: w.spawn(w.controller.fork(rec, seq, **dlg.options())))
        dlg.open()
        return dlg


def engine_text(session: dict) -> str:
    """The engine and model a saved session ran on, as the status bar shows it."""
    if session.get("engine") == "offline engine":
        return "offline engine (no language model)"
    config = session.get("config")
    with contextlib.suppress(TypeError, ValueError, AttributeError):
        config = json.loads(config) if isinstance(config, str) else config
    mode = config.get("engine", {}).get("evaluation_mode") if isinstance(config, dict) else None
    return f"{session.get('model')} · {session.get('engine')}" + (
        f" · {mode} ratings" if mode else ""
    )
