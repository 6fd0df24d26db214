"""The read side: what a session's state was at any trigger, live or after the run.

One question runs through replay, the window's decision history and forks: *what did the room
look like at this moment?* :func:`state_at` answers it for any event position of a
:class:`~playground.history.recording.Recording` (the events that rebuild the state, the messages so far
and every participant's thoughts). :class:`SessionHistory` adds the triggers: which trigger
produced a message, and a :class:`Snapshot` of that trigger: its decisions, the next-speaker
prediction, the memories each agent retrieved and the thoughts as they stood.

Everything is read from what the recorder wrote; nothing is re-computed. The database may be
written while it is read (a live session, WAL): :meth:`SessionHistory.refresh` takes in the
events written since, and every answer describes the events read so far.
"""

from __future__ import annotations

import bisect
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Literal

import sqlite_utils

from playground import domain, errors, events
from playground.history.ledger import ThoughtLedger
from playground.history.recording import Recording
from playground.history.timeline import WITH_THE_MESSAGE

#: How a message came to be posted.
Origin = Literal["trigger", "icebreaker", "human", "forced", "opening", "unknown"]


@dataclass(frozen=True)
class State:
    """The state at event position ``seq``.

    Attributes:
        seq: the position (an event ``seq``).
        events: the events that rebuild the state from nothing, in order, without the thoughts'
            own events (see :meth:`Recording.rebuild`).
        thoughts: every participant's thoughts at ``seq``: a new ledger, the caller's to keep.
    """

    seq: int
    events: tuple[Any, ...]
    thoughts: ThoughtLedger

    @property
    def messages(self) -> list[domain.Message]:
        """The messages posted up to ``seq``, in order."""
        return [e.message for e in self.events if e.kind == "message_posted"]


def state_at(recording: Recording, seq: int) -> State:
    """The state at position ``seq`` of ``recording`` (replay's jumps and the history view).

    Raises:
        PlaygroundError: an event on the way cannot be read.
        sqlite3.Error: the database cannot be read.
    """
    seq = recording.clamp(seq)
    return State(seq, tuple(recording.rebuild(seq, thoughts=False)), recording.thought_ledger(seq))


@dataclass(frozen=True)
class TriggerRef:
    """One trigger of the session, as far as it has been recorded.

    Attributes:
        index: its place among the session's triggers, from 0.
        seq: the ``trigger_fired`` event.
        step: the timestep.
        trigger: ``new_message`` or ``pause``.
        after: the message that fired it (the latest message, for a pause).
        seq_shown: the position its snapshot shows: right after the message it produced (and
            the thought marked as said), else after its last decision.
        produced: the message it produced (its floor winner's), or None.
        speakers: the agents that decided to speak.
    """

    index: int
    seq: int
    step: int
    trigger: str
    after: int | None
    seq_shown: int
    produced: int | None
    speakers: tuple[str, ...]

    def what(self) -> str:
        """What fired it, in words: "new message #5" or "a pause after #5"."""
        if self.trigger == "new_message":
            return f"new message #{self.after}"
        return f"a pause after #{self.after}" if self.after else "a pause"


@dataclass(frozen=True)
class Snapshot:
    """A trigger (or a message no trigger produced) and the state it left.

    Attributes:
        state: the state shown (at ``state.seq``).
        step: the timestep.
        message_id: the message asked about, or None (a trigger was asked for).
        origin: how that message came about (``trigger`` when a trigger was asked for).
        trigger: the trigger shown, or None (the message was not produced by one).
        decisions: the trigger's decisions, in order.
        prediction: the next-speaker prediction at the trigger, if any.
        retrieved: per agent, the stimuli it retrieved at this trigger (agents that did not
            think at it are absent).
        speaker: who wrote the message asked about ("" when none).
        timing: where the trigger's time went, as recorded when it ended (None: not timed).
    """

    state: State
    step: int
    message_id: int | None
    origin: Origin
    trigger: TriggerRef | None
    decisions: tuple[domain.Decision, ...] = ()
    prediction: events.NextSpeakerPredicted | None = None
    retrieved: dict[str, tuple[domain.Stimulus, ...]] = field(default_factory=dict)
    speaker: str = ""
    timing: events.TriggerTimed | None = None

    @property
    def seq(self) -> int:
        return self.state.seq

    def describe(self) -> str:
        """One line of plain text saying what is shown (the window shows it while looking back)."""
        t, mid = self.trigger, self.message_id
        if self.origin == "icebreaker":
            return f"Message #{mid} is the icebreaker: no trigger produced it"
        if self.origin == "human":
            return (
                f"Message #{mid} was written by {self.speaker} (a person): no trigger produced it"
            )
        if self.origin == "forced":
            return f"Message #{mid} was forced by you: no decision of the engine produced it"
        if self.origin == "opening":
            return (
                f"Message #{mid} is {self.speaker}'s opening turn (a simulated user asked to"
                " speak first, as a STORM dialogue starts): no trigger produced it"
            )
        if t is None:
            return f"No recorded trigger of this session produced message #{mid}"
        if t.produced is not None:
            return f"Showing the trigger of message #{t.produced} (step {t.step}, {t.what()})"
        if t.speakers:
            who = ", ".join(t.speakers)
            return f"Showing step {t.step} ({t.what()}): {who} was to speak, no message followed"
        if not self.decisions:
            return f"Showing step {t.step} ({t.what()}): no decision recorded yet"
        return f"Showing step {t.step} ({t.what()}): everyone stayed silent"


