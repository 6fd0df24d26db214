"""The corpus of ``playground eval-next-speaker``: reading it, and what to predict from it.

JSON Lines, one message per line, in conversation order (docs/next-speaker-corpus.md)::

    {"conversation": "c1", "speaker": "Maya", "text": "Anyone up for a hike?", "addressee": "all"}

Every message but a conversation's last gives one prediction (an :class:`Item`): the previous (up
to) 5 messages, the conversation's participants, and the gold label read from the addressee of
the message just read (see :mod:`playground.experiments.next_speaker_eval`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from playground import domain, errors
from playground.cognition import next_speaker

TurnKind = Literal["self", "allocated"]
ALL = "all"
FIELDS = ("conversation", "speaker", "text", "addressee")


class CorpusError(errors.PlaygroundError):
    """A corpus file is missing, unreadable or has a bad line.

    Attributes:
        path: the corpus file.
        line: the 1-based line number, or 0 for the whole file.
        field: the offending field, or ``""``.
        reason: what is wrong, without the place.
    """

    def __init__(self, path: object, line: int, field: str, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = reason
        where = self.path + (f", line {line}" if line else "") + (f": {field}" if field else "")
        super().__init__(f"{where}: {reason}")


# -- reading the corpus -------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusMessage:
    conversation: str
    speaker: str
    text: str
    #: A participant's name, or None when the message is addressed to ``all``.
    addressee: str | None
    line: int


@dataclass(frozen=True)
class Conversation:
    id: str
    messages: tuple[CorpusMessage, ...]
    #: Every speaker, then every addressee who never speaks, in order of first appearance.
    participants: tuple[str, ...]


def _field(path: Path, line: int, row: dict[str, Any], name: str) -> str:
    if name not in row:
        raise CorpusError(path, line, name, "missing")
    value = row[name]
    if name == "conversation" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise CorpusError(path, line, name, f"must be a string (got {json.dumps(value)[:40]})")
    if name != "text" and not value.strip():
        raise CorpusError(path, line, name, "must not be empty")
    return value if name == "text" else value.strip()


def parse_line(path: Path, line: int, raw: str) -> CorpusMessage:
    """One corpus line as a message.

    Raises:
        CorpusError: not a JSON object, or a field missing, of the wrong type, or empty; an
            addressee that is the speaker.
    """
    try:
        row = json.loads(raw)
    except ValueError as exc:
        raise CorpusError(path, line, "", f"not valid JSON ({exc})") from exc
    if not isinstance(row, dict):
        raise CorpusError(path, line, "", "must be a JSON object with " + ", ".join(FIELDS))
    conv, speaker, text, addressee = (_field(path, line, row, name) for name in FIELDS)
    if addressee.casefold() == ALL:
        return CorpusMessage(conv, speaker, text, None, line)
    if addressee.lstrip("@").casefold() == speaker.casefold():
        raise CorpusError(
            path, line, "addressee", f'{addressee!r} is the speaker: use "all" or another name'
        )
    return CorpusMessage(conv, speaker, text, addressee.lstrip("@"), line)


def read_corpus(path: str | os.PathLike[str]) -> list[Conversation]:
    """The conversations of a corpus file, in order of first appearance.

    Lines of different conversations may interleave; each conversation keeps its lines' order.
    Blank lines are skipped. Fields other than the four are ignored. An addressee is matched to
    the conversation's speakers case-insensitively (the speaker's spelling is kept).

    Raises:
        CorpusError: the file cannot be read, has no messages, or a line is bad (the message
            names the file, the line number and the field).
    """
    p = Path(path)
    try:
        handle = p.open(encoding="utf-8")
    except OSError as exc:
        raise CorpusError(p, 0, "", f"cannot read it ({exc.strerror or exc})") from exc
    grouped: dict[str, list[CorpusMessage]] = {}
    with handle:
        try:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    msg = parse_line(p, number, raw)
                    grouped.setdefault(msg.conversation, []).append(msg)
        except UnicodeDecodeError as exc:
            raise CorpusError(p, 0, "", f"not UTF-8 text ({exc.reason})") from exc
    if not grouped:
        raise CorpusError(p, 0, "", "holds no messages")
    return [_conversation(cid, msgs) for cid, msgs in grouped.items()]


def _conversation(cid: str, msgs: list[CorpusMessage]) -> Conversation:
    spelling: dict[str, str] = {}
    for m in msgs:
        spelling.setdefault(m.speaker.casefold(), m.speaker)
    for m in msgs:
        if m.addressee is not None:
            spelling.setdefault(m.addressee.casefold(), m.addressee)
    fixed = tuple(
        m
        if m.addressee is None
        else CorpusMessage(
            m.conversation, m.speaker, m.text, spelling[m.addressee.casefold()], m.line
        )
        for m in msgs
    )
    return Conversation(cid, fixed, tuple(spelling.values()))


# -- what to predict ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One prediction: after ``recent[-1]``, who speaks next, and the gold label."""

    conversation: str
    line: int
    recent: tuple[domain.Message, ...]
    participants: tuple[str, ...]
    kind: TurnKind
    gold: str
    next_speaker: str
    addressee: str | None

    @property
    def labels(self) -> list[str]:
        return next_speaker.labels(self.participants)


def items(conversations: Sequence[Conversation], *, limit: int | None = None) -> list[Item]:
    """The predictions to make, in corpus order: one after every message but each conversation's
    last, at most ``limit``."""
    out: list[Item] = []
    for conv in conversations:
        msgs = [
            domain.Message(id=i, speaker=m.speaker, text=m.text, step=i, at="", kind="human")
            for i, m in enumerate(conv.messages, start=1)
        ]
        for i in range(len(conv.messages) - 1):
            if limit is not None and len(out) >= limit:
                return out
            current, following = conv.messages[i], conv.messages[i + 1]
            allocated = current.addressee is not None
            out.append(
                Item(
                    conversation=conv.id,
                    line=current.line,
                    recent=tuple(msgs[max(0, i + 1 - next_speaker.WINDOW) : i + 1]),
                    participants=conv.participants,
                    kind="allocated" if allocated else "self",
                    gold=current.addressee or domain.ANYONE,
                    next_speaker=following.speaker,
                    addressee=current.addressee,
                )
            )
    return out
