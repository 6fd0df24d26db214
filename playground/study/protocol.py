"""The participant page's protocol: every frame between a study server and a page, defined once.

Each frame is a JSON object whose ``type`` names its kind (the discriminator). The server sends
:data:`ServerFrame`; the page sends :data:`PageFrame`, its first frame always an :class:`Open`.
:class:`CloseCode` names why the server closes a page's socket. The reference page
(docs/study-protocol.md), its JSON schema and the page's own ``static/protocol.js`` are generated
from these definitions by ``scripts/study_protocol.py``; a test fails when any of them is stale.

Everything the server sends is public to the page's own person: the conversation, who is there,
and their own notes and answers. Nothing here may carry a thought, a score, a condition, an
engine or another person's note (the hub decides per event; these models say what each frame can
hold at all).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

#: Where a person is in a conversation (see :mod:`playground.study.review`).
Phase = Literal["talk", "review", "wait", "final", "done"]
#: Who a participant is: a person, an AI agent, or a simulated user (an agent too, to the page).
Kind = Literal["ai", "human", "simulated"]


class CloseCode(IntEnum):
    """Why the server closed a page's socket; the page decides from the code what to do next."""

    #: The server dropped the page (it stopped following, or the test dropped it): reconnect.
    DROPPED = 1008
    #: The page fell too far behind the conversation: reconnect and catch up.
    TOO_SLOW = 1013
    #: Do not reconnect: the seat was revoked or the study ended.
    FOR_GOOD = 4000
    #: A study plan's next conversation begins: reconnect at once and start afresh.
    NEXT = 4001
    #: The study is paused (its runner stopped): keep trying; it continues when it resumes.
    PAUSED = 4002


class Frame(BaseModel):
    """A frame of the protocol: exactly the fields it names, nothing else."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# -- what the server sends: the parts --------------------------------------------------------------


class PublicMessage(Frame):
    """A message of the conversation, as every page sees it."""

    id: int = Field(description="The message's number in its conversation, from 1.")
    speaker: str = Field(description="Who said it.")
    text: str = Field(description="What was said (shown as text, never as HTML).")
    at: str = Field(description="When it was posted (ISO 8601).")
    kind: Kind = Field(description="Whether a person or an agent said it.")


class Person(Frame):
    """A participant as the people bar shows them."""

    name: str
    kind: Kind = Field(description="A person (human) or an agent (ai, simulated).")
    remote: bool = Field(description="A person who joined from a browser.")
    online: bool = Field(description="Has an open page now (agents: always shown as present).")


class Note(Frame):
    """One of the person's own private notes on a message."""

    message_id: int
    kind: Literal["reason", "reaction"] = Field(
        description="A reason for their own message, or a reaction to someone else's."
    )
    text: str


class Label(Frame):
    """The person's own answer to the in-the-moment question about an agent's message."""

    message_id: int
    answer: str


class RetroEntry(Frame):
    """The person's review of one message, as saved."""

    message_id: int
    thinking: str | None
    wanted: str | None
    why: str | None
    timing: str | None
    after_message_id: int | None


class Limits(Frame):
    """The longest text and name, in characters."""

    text: int
    name: int


class StudyStep(Frame):
    """Which conversation of a study plan this is."""

    position: int
    of: int
    topic: str
    agent: str


class ReviewLabels(Frame):
    """The review's answer labels, by key."""

    wanted: dict[str, str]
    timings: dict[str, str]


class Statement(Frame):
    key: str
    label: str
    statement: str


class Questionnaire(Frame):
    """The statements about a study conversation's agent, and the person's saved answers."""

    agent: str
    statements: list[Statement]
    answers: dict[str, int]


class Style(Frame):
    key: str
    label: str
    description: str


class Final(Frame):
    """The end-of-study questions and the person's saved answers."""

    agents: list[str]
    styles: list[Style]
    answers: dict[str, str]


# -- what the server sends: the frames -------------------------------------------------------------


class Hello(Frame):
    """The first frame on every socket: the conversation as the page must show it."""

    type: Literal["hello"] = "hello"
    session: str = Field(
        description="The conversation this socket serves. A page that showed another one starts"
        " afresh; every note, label and answer it sends names this one."
    )
    you: str | None = Field(description="The seat's name, once its person joined.")
    status: Literal["open", "ended"]
    pages: int = Field(description="Pages open on this link now, this one included.")
    participants: list[Person]
    messages: list[PublicMessage] = Field(
        description="The messages after the page's ``after`` (all of them for a new page or"
        " another conversation)."
    )
    notes: list[Note]
    labels: list[Label]
    question: str = Field(description="The in-the-moment question; {speaker} is replaced.")
    answers: list[str]
    limits: Limits
    phase: Phase
    study: StudyStep | None
    retrospective: list[RetroEntry]
    review: ReviewLabels
    questionnaire: Questionnaire | None
    final: Final | None
    thoughts_shown: bool = Field(description="The condition that shows the agents' thoughts.")


class MessageFrame(Frame):
    """A new message (saved before it is sent)."""

    type: Literal["message"] = "message"
    message: PublicMessage


