"""A recording's timeline: the moments a replay steps to, and the marks worth finding on it.

A *moment* is a posted message or the end of a trigger's decisions; a *mark* labels something
worth finding (an interruption, a System-1 reply, a forced thought, a person's message, a private
note, an error, a silence, where a fork's own run begins). Both are read from what the recorder
wrote: the event index, a few columns of ``messages`` and a few fields of the events' JSON.
:class:`playground.history.recording.Recording` keeps them up to date.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Literal

import sqlite_utils

MarkKind = Literal["interruption", "system1", "forced", "human", "note", "error", "silence", "fork"]
MARK_LABELS: dict[str, str] = {
    "interruption": "interruption",
    "system1": "System-1 reply",
    "forced": "forced by the user",
    "human": "human message",
    "note": "private note",
    "error": "error",
    "silence": "everyone stayed silent",
    "fork": "a fork's own run begins",
}
#: What ``playground show`` prints between a fork's carried-over messages and its own.
FORK_BEGINS = "── the fork begins here: the messages above are carried over from the parent ──"


#: Events that belong to the message posted just before them: the thought it said, marked as
#: said, and a simulated user's hidden state behind it.
WITH_THE_MESSAGE = ("thought_expressed", "hidden_state_recorded")


@dataclass(frozen=True)
class Moment:
    """A place to step to: a posted message (with what belongs to it, see
    :data:`WITH_THE_MESSAGE`), or the end of a trigger's decisions."""

    seq: int
    kind: Literal["message", "decision"]
    step: int
    message_id: int | None = None


@dataclass(frozen=True)
class Mark:
    """Something worth finding on the timeline."""

    seq: int
    kind: MarkKind
    label: str


def find_moments(
    seqs: list[int], kinds: list[str], steps: list[int], message_seq: dict[int, int]
) -> list[Moment]:
    """The moments of an event index (``seqs``, ``kinds``, ``steps`` of each event, in order),
    given the seq of each message's ``message_posted`` event."""

    def step_of(seq: int) -> int:
        return steps[bisect.bisect_left(seqs, seq)]

    by_seq = {seq: mid for mid, seq in message_seq.items()}
    out: list[Moment] = []
    last_decision: int | None = None
    for i, (seq, kind, step) in enumerate(zip(seqs, kinds, steps, strict=True)):
        if kind == "decision_made":
            last_decision = seq
            continue
        if last_decision is not None and kind in ("trigger_fired", "message_posted"):
            out.append(Moment(last_decision, "decision", step_of(last_decision)))
            last_decision = None
        if kind == "message_posted" and seq in by_seq:
            # The message's moment shows the thought it said marked as said (or a simulated
            # user's hidden state behind it): the very next event, written with the message.
            shown = seq
            if i + 1 < len(seqs) and kinds[i + 1] in WITH_THE_MESSAGE:
                shown = seqs[i + 1]
            out.append(Moment(shown, "message", step, by_seq[seq]))
    if last_decision is not None:
        out.append(Moment(last_decision, "decision", step_of(last_decision)))
    return out


def find_marks(
    db: sqlite_utils.Database,
    session: dict[str, Any],
    messages: list[tuple[Any, ...]],
    message_seq: dict[int, int],
    moments: list[Moment],
) -> list[Mark]:
    """The marks of a session, in order: from its messages (rows of ``id, speaker_kind,
    interruption, system, text, step``), the events that mark something, its fork, and the
    ``moments`` (a trigger where everyone stayed silent)."""
    sid = session["id"]
    marks: list[Mark] = []
    for mid, speaker_kind, interruption, system, _text, _step in messages:
        seq = message_seq.get(mid)
        if seq is None:
            continue
        if interruption:
            marks.append(Mark(seq, "interruption", f"#{mid} interrupts"))
        if system == 1:
            marks.append(Mark(seq, "system1", f"#{mid} is a System-1 reply"))
        if speaker_kind == "human":
            marks.append(Mark(seq, "human", f"#{mid} by a person"))
    for seq, mid in db.execute(
        "SELECT seq, json_extract(data, '$.message_id') FROM events WHERE session_id = ?"
        " AND kind = 'thought_expressed' AND json_extract(data, '$.forced')",
        [sid],
    ).fetchall():
        marks.append(Mark(seq, "forced", f"#{mid} was forced by the user"))
    for seq, kind, text in db.execute(
        "SELECT seq, kind, CASE kind WHEN 'error_occurred' THEN json_extract(data, '$.message')"
        " ELSE json_extract(data, '$.note_kind') END FROM events WHERE session_id = ?"
        " AND kind IN ('annotation_added', 'error_occurred')",
        [sid],
    ).fetchall():
        if kind == "error_occurred":
            marks.append(Mark(seq, "error", f"error: {text}"))
        else:
            marks.append(Mark(seq, "note", f"private {text}"))
    # A fork: its messages 1..N are the parent's, carried over; its own run begins after #N.
    carried = session.get("fork_messages")
    if carried and carried in message_seq:
        marks.append(
            Mark(
                message_seq[carried],
                "fork",
                f"the fork from {session.get('parent_id') or 'a deleted session'} begins"
                f" after #{carried} (messages 1-{carried} carried over, with their times)",
            )
        )
    # A silence: a trigger whose decisions were all "silent" (no message before the next trigger).
    for i, m in enumerate(moments):
        nxt = moments[i + 1] if i + 1 < len(moments) else None
        if m.kind == "decision" and (nxt is None or nxt.kind == "decision"):
            if nxt is None and session.get("status") != "finished":
                continue  # the recording may have stopped mid-trigger
            marks.append(Mark(m.seq, "silence", f"step {m.step}: everyone stayed silent"))
    marks.sort(key=lambda k: k.seq)
    return marks
