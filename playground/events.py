"""Typed events for everything the engine does, and a plain-callback bus to deliver them.

Events are past-tense facts carrying full records, so subscribers (the recorder, the GUI bridge,
the CLI printer) never query back into a running engine. ``EVENT_ADAPTER`` round-trips any event
through JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from playground import domain

log = logging.getLogger(__name__)


class BaseEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str = ""
    seq: int = 0
    step: int = 0
    at: str = ""


class SessionStarted(BaseEvent):
    kind: Literal["session_started"] = "session_started"
    engine: str
    model: str
    seed: int
    condition: str
    settings: dict[str, Any]
    logprobs_supported: bool | None = None


class ParticipantJoined(BaseEvent):
    kind: Literal["participant_joined"] = "participant_joined"
    name: str
    participant_kind: domain.ParticipantKind
    persona: domain.Persona | None = None
    proactivity: dict[str, Any] = {}
    color_index: int = 0


class ParticipantLeft(BaseEvent):
    kind: Literal["participant_left"] = "participant_left"
    name: str


class MemoryChanged(BaseEvent):
    kind: Literal["memory_changed"] = "memory_changed"
    agent: str
    change: Literal["added", "edited", "deleted"]
    memory: domain.MemoryItem


class TriggerFired(BaseEvent):
    kind: Literal["trigger_fired"] = "trigger_fired"
    trigger: domain.TriggerKind
    message_id: int | None = None
    generation: int = 0


class MessagePosted(BaseEvent):
    kind: Literal["message_posted"] = "message_posted"
    message: domain.Message


class MessageInterpreted(BaseEvent):
    kind: Literal["message_interpreted"] = "message_interpreted"
    interpretation: domain.Interpretation


class TurnTypePredicted(BaseEvent):
    kind: Literal["turn_type_predicted"] = "turn_type_predicted"
    turn_type: domain.TurnType


class MemoriesRetrieved(BaseEvent):
    kind: Literal["memories_retrieved"] = "memories_retrieved"
    agent: str
    stimuli: list[domain.Stimulus]


class ThoughtFormed(BaseEvent):
    kind: Literal["thought_formed"] = "thought_formed"
    thought: domain.Thought


class ThoughtEvaluated(BaseEvent):
    kind: Literal["thought_evaluated"] = "thought_evaluated"
    agent: str
    evaluation: domain.Evaluation
    saliency: float | None = Field(
        None, description="The thought's saliency at this evaluation (re-computed when retained)."
    )
    retained: bool = Field(
        False,
        description="True when an older thought was re-scored because it became salient again.",
    )


class ThoughtExpressed(BaseEvent):
    kind: Literal["thought_expressed"] = "thought_expressed"
    agent: str
    thought_id: int
    message_id: int
    forced: bool = False


class ThoughtDeleted(BaseEvent):
    kind: Literal["thought_deleted"] = "thought_deleted"
    agent: str
    thought_id: int


class DecisionMade(BaseEvent):
    kind: Literal["decision_made"] = "decision_made"
    decision: domain.Decision


class ParticipantStateChanged(BaseEvent):
    kind: Literal["participant_state_changed"] = "participant_state_changed"
    name: str
    state: Literal["idle", "thinking", "wants_to_speak", "speaking"]


class UsageRecorded(BaseEvent):
    kind: Literal["usage_recorded"] = "usage_recorded"
    usage: domain.Usage


class ErrorOccurred(BaseEvent):
    kind: Literal["error_occurred"] = "error_occurred"
    where: str
    message: str
    error_type: str


class AnnotationAdded(BaseEvent):
    """A human's private note on a message: a reason (own message) or a reaction (someone else's).

    Never shown to the agents: nothing in the engine reads annotations back into a prompt.
    """

    kind: Literal["annotation_added"] = "annotation_added"
    message_id: int
    author: str
    note_kind: Literal["reason", "reaction"]
    text: str


class LabelRecorded(BaseEvent):
    """A human's one-click answer to an in-the-moment question about a message ("not sure" counts)."""

    kind: Literal["label_recorded"] = "label_recorded"
    message_id: int
    author: str
    question: str
    answer: str


class ProactivityChanged(BaseEvent):
    kind: Literal["proactivity_changed"] = "proactivity_changed"
    name: str
    proactivity: dict[str, Any]


class SessionFinished(BaseEvent):
    kind: Literal["session_finished"] = "session_finished"
    status: Literal["finished", "interrupted", "failed"]
    reason: str


Event = Annotated[
    SessionStarted
    | ParticipantJoined
    | ParticipantLeft
    | MemoryChanged
    | TriggerFired
    | MessagePosted
    | MessageInterpreted
    | TurnTypePredicted
    | MemoriesRetrieved
    | ThoughtFormed
    | ThoughtEvaluated
    | ThoughtExpressed
    | ThoughtDeleted
    | DecisionMade
    | ParticipantStateChanged
    | UsageRecorded
    | ErrorOccurred
    | AnnotationAdded
    | LabelRecorded
    | ProactivityChanged
    | SessionFinished,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

Handler = Callable[[Any], None]


class EventBus:
    """Synchronous publish/subscribe. Handlers run in subscription order on the loop thread.

    A failing handler is logged and does not stop the others, unless ``strict`` (tests).
    """

    def __init__(self, *, strict: bool = False) -> None:
        self._subs: list[tuple[Handler, frozenset[str] | None]] = []
        self._strict = strict

    def subscribe(self, handler: Handler, kinds: Iterable[str] | None = None) -> Callable[[], None]:
        """Register ``handler`` for all events or only the given kinds; returns the unsubscribe function."""
        entry = (handler, frozenset(kinds) if kinds is not None else None)
        self._subs.append(entry)

        def unsubscribe() -> None:
            if entry in self._subs:
                self._subs.remove(entry)

        return unsubscribe

    def publish(self, event: BaseEvent) -> None:
        kind = getattr(event, "kind", "")
        for handler, kinds in list(self._subs):
            if kinds is not None and kind not in kinds:
                continue
            try:
                handler(event)
            except Exception:
                # A broken subscriber (a closed window, a full disk) must not stop the simulation.
                if self._strict:
                    raise
                log.exception("event handler failed on %s", kind)