class Joined(Frame):
    """Someone joined the conversation."""

    type: Literal["joined"] = "joined"
    person: Person


class Left(Frame):
    """Someone left the conversation."""

    type: Literal["left"] = "left"
    name: str


class Typing(Frame):
    """Someone is typing (an agent: writing its message), or stopped."""

    type: Literal["typing"] = "typing"
    name: str
    on: bool


class Presence(Frame):
    """A person's page came or went."""

    type: Literal["presence"] = "presence"
    name: str
    online: bool


class You(Frame):
    """The seat's person joined under ``name``."""

    type: Literal["you"] = "you"
    name: str


class NoteFrame(Frame):
    """One of the person's own notes was saved."""

    type: Literal["note"] = "note"
    note: Note


class LabelFrame(Frame):
    """One of the person's own answers was saved."""

    type: Literal["label"] = "label"
    label: Label


class Error(Frame):
    """An action was refused; ``message`` says why, for the person."""

    type: Literal["error"] = "error"
    message: str
    refused: str | None = Field(
        default=None, description="The kind of the refused page frame, when it had one."
    )


class Ended(Frame):
    """The conversation is over (the page stays for its review)."""

    type: Literal["ended"] = "ended"
    status: Literal["finished", "interrupted", "failed"]
    reason: str


class Paused(Frame):
    """The study is paused: the page keeps trying and continues by itself when it resumes."""

    type: Literal["paused"] = "paused"
    reason: str


class Revoked(Frame):
    """The researcher withdrew this seat: the page stops."""

    type: Literal["revoked"] = "revoked"


class Pages(Frame):
    """How many pages are open on this link now (sent when another opens or one closes)."""

    type: Literal["pages"] = "pages"
    count: int


class PhaseFrame(Frame):
    """Where the person is now (the conversation ended, they rated it)."""

    type: Literal["phase"] = "phase"
    phase: Phase
    final: Final | None = None


class Retro(Frame):
    """The person's review of a message was saved."""

    type: Literal["retro"] = "retro"
    entry: RetroEntry


class Answered(Frame):
    """The person's answers were saved."""

    type: Literal["answered"] = "answered"
    what: Literal["questionnaire", "final"]
    answers: dict[str, int] | dict[str, str]


class Thought(Frame):
    """An agent's thought, in the condition that shows them (``motivation`` once rated)."""

    type: Literal["thought"] = "thought"
    name: str
    id: int
    text: str
    motivation: float | None


ServerFrame = Annotated[
    Hello
    | MessageFrame
    | Joined
    | Left
    | Typing
    | Presence
    | You
    | NoteFrame
    | LabelFrame
    | Error
    | Ended
    | Paused
    | Revoked
    | Pages
    | PhaseFrame
    | Retro
    | Answered
    | Thought,
    Field(discriminator="type"),
]


# -- what the page sends ---------------------------------------------------------------------------


class Open(Frame):
    """The page's first frame: what it has already seen."""

    type: Literal["open"] = "open"
    after: int = Field(default=0, description="The last message id the page shows.")
    session: str | None = Field(
        default=None, description="The conversation the page shows (None: a new page)."
    )


class Join(Frame):
    """The person joins under the name they typed."""

    type: Literal["join"] = "join"
    name: str


class Say(Frame):
    """The person sends a message."""

    type: Literal["say"] = "say"
    text: str


class TypingNow(Frame):
    """The person is typing (sent at most every 1.5 s)."""

    type: Literal["typing"] = "typing"


class AboutMessage(Frame):
    """A frame about one message of one conversation: refused unless both are current."""

    session: str = Field(description="The conversation the page shows (from its hello).")
    message_id: int


class NoteSent(AboutMessage):
    """A private note on a message: a reason (their own) or a reaction (another's)."""

    type: Literal["note"] = "note"
    text: str


class LabelSent(AboutMessage):
    """An answer to the in-the-moment question about an agent's message."""

    type: Literal["label"] = "label"
    answer: str


class RetroSent(AboutMessage):
    """The person's review of one message, once the conversation is over."""

    type: Literal["retro"] = "retro"
    thinking: str | None = None
    wanted: str | None = None
    why: str | None = None
    timing: str | None = None
    after_message_id: int | None = None


class QuestionnaireSent(Frame):
    """The person's ratings (1 to 7) of the conversation's agent, one per statement."""

    type: Literal["questionnaire"] = "questionnaire"
    session: str
    answers: dict[str, int]


class FinalSent(Frame):
    """The end-of-study answers: each agent's style (``match:<agent>``) and ``favourite``."""

    type: Literal["final"] = "final"
    session: str
    answers: dict[str, str]


PageFrame = Annotated[
    Open
    | Join
    | Say
    | TypingNow
    | NoteSent
    | LabelSent
    | RetroSent
    | QuestionnaireSent
    | FinalSent,
    Field(discriminator="type"),
]

SERVER_FRAMES: TypeAdapter[ServerFrame] = TypeAdapter(ServerFrame)
PAGE_FRAMES: TypeAdapter[PageFrame] = TypeAdapter(PageFrame)