class SessionHistory:
    """Every trigger of one session and the snapshot of each (see the module docstring).

    Use :meth:`load` (or :meth:`over` for a recording already open); call :meth:`refresh`
    before asking about a session that is still being written.
    """

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.triggers: list[TriggerRef] = []
        self._trigger_seqs: list[int] = []
        self._decisions: dict[int, tuple[str, str]] = {}  # seq -> (agent, action)
        self._fired: dict[int, tuple[str, int | None]] = {}  # seq -> (trigger, message id)
        self._forced: set[int] = set()  # message ids forced by the user
        self._messages: dict[int, tuple[str, str, str]] = {}  # id -> (speaker, kind, origin)
        self._read_upto = 0  # events up to this seq are in the maps above
        self._read(0)
        self._scan(0)

    @classmethod
    def load(cls, db: sqlite_utils.Database, session_id: str) -> SessionHistory:
        """Open a session's history (a unique prefix of the id is accepted).

        Raises:
            SessionNotFound: no such session.
            PlaygroundError: the session has no event log, or it cannot be read.
        """
        return cls(Recording.load(db, session_id))

    @classmethod
    def over(cls, recording: Recording) -> SessionHistory:
        """The history of a recording already open (a replay's)."""
        return cls(recording)

    @property
    def session_id(self) -> str:
        return str(self.recording.session["id"])

    # -- reading ---------------------------------------------------------------------------------

    def refresh(self) -> int:
        """Take in the events written since the last read (a live session).

        Returns:
            How many new events there were.

        Raises:
            PlaygroundError: the event log cannot be read.
        """
        rec = self.recording
        before = len(rec.seqs)
        try:
            rec.refresh()
        except sqlite3.DatabaseError as exc:
            raise errors.PlaygroundError(
                f"the event log of session {self.session_id} cannot be read ({exc})"
            ) from exc
        added = len(rec.seqs) - before
        if added:
            self._read(self._read_upto)
            # The latest trigger may have been in progress: read it again with what followed.
            start = self.triggers.pop().seq if self.triggers else 0
            del self._trigger_seqs[len(self.triggers) :]
            self._scan(start)
        return added

    def _read(self, after: int) -> None:
        """The few fields of triggers, decisions, messages and forced expressions after ``after``."""
        db, sid = self.recording.db, self.session_id
        rows = db.execute(
            "SELECT seq, kind, json_extract(data, '$.decision.agent'),"
            " json_extract(data, '$.decision.action'), json_extract(data, '$.trigger'),"
            " json_extract(data, '$.message_id'), json_extract(data, '$.forced') FROM events"
            " WHERE session_id = ? AND seq > ?"
            " AND kind IN ('decision_made', 'trigger_fired', 'thought_expressed')",
            [sid, after],
        ).fetchall()
        for seq, kind, agent, action, trigger, mid, forced in rows:
            if kind == "decision_made":
                self._decisions[seq] = (agent or "", action or "")
            elif kind == "trigger_fired":
                self._fired[seq] = (trigger or "", None if mid is None else int(mid))
            elif forced and mid is not None:
                self._forced.add(int(mid))
        for mid, speaker, kind, origin in db.execute(
            "SELECT id, speaker, speaker_kind, origin FROM messages WHERE session_id = ?"
            " AND id > ?",
            [sid, max(self._messages, default=0)],
        ).fetchall():
            self._messages[int(mid)] = (speaker, kind or "", origin or "")
        self._read_upto = self.recording.last

    def _scan(self, start: int) -> None:
        """Find the triggers from position ``start`` on (from the recording's index)."""
        rec = self.recording
        by_seq = {seq: mid for mid, seq in rec.message_seq.items()}
        i = bisect.bisect_left(rec.seqs, start)
        current: dict[str, Any] | None = None
        previous = 0
        for seq, kind, step in zip(rec.seqs[i:], rec.kinds[i:], rec.steps[i:], strict=True):
            if kind == "trigger_fired":
                self._close(current)
                trigger, after = self._fired.get(seq, ("", None))
                current = {
                    "seq": seq,
                    "step": step,
                    "trigger": trigger,
                    "after": after,
                    "shown": seq,
                    "produced": None,
                    "speakers": [],
                    "decided": False,
                }
            elif current is None or current["produced"] is not None:
                # After the message it produced, only the thought marked as said in it, or a
                # simulated user's hidden state behind it (the very next event), still belongs to
                # the trigger's picture.
                if (
                    current is not None
                    and kind in WITH_THE_MESSAGE
                    and previous == current["shown"] == rec.message_seq.get(current["produced"])
                ):
                    current["shown"] = seq
            elif kind == "decision_made":
                agent, action = self._decisions.get(seq, ("", ""))
                if action == "speak":
                    current["speakers"].append(agent)
                current["shown"] = seq
                current["decided"] = True
            elif kind == "message_posted":
                mid = by_seq.get(seq)
                info = self._messages.get(mid) if mid is not None else None
                if (
                    mid is not None
                    and info is not None
                    and info[0] in current["speakers"]
                    and mid not in self._forced
                ):
                    current["produced"] = mid
                    current["shown"] = seq
            elif not current["decided"]:
                current["shown"] = seq  # still thinking: what has been recorded of it so far
            previous = seq
        self._close(current)

    # -- questions -------------------------------------------------------------------------------

    def trigger_of(self, message_id: int) -> TriggerRef | None:
        """The trigger that produced ``message_id``, or None (icebreaker, a person's message, a
        forced one, or one carried over into a fork)."""
        seq = self.recording.message_seq.get(message_id)
        if seq is None:
            return None
        i = bisect.bisect_right(self._trigger_seqs, seq)
        for t in reversed(self.triggers[:i]):
            if t.produced == message_id:
                return t
            if t.produced is not None and t.produced < message_id:
                break
        return None

    def origin(self, message_id: int) -> Origin:
        """How ``message_id`` came about."""
        _speaker, kind, origin = self._messages.get(message_id, ("", "", ""))
        if origin == "icebreaker":
            return "icebreaker"
        if kind == "human":
            return "human"
        if message_id in self._forced:
            return "forced"
        if self.trigger_of(message_id) is not None:
            return "trigger"
        return "opening" if kind == "simulated" else "unknown"

    def at_message(self, message_id: int) -> Snapshot:
        """The trigger that produced ``message_id``; for a message no trigger produced, the
        state right after it was posted.

        Raises:
            PlaygroundError: no such message in what has been read, or an event cannot be read.
        """
        seq = self.recording.message_seq.get(message_id)
        if seq is None:
            raise errors.PlaygroundError(
                f"session {self.session_id} has no message #{message_id} (yet)"
            )
        origin = self.origin(message_id)
        speaker = self._messages.get(message_id, ("", "", ""))[0]
        t = self.trigger_of(message_id)
        if t is not None:
            return self._snapshot(t, message_id=message_id, origin=origin, speaker=speaker)
        rec = self.recording
        j = bisect.bisect_right(rec.seqs, seq)
        if j < len(rec.seqs) and rec.kinds[j] == "thought_expressed":
            seq = rec.seqs[j]  # the forced thought, marked as said in it
        step = rec.steps[j - 1]
        return Snapshot(
            state=state_at(rec, seq),
            step=step,
            message_id=message_id,
            origin=origin,
            trigger=None,
            speaker=speaker,
        )

    def at_trigger(self, index: int) -> Snapshot:
        """The snapshot of the trigger at ``index`` (clamped to the triggers there are).

        Raises:
            PlaygroundError: the session has had no trigger yet, or an event cannot be read.
        """
        if not self.triggers:
            raise errors.PlaygroundError(f"session {self.session_id} has had no trigger yet")
        t = self.triggers[max(0, min(index, len(self.triggers) - 1))]
        return self._snapshot(t, message_id=None, origin="trigger", speaker="")

    def latest_trigger_at(self, seq: int) -> TriggerRef | None:
        """The latest trigger fired at or before position ``seq``."""
        i = bisect.bisect_right(self._trigger_seqs, seq)
        return self.triggers[i - 1] if i else None

    def _snapshot(
        self, t: TriggerRef, *, message_id: int | None, origin: Origin, speaker: str
    ) -> Snapshot:
        rec = self.recording
        state = state_at(rec, t.seq_shown)
        decisions: list[domain.Decision] = []
        prediction: events.NextSpeakerPredicted | None = None
        retrieved: dict[str, tuple[domain.Stimulus, ...]] = {}
        for e in rec.events_between(t.seq - 1, t.seq_shown):
            if e.kind == "decision_made":
                decisions.append(e.decision)
            elif e.kind == "next_speaker_predicted":
                prediction = e
            elif e.kind == "memories_retrieved":
                retrieved[e.agent] = tuple(e.stimuli)
        return Snapshot(
            state=state,
            step=t.step,
            message_id=message_id,
            origin=origin,
            trigger=t,
            decisions=tuple(decisions),
            prediction=prediction,
            retrieved=retrieved,
            speaker=speaker,
            timing=rec.timing(t.step),
        )

    def _close(self, current: dict[str, Any] | None) -> None:
        if current is None:
            return
        self.triggers.append(
            TriggerRef(
                index=len(self.triggers),
                seq=current["seq"],
                step=current["step"],
                trigger=current["trigger"],
                after=current["after"],
                seq_shown=current["shown"],
                produced=current["produced"],
                speakers=tuple(current["speakers"]),
            )
        )
        self._trigger_seqs.append(current["seq"])
