"""Replay a saved session from its event log: moments to step through, timeline marks, and the
events that rebuild the state at any moment.

Replay reads only what the recorder wrote (the ``events`` table plus a few columns of
``messages``); nothing is re-computed. A *position* is an event ``seq``: the state at position
``p`` is what a live subscriber had seen after the event with sequence number ``p``.

Opening is cheap: only a compact index (seq, kind, step) is read; event bodies are parsed on
demand and cached, so the first frame of a long session does not wait for the whole log.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from playground import errors, events
from playground.history.ledger import THOUGHT_KINDS, ThoughtLedger
from playground.history.timeline import Mark, Moment, find_marks, find_moments
from playground.storage.database import snapshot
from playground.storage.reader import SessionReader

# Events that only describe the moment they happen: when the state is rebuilt at a position, only
# the latest of them (the current trigger's) still shows.
# Retrievals are kept per agent: the latest one of each agent still shows (an agent that did not
# think at the current trigger, such as the last speaker, shows what it retrieved before).
_TRANSIENT = {
    "trigger_fired",
    "next_speaker_predicted",
    "decision_made",
    "usage_recorded",
    "error_occurred",
    "thought_refused",
    "trigger_timed",
}
# Of these, the latest one before the position shows even from before the current trigger: the
# usage so far, and the latest trigger that ended (its time breakdown, in the decision strip).
_LATEST = ("usage_recorded", "trigger_timed")
#: Thought events between two kept thought ledgers: a jump folds at most this many.
LEDGER_EVERY = 1000


@dataclass
class Recording:
    """The replayable record of one session.

    Use :meth:`load`; then :meth:`events_between` for forward play and :meth:`rebuild` to jump.
    """

    db: sqlite_utils.Database
    session: dict[str, Any]
    participants: list[dict[str, Any]]
    seqs: list[int]
    kinds: list[str]
    steps: list[int]
    moments: list[Moment]
    marks: list[Mark]
    message_seq: dict[int, int]
    message_text: dict[int, str] = field(default_factory=dict)
    retrieval_agent: dict[int, str] = field(default_factory=dict)
    #: The ``trigger_timed`` event of each step (a trigger's time breakdown), by step.
    timed_seq: dict[int, int] = field(default_factory=dict)
    _cache: dict[int, events.Event] = field(default_factory=dict, repr=False)
    _moment_seqs: list[int] = field(default_factory=list, repr=False)
    _message_seqs: list[int] = field(default_factory=list, repr=False)
    _parsed_upto: int = field(default=0, repr=False)
    _thought_seqs: list[int] = field(default_factory=list, repr=False)
    #: ``_ledgers[k]``: the thoughts after the first ``k × LEDGER_EVERY`` thought events.
    _ledgers: list[ThoughtLedger] = field(default_factory=list, repr=False)

    # -- loading -----------------------------------------------------------------------------------

    @classmethod
    def load(cls, db: sqlite_utils.Database, session_id: str) -> Recording:
        """Read a session's index, in one snapshot: a session still being recorded is indexed as
        it stood at one moment (every message with its event).

        Raises:
            SessionNotFound: no such session (a unique id prefix is accepted).
            PlaygroundError: the session has no event log to replay.
        """
        reader = SessionReader(db)
        with snapshot(db):
            session = reader.session_row(session_id)
            try:
                return cls._load(db, reader, session)
            except sqlite3.DatabaseError as exc:
                raise errors.PlaygroundError(
                    f"the event log of session {session['id']} is damaged and cannot be replayed"
                    f" ({exc})"
                ) from exc

    @classmethod
    def _load(
        cls, db: sqlite_utils.Database, reader: SessionReader, session: dict[str, Any]
    ) -> Recording:
        sid = session["id"]
        participants = reader.participants(sid)
        rows = db.execute(
            "SELECT seq, kind, step FROM events WHERE session_id = ? ORDER BY seq", [sid]
        ).fetchall()
        if not rows:
            raise errors.PlaygroundError(
                f"session {sid} has no event log to replay (it was recorded without one)"
            )
        rec = cls(
            db=db,
            session=session,
            participants=participants,
            seqs=[],
            kinds=[],
            steps=[],
            moments=[],
            marks=[],
            message_seq={},
        )
        rec._ledgers = [ThoughtLedger()]
        rec._take_in(rows, after=None)
        return rec

    def refresh(self) -> int:
        """Take in the events written since the index was read (a session still being
        recorded: the database is in WAL mode, so reading never waits for the recorder).

        Returns:
            How many events were added.

        The new rows are read in one snapshot, as :meth:`load` reads them.

        Raises:
            PlaygroundError: a new ``message_posted`` event has no message.
            sqlite3.DatabaseError: the database cannot be read.
        """
        with snapshot(self.db):
            return self._refresh()

    def _refresh(self) -> int:
        sid = self.session["id"]
        after = self.seqs[-1]
        rows = self.db.execute(
            "SELECT seq, kind, step FROM events WHERE session_id = ? AND seq > ? ORDER BY seq",
            [sid, after],
        ).fetchall()
        if not rows:
            return 0
        self.session = SessionReader(self.db).session_row(sid)
        self._take_in(rows, after)
        return len(rows)

    def _take_in(self, rows: list[tuple[Any, ...]], after: int | None) -> None:
        """Add the index ``rows`` (seq, kind, step) of the events after ``after`` (None: from the
        first), with the messages they posted and whose retrievals they were; then find the
        timeline again."""
        sid = self.session["id"]
        since, params = ("", [sid]) if after is None else (" AND seq > ?", [sid, after])
        self.seqs.extend(r[0] for r in rows)
        self.kinds.extend(r[1] for r in rows)
        self.steps.extend(r[2] for r in rows)
        for seq, mid in self.db.execute(
            "SELECT seq, json_extract(data, '$.message.id') FROM events"
            " WHERE session_id = ? AND kind = 'message_posted'" + since,
            params,
        ).fetchall():
            if mid is None:
                raise errors.PlaygroundError(
                    f"event {seq} (message_posted) of session {sid} cannot be read: it has no message"
                )
            self.message_seq[int(mid)] = seq
        messages = self.db.execute(
            "SELECT id, speaker_kind, interruption, system, text, step FROM messages"
            " WHERE session_id = ? ORDER BY id",
            [sid],
        ).fetchall()
        self.message_text = {m[0]: m[4] for m in messages}
        self.retrieval_agent.update(
            self.db.execute(
                "SELECT seq, json_extract(data, '$.agent') FROM events"
                " WHERE session_id = ? AND kind = 'memories_retrieved'" + since,
                params,
            ).fetchall()
        )
        self._thought_seqs.extend(r[0] for r in rows if r[1] in THOUGHT_KINDS)
        self.timed_seq.update((r[2], r[0]) for r in rows if r[1] == "trigger_timed")
        self._index_timeline(messages)

    def _index_timeline(self, messages: list[tuple[Any, ...]]) -> None:
        """Find the moments and marks again (after the index grew)."""
        self.moments = find_moments(self.seqs, self.kinds, self.steps, self.message_seq)
        self._moment_seqs = [m.seq for m in self.moments]
        self._message_seqs = sorted(self.message_seq.values())
        self.marks = find_marks(self.db, self.session, messages, self.message_seq, self.moments)

    # -- positions ---------------------------------------------------------------------------------

    @property
    def first(self) -> int:
        """The opening position: the first message (the icebreaker), or the last event if none."""
        for m in self.moments:
            if m.kind == "message":
                return m.seq
        return self.seqs[-1]

    @property
    def last(self) -> int:
        return self.seqs[-1]

    def clamp(self, seq: int) -> int:
        return max(self.seqs[0], min(self.last, seq))

    def next_moment(self, seq: int, kind: str | None = None) -> Moment | None:
        i = bisect.bisect_right(self._moment_seqs, seq)
        for m in self.moments[i:]:
            if kind is None or m.kind == kind:
                return m
        return None

    def previous_moment(self, seq: int, kind: str | None = None) -> Moment | None:
        i = bisect.bisect_left(self._moment_seqs, seq)
        for m in reversed(self.moments[:i]):
            if kind is None or m.kind == kind:
                return m
        return None

    def moment_at(self, seq: int) -> Moment | None:
        """The latest moment at or before ``seq``."""
        i = bisect.bisect_right(self._moment_seqs, seq)
        return self.moments[i - 1] if i else None

    def messages_shown(self, seq: int) -> int:
        """How many messages have been posted at position ``seq``."""
        return bisect.bisect_right(self._message_seqs, seq)

    # -- events ------------------------------------------------------------------------------------

    def _parse(self, seqs: list[int]) -> list[events.Event]:
        missing = [s for s in seqs if s not in self._cache]
        if missing:
            sid = self.session["id"]
            for lo in range(0, len(missing), 500):
                chunk = missing[lo : lo + 500]
                marks = ",".join("?" * len(chunk))
                for seq, data in self.db.execute(
                    f"SELECT seq, data FROM events WHERE session_id = ? AND seq IN ({marks})",
                    [sid, *chunk],
                ).fetchall():
                    self._cache[seq] = _parse_event(seq, data)
        return [self._cache[s] for s in seqs]

    def count_between(self, lo: int, hi: int) -> int:
        """How many events have ``lo < seq <= hi``."""
        return bisect.bisect_right(self.seqs, hi) - bisect.bisect_right(self.seqs, lo)

    def parse_ahead(self, limit: int = 300) -> bool:
        """Parse up to ``limit`` not yet parsed events, oldest first (idle-time warm-up so that
        later jumps do not wait for parsing). Returns True when every event is parsed."""
        while self._parsed_upto < len(self.seqs) and self.seqs[self._parsed_upto] in self._cache:
            self._parsed_upto += 1
        chunk = self.seqs[self._parsed_upto : self._parsed_upto + limit]
        if chunk:
            self._parse(chunk)
        return self._parsed_upto + len(chunk) >= len(self.seqs)

    def events_between(self, lo: int, hi: int) -> list[events.Event]:
        """Parsed events with ``lo < seq <= hi``, in order (forward play)."""
        i = bisect.bisect_right(self.seqs, lo)
        j = bisect.bisect_right(self.seqs, hi)
        return self._parse(self.seqs[i:j])

    def timing(self, step: int) -> events.TriggerTimed | None:
        """Where the trigger of ``step`` spent its time, as recorded when it ended; None when it
        has not ended yet, was not timed (a newer trigger made it stale) or the session was
        recorded before triggers were timed."""
        seq = self.timed_seq.get(step)
        if seq is None:
            return None
        (e,) = self._parse([seq])
        return e if isinstance(e, events.TriggerTimed) else None

    def thought_ledger(self, seq: int) -> ThoughtLedger:
        """Every participant's thoughts at ``seq`` (a new copy, the caller's to change). Ledgers
        are kept every :data:`LEDGER_EVERY` thought events, so this folds at most that many."""
        n = bisect.bisect_right(self._thought_seqs, seq)  # thought events up to seq
        while len(self._ledgers) * LEDGER_EVERY <= n:  # keep the checkpoints on the way
            done = (len(self._ledgers) - 1) * LEDGER_EVERY
            ledger = self._ledgers[-1].copy()
            ledger.apply(self._parse(self._thought_seqs[done : done + LEDGER_EVERY]))
            self._ledgers.append(ledger)
        k = n // LEDGER_EVERY
        ledger = self._ledgers[k].copy()
        ledger.apply(self._parse(self._thought_seqs[k * LEDGER_EVERY : n]))
        return ledger

    def rebuild(self, seq: int, *, thoughts: bool = True) -> list[events.Event]:
        """The events that rebuild the state at ``seq`` from nothing.

        Everything up to ``seq`` except what only described an earlier moment: of the triggers,
        decisions, usage updates and errors only the current trigger's remain, and of the
        retrievals each agent's latest; the latest usage update and trigger timing stay too. With
        ``thoughts=False`` the thoughts' own events are left out (take :meth:`thought_ledger`
        instead).
        """
        j = bisect.bisect_right(self.seqs, seq)
        current_trigger = 0
        for i in range(j - 1, -1, -1):
            if self.kinds[i] == "trigger_fired":
                current_trigger = self.seqs[i]
                break
        latest: dict[str, int] = {}
        latest_retrieval: dict[str, int] = {}
        for seq_, k in zip(self.seqs[:j], self.kinds[:j], strict=True):
            if k == "memories_retrieved":
                latest_retrieval[self.retrieval_agent.get(seq_, "")] = seq_
            elif k in _LATEST:
                latest[k] = seq_
        retrievals = set(latest_retrieval.values())
        latest_kept = set(latest.values())
        skip = frozenset() if thoughts else THOUGHT_KINDS
        keep = [
            s
            for s, k in zip(self.seqs[:j], self.kinds[:j], strict=True)
            if k not in skip
            and (
                (k not in _TRANSIENT and k != "memories_retrieved")
                or s >= current_trigger
                or s in latest_kept
                or s in retrievals
            )
        ]
        return self._parse(keep)


def _parse_event(seq: int, data: str) -> events.Event:
    try:
        return events.EVENT_ADAPTER.validate_json(data)
    except ValueError as exc:
        kind = ""
        with contextlib.suppress(ValueError):
            kind = json.loads(data).get("kind", "")
        raise errors.PlaygroundError(
            f"event {seq} ({kind or 'unknown kind'}) of the saved session cannot be read: {exc}"
        ) from exc
