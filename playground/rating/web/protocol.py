"""The raters' page protocol: every WebSocket frame, both ways, defined once.

These models are the whole of what may pass between the server and a rater's page. Frames the
server sends carry the speakers and texts of messages and the rater's own answers only: no
session id, condition, engine, model, thought, score or origin has a field to travel in, and
every model forbids extra keys, so nothing else can be added by mistake. Messages are numbered
1..n within their conversation (never their database ids). docs/rater-protocol.md is generated
from this module (``scripts/rater_protocol.py``), and a test keeps it current.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

#: The longest comment on a marked turn, and the longest reason for a preference.
MAX_COMMENT = 500
MAX_REASON = 1000


class CloseCode(IntEnum):
    """Why the server closes a rater's WebSocket (the page's ``protocol.js`` has the same names)."""

    #: The researcher stopped serving the plan: the page says so and does not reconnect.
    ENDED = 4000
    #: The same link was opened in another tab or browser: this page stops (the newest wins).
    REPLACED = 4002
    #: The page sent too many frames too fast; it may reconnect after a pause.
    TOO_FAST = 4008
    #: The page sent something that is not a frame of this protocol.
    BAD_FRAME = 4009


class _Frame(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# -- server → page ----------------------------------------------------------------------------


class Statement(_Frame):
    """One of the seven statements, rated 1 (strongly disagree) to 7 (strongly agree)."""

    key: str = Field(description="Its key, as in ``ratings.metric``.")
    statement: str = Field(description="The text shown.")


class Line(_Frame):
    """One message as a rater sees it."""

    n: int = Field(ge=1, description="Its place in the conversation, from 1.")
    speaker: str = Field(description="Who said it (the name shown in the conversation).")
    text: str = Field(description="What they said.")


class Mark(_Frame):
    """The rater's own mark of an unnatural turn."""

    n: int = Field(ge=1, description="The message marked (its place, from 1).")
    comment: str = Field(description="What felt unnatural (may be empty).")


class Conversation(_Frame):
    """One conversation of a task, with the rater's own progress and marks on it."""

    label: Literal["", "A", "B"] = Field(description="'' for a lone conversation, else A or B.")
    lines: list[Line] = Field(description="Every message, in order.")
    shown: int = Field(ge=0, description="How many messages the rater has already been shown.")
    marks: list[Mark] = Field(description="The rater's marks on this conversation.")


class Welcome(_Frame):
    """The first frame: who the rater is and what they will be asked."""

    kind: Literal["welcome"] = "welcome"
    rater: str = Field(description="The rater's id, as the researcher knows it.")
    statements: list[Statement] = Field(description="The seven statements, in order.")
    cps: int = Field(ge=1, description="Human typing speed, characters per second.")


class Task(_Frame):
    """The rater's current assignment (sent on connecting and after each answer)."""

    kind: Literal["task"] = "task"
    mode: Literal["conversation", "pairwise"] = Field(
        description="Rate one conversation, or choose between two."
    )
    position: int = Field(ge=1, description="Which assignment this is, from 1.")
    total: int = Field(ge=1, description="How many assignments the rater has.")
    conversations: list[Conversation] = Field(description="One, or two (A is shown first).")
    ratings: dict[str, int] = Field(description="The rater's saved answers to the statements.")


class Ack(_Frame):
    """An action of the page was stored."""

    kind: Literal["ack"] = "ack"
    seq: int = Field(description="The ``seq`` of the frame it answers.")


class Refused(_Frame):
    """An action of the page was not stored, and why (nothing else changed)."""

    kind: Literal["refused"] = "refused"
    seq: int | None = Field(description="The ``seq`` of the frame it answers, if it had one.")
    message: str = Field(description="What was wrong, for the rater to read.")


class Finished(_Frame):
    """Every assignment is done: the completion code to give the platform."""

    kind: Literal["finished"] = "finished"
    code: str = Field(description="The rater's completion code.")
    total: int = Field(ge=0, description="How many assignments they did.")


#: Any frame the server sends.
Outgoing = Welcome | Task | Ack | Refused | Finished
ServerFrame = Annotated[Outgoing, Field(discriminator="kind")]
SERVER_FRAMES: tuple[type[_Frame], ...] = (Welcome, Task, Ack, Refused, Finished)
server_frame: TypeAdapter[Outgoing] = TypeAdapter(ServerFrame)


# -- page → server ----------------------------------------------------------------------------

Part = Annotated[int, Field(ge=0, le=1, description="0: the conversation (or A), 1: B.")]
Place = Annotated[int, Field(ge=1, le=100_000, description="A message's place, from 1.")]
Seq = Annotated[int, Field(ge=0, le=2**31, description="The page's number for this frame.")]
Position = Annotated[
    int, Field(ge=1, le=100_000, description="The task's ``position`` the page is showing.")
]


class Shown(_Frame):
    """The rater has now been shown ``count`` messages of a conversation."""

    kind: Literal["shown"] = "shown"
    seq: Seq
    task: Position
    part: Part
    count: int = Field(ge=0, le=100_000, description="Messages shown so far.")


class MarkTurn(_Frame):
    """Mark a message as an unnatural turn (again: the comment is replaced)."""

    kind: Literal["mark"] = "mark"
    seq: Seq
    task: Position
    part: Part
    n: Place
    comment: str = Field(max_length=MAX_COMMENT, description="What felt unnatural (optional).")


class UnmarkTurn(_Frame):
    """Take a mark back."""

    kind: Literal["unmark"] = "unmark"
    seq: Seq
    task: Position
    part: Part
    n: Place


class Rate(_Frame):
    """Answers to all seven statements (only once the whole conversation was shown)."""

    kind: Literal["rate"] = "rate"
    seq: Seq
    task: Position
    values: dict[str, int] = Field(description="Statement key → 1..7, all seven.")


class Prefer(_Frame):
    """The more natural conversation of a pair, and why (required)."""

    kind: Literal["prefer"] = "prefer"
    seq: Seq
    task: Position
    choice: Literal["A", "B"] = Field(description="The conversation chosen.")
    reason: str = Field(min_length=1, max_length=MAX_REASON, description="Why (required).")


#: Any frame a page sends.
Incoming = Shown | MarkTurn | UnmarkTurn | Rate | Prefer
PageFrame = Annotated[Incoming, Field(discriminator="kind")]
PAGE_FRAMES: tuple[type[_Frame], ...] = (Shown, MarkTurn, UnmarkTurn, Rate, Prefer)
page_frame: TypeAdapter[Incoming] = TypeAdapter(PageFrame)


def encode(frame: Outgoing) -> str:
    """The JSON text of a server frame (checked against its model once more on the way out)."""
    return server_frame.dump_json(server_frame.validate_python(frame)).decode()
