"""ReplayController: drives the window's panes from a saved session's event log.

The panes are the live ones, fed through the same :class:`EngineBridge`, so a replayed moment
looks exactly like the live window did. Moving forward publishes the events in between; moving
back (or far) rebuilds the state from the recording's condensed events. While playing, each
message is typed out at human typing speed (characters per second × the replay speed).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import sqlite3
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from playground import domain, errors, events
from playground.history import snapshot as history
from playground.history.ledger import ThoughtLedger
from playground.history.recording import Recording
from ui.bridge import EngineBridge
from ui.selection import SelectedParticipant
from ui.widgets.typewriter import Typewriter

#: A jump forward over more events than this rebuilds the moment instead of publishing them all.
INCREMENTAL_LIMIT = 120
#: Pause after a trigger's decisions while playing, in seconds at 1× (lets the reader see them).
DECISION_BEAT = 0.8
#: Pause after a fully typed message while playing, in seconds at 1×.
MESSAGE_BEAT = 0.6


def attached_states(rec: Recording, seq: int) -> list[Any]:
    """The hidden states recorded right after the message at ``seq`` (a simulated user's): shown
    with their message, so that a replay at a message shows the states up to and including it.
    Publishing one again later is harmless: the hidden-state pane keeps one per message."""
    j = bisect.bisect_right(rec.seqs, seq)
    if not 0 < j < len(rec.seqs) or rec.kinds[j - 1] != "message_posted":
        return []
    end = j
    while end < len(rec.seqs) and rec.kinds[end] == "hidden_state_recorded":
        end += 1
    return rec.events_between(seq, rec.seqs[end - 1]) if end > j else []


class ReplayController(QObject):
    """Position, play/pause and seeking over one :class:`Recording`.

    Args:
        bridge: the window's bridge; replay attaches it to its own event bus.
        reset_views: ``reset_views(keep_messages=n, session=recording)`` puts the panes in
            rebuild mode; messages up to ``n`` that are on screen stay there if they are this
            recording's (the panes of any other session shown before are emptied first).
        rebuilt: called once a rebuild's events are in.
        load_thoughts: takes every participant's thoughts at the new moment in one call, as a
            :class:`ThoughtLedger` (the thoughts pane's bulk loader); the other events are
            published as usual.
        load_messages: takes the messages up to the new moment in one call (most of a long
            session's events) instead of a ``message_posted`` each; without it they are
            published.
        prepare: called in idle time after opening until it returns True: makes a few widgets
            ahead of need each time (the first jump would otherwise make them all).
        reveal: ``reveal(message_id, chars)`` shows the first ``chars`` characters of a message
            (``None`` shows all of it); used for the typing animation.
        selection: the window's selected participant, kept across rebuilds.
    """

    position_changed = Signal(int)  # seq
    playing_changed = Signal(bool)
    opened = Signal(object)  # Recording
    closed = Signal()
    error = Signal(str)

    def __init__(
        self,
        bridge: EngineBridge,
        *,
        reset_views: Callable[..., None],
        rebuilt: Callable[[], None],
        load_thoughts: Callable[[ThoughtLedger], None],
        reveal: Callable[[int, int | None], None],
        selection: SelectedParticipant,
        default_cps: float,
        load_messages: Callable[[list[domain.Message]], None] | None = None,
        prepare: Callable[[], bool] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self._reset_views = reset_views
        self._rebuilt = rebuilt
        self._load_thoughts = load_thoughts
        self._load_messages = load_messages
        self._prepare = prepare
        self._reveal = reveal
        self._selection = selection
        self.recording: Recording | None = None
        self.position = 0
        self.playing = False
        self.speed = 1.0
        self.cps = default_cps
        self.bus = events.EventBus()
        self._typing_message: int | None = None
        self.typewriter = Typewriter(self)
        self.typewriter.progressed.connect(self._typed)
        self.typewriter.finished.connect(self._typing_done)
        self._frozen = False
        self._parsed = False
        self._warm = QTimer(self)  # parses the event log ahead in idle time
        self._warm.setInterval(0)
        self._warm.timeout.connect(self._parse_ahead)
        self._beat = QTimer(self)
        self._beat.setSingleShot(True)
        self._beat.timeout.connect(self._advance)

    @property
    def active(self) -> bool:
        return self.recording is not None

    # -- opening and closing -------------------------------------------------------------------------

    def open(self, recording: Recording) -> None:
        """Show ``recording`` at its first message."""
        self.stop_playing()
        self._unfreeze()
        self.recording = recording
        self.bus = events.EventBus()
        self.bridge.attach(self.bus)
        self.position = -1
        self._reset_views()  # a new recording starts from empty views, even if its first jump fails
        self.opened.emit(recording)
        self.seek(recording.first)
        self._parsed = False
        self._warm.start()

    def _parse_ahead(self) -> None:
        """Idle work after opening, one small piece per call: parse the event log ahead, keep
        the thought ledgers jumps start from, then let the panes make their widgets ahead of
        need (``prepare``), so that no jump waits for any of it."""
        rec = self.recording
        if not self._parsed:
            try:
                done = rec is None or rec.parse_ahead(200)
            except (errors.PlaygroundError, sqlite3.Error):
                done = True  # a damaged event or a closed database: jumps will say when it matters
            if not done:
                return
            self._parsed = True
            if rec is not None:  # the thought ledgers a jump starts from, all kept now
                with contextlib.suppress(errors.PlaygroundError, sqlite3.Error):
                    rec.thought_ledger(rec.last)
            return
        if rec is not None and self._prepare is not None and not self._prepare():
            return
        self._warm.stop()
        # The parsed log lives as long as the replay. Frozen, the garbage collector stops
        # walking it again and again: a full collection over a long log takes tens of ms and
        # would land in the middle of a scrub. Unfrozen when the replay closes.
        gc.collect()
        gc.freeze()
        self._frozen = True

    def _unfreeze(self) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def close(self) -> None:
        self._warm.stop()
        self._unfreeze()
        self.stop_playing()
        if self.recording is not None:
            self.recording = None
            self.bridge.detach()
            self.closed.emit()

    # -- moving ------------------------------------------------------------------------------------

    def seek(self, seq: int) -> None:
        """Show the state at ``seq`` (no animation). A log that cannot be read stops the replay
        with a message (``error``), never an exception into Qt."""
        try:
            self._seek(seq)
        except (errors.PlaygroundError, sqlite3.Error) as exc:
            self.stop_playing()
            self.error.emit(f"Replay: {exc}")

    def _seek(self, seq: int) -> None:
        rec = self.recording
        if rec is None:
            return
        self._finish_typing()
        seq = rec.clamp(seq)
        if seq == self.position:
            return
        if seq > self.position >= 0 and rec.count_between(self.position, seq) <= INCREMENTAL_LIMIT:
            for e in rec.events_between(self.position, seq):
                self.bus.publish(e)
            for e in attached_states(rec, seq):
                self.bus.publish(e)
            self.position = seq
            self.position_changed.emit(seq)
        else:
            self._rebuild(seq)

    def _rebuild(self, seq: int) -> None:
        """Rebuild the panes at ``seq``. Messages already on screen are kept, and the selected
        participant's thoughts are laid out once at the end, not bubble by bubble."""
        rec = self.recording
        assert rec is not None
        sel = self._selection
        wanted = sel.name
        # The messages on screen that are still part of the new moment stay.
        keep = (
            min(rec.messages_shown(seq), rec.messages_shown(self.position))
            if self.position >= 0
            else 0
        )
        # Only this recording's widgets may be reused: another one (a session opened before,
        # whose ids and names overlap) is cleared first (see MainWindow.reset_views).
        self._reset_views(keep_messages=keep, session=rec)
        # A thought's own events only concern the thoughts pane: their fold is handed over in
        # one go, from the recording's nearest kept ledger. So are the messages (most of what
        # is left of a long session's log): published one by one, each would cost two signals.
        state = history.state_at(rec, seq)  # the engine's read side, as the history view's
        events_, ledger = list(state.events), state.thoughts
        messages: list[domain.Message] = []
        if self._load_messages is not None:
            messages = [e.message for e in events_ if e.kind == "message_posted"]
            events_ = [e for e in events_ if e.kind != "message_posted"]
        sel.blockSignals(True)
        try:
            self._load_thoughts(ledger)
            if self._load_messages is not None:
                self._load_messages(messages)
            for e in [*events_, *attached_states(rec, seq)]:
                self.bus.publish(e)
        finally:
            sel.blockSignals(False)
        self._rebuilt()
        names = {p["name"] for p in rec.participants}
        chosen = wanted if wanted in names else sel.name
        if chosen != wanted:  # the panes still follow ``wanted``: tell them
            sel.name = ""
            sel.select(chosen)
        self.position = seq
        self.position_changed.emit(seq)

    def step(self, direction: int, kind: str = "") -> None:
        """Go to the next (``+1``) or previous (``-1``) moment; ``kind`` "message" skips decisions."""
        rec = self.recording
        if rec is None:
            return
        self.stop_playing()
        k = kind or None
        m = (
            rec.next_moment(self.position, k)
            if direction > 0
            else rec.previous_moment(self.position, k)
        )
        if m is not None:
            self.seek(m.seq)

    # -- playing -----------------------------------------------------------------------------------

    def toggle(self) -> None:
        if self.playing:
            self.stop_playing()
        else:
            self.play()

    def play(self) -> None:
        rec = self.recording
        if rec is None or self.playing:
            return
        if self.position >= rec.last:
            self.seek(rec.first)
        self.playing = True
        self.playing_changed.emit(True)
        self._advance()

    def stop_playing(self) -> None:
        self._beat.stop()
        self._finish_typing()
        if self.playing:
            self.playing = False
            self.playing_changed.emit(False)

    def set_speed(self, speed: float) -> None:
        self.speed = max(0.1, speed)
        self.typewriter.set_cps(self.cps * self.speed)

    def set_cps(self, cps: float) -> None:
        self.cps = max(0.1, cps)
        self.typewriter.set_cps(self.cps * self.speed)

    def _advance(self) -> None:
        """Play on: publish up to the next moment; type messages out, pause briefly on decisions."""
        rec = self.recording
        if rec is None or not self.playing:
            return
        m = rec.next_moment(self.position)
        if m is None:
            self.seek(rec.last)  # anything after the last moment (the end of the session)
            self.stop_playing()
            return
        self.seek(m.seq)
        if not self.playing:  # the jump failed (and said why)
            return
        if m.kind == "message" and m.message_id is not None:
            self._typing_message = m.message_id
            self._reveal(m.message_id, 0)
            self.typewriter.start(
                len(rec.message_text.get(m.message_id, "")), self.cps * self.speed
            )
        else:
            self._beat.start(int(DECISION_BEAT * 1000 / self.speed))

    def _typed(self, chars: int) -> None:
        if self._typing_message is not None:
            self._reveal(self._typing_message, chars)

    def _typing_done(self) -> None:
        if self._typing_message is None:
            return
        self._reveal(self._typing_message, None)
        self._typing_message = None
        if self.playing:
            self._beat.start(int(MESSAGE_BEAT * 1000 / self.speed))

    def _finish_typing(self) -> None:
        if self._typing_message is not None:
            mid, self._typing_message = self._typing_message, None
            self.typewriter.stop()
            self._reveal(mid, None)
