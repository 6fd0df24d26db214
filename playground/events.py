"""Typed events for everything the engine does, and a plain-callback bus to deliver them.

Events are past-tense facts carrying full records, so subscribers (the recorder, the GUI bridge,
the CLI printer) never query back into a running engine. ``EVENT_ADAPTER`` round-trips any event
through JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from playground import domain
from playground.domain.simulated_user import HiddenState, UserProfile

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
    condition: domain.Condition
    settings: dict[str, Any]
    logprobs_supported: bool | None = None
    #: An experiment's conversation: its id, and the draw (conversation number) it shares with
    #: the other conditions' sessions of the same draw (a paired design).
    experiment_id: str | None = None
    draw: int | None = None


class ParticipantJoined(BaseEvent):
    kind: Literal["participant_joined"] = "participant_joined"
    name: str
    participant_kind: domain.ParticipantKind
    persona: domain.Persona | None = None
    proactivity: dict[str, Any] = {}
    color_index: int = 0
    #: An AI participant's turn-taking policy. People and simulated users have none: the field
    #: is left at its default for them, and their participants row reads ``human`` or
    #: ``simulated`` (:func:`playground.domain.seat_policy`).
    policy: domain.Policy = "inner-thoughts"
    #: A simulated user's private profile (``participant_kind == "simulated"``), snapshotted.
    profile: UserProfile | None = None
    #: A human taking part from a browser (an invited seat), not at the app's window.
    remote: bool = False


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


class NextSpeakerPredicted(BaseEvent):
    """A next-speaker predictor's answer after a message, and whom the room gave the turn to
    (``chosen``: the named agent, or the one drawn for ``anyone``; None when it is nobody's)."""

    kind: Literal["next_speaker_predicted"] = "next_speaker_predicted"
    prediction: domain.NextSpeakerPrediction
    chosen: str | None = None
    rule: str = ""


class PolicyChanged(BaseEvent):
    kind: Literal["policy_changed"] = "policy_changed"
    name: str
    policy: domain.Policy


class ConditionChanged(BaseEvent):
    """The session's condition changed (``step``: when): a participant with another turn-taking
    policy took a seat, an agent's policy changed, or the seats changed before the first message.

    Once the conversation has begun, the condition is that of every policy that has held a seat
    since (``playground.domain.condition_of``): a session where a reactive agent took part is
    ``mixed`` also after it left.
    """

    kind: Literal["condition_changed"] = "condition_changed"
    old: domain.Condition
    new: domain.Condition
    why: str = Field(description="What changed the seats, e.g. 'Dev (reactive) joined'.")


class MemoriesRetrieved(BaseEvent):
    kind: Literal["memories_retrieved"] = "memories_retrieved"
    agent: str
    stimuli: list[domain.Stimulus]


class ThoughtFormed(BaseEvent):
    kind: Literal["thought_formed"] = "thought_formed"
    thought: domain.Thought


class ThoughtRefused(BaseEvent):
    """A text from the mind that says nothing, refused (see
    :func:`playground.cognition.base.placeholder_reason`): an empty or placeholder thought draft
    (``"..."``, ``<thought>``, a field description copied from the prompt), dropped before
    evaluation (``stage="thought"``), or such an utterance, not posted: the agent stays silent
    for that step (``stage="utterance"``). Kept in the event log only."""

    kind: Literal["thought_refused"] = "thought_refused"
    agent: str
    text: str
    reason: str
    stage: Literal["thought", "utterance"] = "thought"


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


class ThoughtRestored(BaseEvent):
    """A deleted thought is back (the user undid the deletion): as it was when deleted."""

    kind: Literal["thought_restored"] = "thought_restored"
    agent: str
    thought: domain.Thought


class DecisionMade(BaseEvent):
    kind: Literal["decision_made"] = "decision_made"
    decision: domain.Decision


class ParticipantStateChanged(BaseEvent):
    kind: Literal["participant_state_changed"] = "participant_state_changed"
    name: str
    state: domain.ParticipantState


class PresenceChanged(BaseEvent):
    """A remote human's browser connected (``online``) or lost its connection.

    Recorded with the session, so an analysis can tell a silence from a dropped connection.
    """

    kind: Literal["presence_changed"] = "presence_changed"
    name: str
    online: bool


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


class HiddenStateRecorded(BaseEvent):
    """A simulated user's hidden state at the turn that posted ``message_id`` (docs/spec.md §2.5).

    For the researcher only: the recorder stores it and the window shows it; nothing puts it in
    another participant's prompt. ``turn`` counts the simulated user's own messages from 0.
    """

    kind: Literal["hidden_state_recorded"] = "hidden_state_recorded"
    participant: str
    message_id: int
    turn: int
    state: HiddenState
    origin: str = ""


class MessageEmbedded(BaseEvent):
    """A message's vector, as the room computed it for retrieval: the recorder keeps it in the
    ``message_embeddings`` cache (for the conversation's geometry) and leaves it out of the event
    log. ``vector`` is float32 little-endian, ``dim`` values; ``model`` the embedder's name."""

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    kind: Literal["message_embedded"] = "message_embedded"
    message_id: int
    model: str
    dim: int
    vector: bytes


#: The stages of one trigger, as :mod:`playground.room.pipeline` declares them.
StageName = Literal[
    "interpretation",
    "turn type",
    "prediction",
    "embeddings",
    "retrieval",
    "System-1 thoughts",
    "System-2 thoughts",
    "evaluation",
    "re-evaluation",
    "decision",
    "floor",
    "articulation",
    "typing",
    "post",
]


class StageTiming(BaseModel):
    """Where one stage of a trigger spent its time, in seconds after the trigger fired.

    ``ready`` is when everything the stage waits for had finished; it ``started`` then or later
    (``waited`` = started - ready: queued behind the room's agent limit or other work) and ran
    for ``took`` seconds, of which ``in_calls`` were spent waiting for the model server
    (``calls`` requests; the rest is this machine's own work: embeddings, parsing, storage).
    ``critical`` marks the stages the trigger's end waited for, one after the other.
    """

    model_config = ConfigDict(frozen=True)

    stage: StageName
    agent: str = ""
    #: What the stage did it for, when several of a kind run: a thought's text, a system.
    detail: str = ""
    ready: float
    started: float
    took: float
    in_calls: float = 0.0
    calls: int = 0
    critical: bool = False

    @property
    def waited(self) -> float:
        return max(0.0, self.started - self.ready)

    @property
    def ended(self) -> float:
        return self.started + self.took


class TriggerTimed(BaseEvent):
    """Where one trigger's time went: every stage with when it could start, when it did and how
    long it ran, and the critical path (the chain of stages the trigger's end waited for).

    Published when the trigger ends, posted or silent; a trigger a newer one made stale is not
    timed. Times only: nothing in it changes what the agents think or say."""

    kind: Literal["trigger_timed"] = "trigger_timed"
    trigger: domain.TriggerKind
    #: The message the trigger answered (None for a pause before any message).
    message_id: int | None = None
    #: The message an agent posted at this trigger, or None when everyone stayed silent.
    posted: int | None = None
    total: float
    stages: list[StageTiming]


class SessionFinished(BaseEvent):
    kind: Literal["session_finished"] = "session_finished"
    status: domain.EndStatus
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
    | NextSpeakerPredicted
    | PolicyChanged
    | ConditionChanged
    | MemoriesRetrieved
    | ThoughtFormed
    | ThoughtRefused
    | ThoughtEvaluated
    | ThoughtExpressed
    | ThoughtDeleted
    | ThoughtRestored
    | DecisionMade
    | ParticipantStateChanged
    | PresenceChanged
    | UsageRecorded
    | ErrorOccurred
    | AnnotationAdded
    | LabelRecorded
    | ProactivityChanged
    | HiddenStateRecorded
    | MessageEmbedded
    | TriggerTimed
    | SessionFinished,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

Handler = Callable[[Any], None]


@dataclass(frozen=True, eq=False)
class _Subscription:
    handler: Handler
    kinds: frozenset[str] | None
    required: bool


class EventBus:
    """Synchronous publish/subscribe on the loop thread. Required subscribers run first, then the
    listeners, each group in subscription order: an event is saved before anyone shows it, so a
    process killed in between never leaves a message the user saw but the database lacks.

    Two kinds of subscriber:

    - *listeners* (the window, the CLI printer): a failing listener is logged and the others
      still run; the run goes on (unless ``strict``, for tests).
    - *required* subscribers (the recorder): the run cannot go on without them. The event still
      reaches every other subscriber, then the failure is raised to whoever published it, and
      the first one is kept in :attr:`failure` so the loops can end the run even when a
      publisher up the stack caught it.
    """

    def __init__(self, *, strict: bool = False) -> None:
        self._subs: list[_Subscription] = []
        self._strict = strict
        #: The first exception a required subscriber raised; None while all is well.
        self.failure: Exception | None = None

    def subscribe(
        self, handler: Handler, kinds: Iterable[str] | None = None, *, required: bool = False
    ) -> Callable[[], None]:
        """Register ``handler`` for all events or only the given kinds.

        Args:
            handler: called with each event.
            kinds: only these event kinds; None for all.
            required: the run depends on this handler: its exceptions are raised to the
                publisher and kept in :attr:`failure` instead of being logged.

        Returns:
            The function that unsubscribes it.
        """
        entry = _Subscription(handler, frozenset(kinds) if kinds is not None else None, required)
        # Required subscribers go before every listener (and after earlier required ones).
        at = sum(1 for sub in self._subs if sub.required) if required else len(self._subs)
        self._subs.insert(at, entry)

        def unsubscribe() -> None:
            if entry in self._subs:
                self._subs.remove(entry)

        return unsubscribe

    def publish(self, event: BaseEvent) -> None:
        """Deliver ``event`` to every subscriber that wants it.

        Raises:
            Exception: what a required subscriber raised (after all the others had the event).
        """
        kind = getattr(event, "kind", "")
        fatal: Exception | None = None
        for sub in list(self._subs):
            if sub.kinds is not None and kind not in sub.kinds:
                continue
            try:
                sub.handler(event)
            except Exception as exc:
                if sub.required:
                    fatal = fatal or exc
                    if self.failure is None:
                        self.failure = exc
                    continue
                # A broken listener (a closed window, a full terminal) must not stop the run.
                if self._strict:
                    raise
                log.exception("event handler failed on %s", kind)
        if fatal is not None:
            raise fatal
