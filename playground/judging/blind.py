"""The blind transcript: what a blind human rater sees of a session, and nothing else.

A blind rater (``ui/rating/blind_view.py``) is shown each message's speaker name and text, in the
order they were posted. The judge gets exactly that: no inner thoughts, scores, decisions,
personas, condition, engine, model, timestamps or session id. The message id is kept only to
order the messages; it is never shown to the judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from playground import errors
from playground.storage import SessionReader


@dataclass(frozen=True)
class BlindMessage:
    """What a blind rater may see of one message (``id`` orders the messages and is not shown)."""

    id: int
    speaker: str
    text: str


def blind_messages(db: Any, session_id: str) -> list[BlindMessage]:
    """A session's messages reduced to speaker and text, in order (the same rows a blind rater gets).

    Args:
        db: an open session database.
        session_id: a session id or a unique prefix of one.

    Raises:
        SessionNotFound: no such session, or an ambiguous prefix.
    """
    sid = SessionReader(db).resolve(session_id)
    rows = db.execute(
        "SELECT id, speaker, text FROM messages WHERE session_id = ? ORDER BY id", [sid]
    ).fetchall()
    return [BlindMessage(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def render_transcript(messages: Sequence[BlindMessage]) -> str:
    """The messages as the judge reads them: one ``Speaker: text`` line each.

    A text's own line breaks are kept, with the continuation lines indented so that every new
    message still starts at a speaker's name.

    Raises:
        PlaygroundError: there are no messages (an empty conversation cannot be judged).
    """
    if not messages:
        raise errors.PlaygroundError("the conversation has no messages: nothing to judge")
    lines = []
    for m in messages:
        text = "\n    ".join(m.text.strip().splitlines()) or "(empty message)"
        lines.append(f"{m.speaker}: {text}")
    return "\n".join(lines)
