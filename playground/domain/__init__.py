"""The records the engine works with: personas, memories, messages, thoughts, evaluations, decisions.

Records are frozen; the owners (``MemoryStore``, ``ThoughtReservoir``, ``Agent``, ``Room``) hold the
mutable state and replace records when something changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from playground.domain.refs import ref

MemoryKind = Literal[
    "fact", "objective", "interest", "knowledge", "experience", "utterance", "thought"
]
PERSONA_MEMORY_KINDS = ("objective", "interest", "knowledge", "experience")
ParticipantKind = Literal["ai", "human", "simulated"]
TriggerKind = Literal["new_message", "pause"]
ScoreMethod = Literal["logprobs", "sampled", "parsed", "offline-heuristic"]
#: How an AI participant takes turns (docs/spec.md §1.9.1):
#: ``inner-thoughts`` (the engine), ``next-speaker`` (a predictor picks who speaks next; the
#: chosen agent answers from its static persona) or ``reactive`` (answers only when addressed).
Policy = Literal["inner-thoughts", "next-speaker", "reactive"]
POLICIES: tuple[Policy, ...] = ("inner-thoughts", "next-speaker", "reactive")
#: Each policy's name as the window's menus and forms show it.
POLICY_LABELS: dict[Policy, str] = {
    "inner-thoughts": "Inner Thoughts",
    "next-speaker": "Next-speaker prediction",
    "reactive": "Reactive (answers when addressed)",
}
#: Who made a decision: an AI participant's policy, or a simulated user (``simulated``: it
#: answers when addressed, else speaks with a probability; see :mod:`playground.room.simulated`).
DecisionPolicy = Literal["inner-thoughts", "next-speaker", "reactive", "simulated"]
#: What a participants row says about how its participant takes turns: an AI participant's
#: policy; ``human`` (a person has no policy: they speak when they choose) or ``simulated``.
SeatPolicy = Literal["inner-thoughts", "next-speaker", "reactive", "human", "simulated"]
#: A session's condition: the one policy its AI participants share, else ``mixed``.
Condition = Literal["inner-thoughts", "next-speaker", "reactive", "mixed"]
CONDITIONS: tuple[Condition, ...] = ("inner-thoughts", "next-speaker", "reactive", "mixed")
#: A participant's live state in the room.
ParticipantState = Literal["idle", "thinking", "wants_to_speak", "speaking"]
#: How a session ended.
EndStatus = Literal["finished", "interrupted", "failed"]
#: A session's status, as its sessions row says it: ``running`` until it ends. An experiment's
#: run rows use the same words for the run of one conversation.
SessionStatus = Literal["running", "finished", "interrupted", "failed"]


def condition_of(policies: Iterable[Policy]) -> Condition:
    """A session's condition: the one policy all its agents share, else ``mixed`` (Inner Thoughts
    when there is no agent)."""
    found = set(policies)
    if len(found) == 1:
        return next(iter(found))
    return "mixed" if found else "inner-thoughts"


def as_condition(value: str | None) -> Condition:
    """A condition read back from a sessions row (Inner Thoughts when empty or unknown: rows made
    by hand or by an older version)."""
    for c in CONDITIONS:
        if value == c:
            return c
    return "inner-thoughts"


def seat_policy(kind: ParticipantKind, policy: Policy) -> SeatPolicy:
    """The policy a participants row records: the AI's own, else the kind of person it is."""
    if kind == "human":
        return "human"
    return "simulated" if kind == "simulated" else policy


#: The label of the next-speaker scheme for "whoever self-selects".
ANYONE = "anyone"
HEURISTICS = (
    "relevance",
    "information_gap",
    "expected_impact",
    "urgency",
    "coherence",
    "originality",
    "balance",
    "dynamics",
)


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PersonaMemory(Record):
    """One memory a persona starts with: an objective, interest, knowledge or experience, and
    how much it weighs (0 to 1) when it competes for attention."""

    kind: Literal["objective", "interest", "knowledge", "experience"]
    text: str = Field(min_length=1, max_length=300)
    weight: float = Field(1.0, ge=0, le=1)


class Persona(Record):
    """A participant's character, loaded from a persona file."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=40, pattern=r"^[^\s,:;]+$")
    description: str = ""
    style: str = ""
    facts: list[str] = Field(min_length=1, max_length=20)
    memories: list[PersonaMemory] = []


class MemoryItem(Record):
    """One long-term memory of an agent (a persona fact, objective, interest...)."""

    id: int
    kind: MemoryKind
    text: str
    weight: float = Field(1.0, ge=0, le=1)
    created_step: int = 0
    last_access: int = 0

    @property
    def ref(self) -> str:
        return ref("memory", self.id)


class Message(Record):
    """One utterance posted to the room; ``id`` is its turn number, starting at 1."""

    id: int
    speaker: str
    text: str
    step: int
    at: str
    kind: ParticipantKind = "ai"
    thought_id: int | None = None
    system: Literal[1, 2] | None = None
    interruption: bool = False
    origin: str = Field("", description="'offline engine', a model name, or 'human'.")
    forced: bool = Field(
        False, description="Said because the user clicked the thought, whatever its score."
    )

    @property
    def ref(self) -> str:
        return ref("message", self.id)


class TurnType(Record):
    """Turn-taking type of an utterance: open to anyone, or allocated to a named participant."""

    message_id: int
    kind: Literal["open", "allocated"]
    addressee: str | None = None
    origin: str = ""


class Interpretation(Record):
    message_id: int
    text: str
    origin: str = ""


class Stimulus(Record):
    """A memory item that was salient at a trigger."""

    ref: str
    text: str
    saliency: float
    random: bool = Field(False, description="Pulled in at random ('creativity'), not by saliency.")
    cosine: float | None = Field(
        None,
        description="A random pull's raw cosine to the latest utterance; its saliency is not what"
        " brought it in, so the window shows this instead.",
    )


class Thought(Record):
    """One covert thought of an agent."""

    id: int
    agent: str
    text: str
    system: Literal[1, 2]
    stimuli: list[str] = []
    saliency: float = 0.0
    created_step: int
    last_access: int
    score: float | None = None
    expressed_in: int | None = None
    origin: str = ""

    @property
    def ref(self) -> str:
        return ref("thought", self.id)


class Evaluation(Record):
    """How strongly an agent wants to express a thought, and why."""

    thought_id: int
    step: int
    rating: int = Field(ge=1, le=5)
    distribution: dict[int, float]
    reasons_for: list[str]
    reasons_against: list[str]
    heuristics: dict[str, float] = {}
    expected: float
    silence_factor: float
    score: float
    method: ScoreMethod
    #: The sampled method: how many ratings the distribution was estimated from.
    samples: int | None = None


class Decision(Record):
    """What one agent decided at one trigger (Algorithm 1), and why."""

    agent: str
    step: int
    trigger: TriggerKind
    action: Literal["speak", "silent"]
    thought_id: int | None = None
    #: The motivation score the decision went by: the chosen thought's (``thought_id``), which
    #: for a drawn System-1 reply is below the best; with no thought chosen, the best score.
    score: float | None = None
    turn_type: Literal["open", "allocated-self", "allocated-other"] = "open"
    reason: str
    threshold: float | None = None
    #: The turn-taking policy that made the decision (baselines have no motivation score).
    policy: DecisionPolicy = "inner-thoughts"
    #: Next-speaker policy: the predictor's probability for the label that gave this agent the turn;
    #: a simulated user: its probability of speaking unaddressed.
    probability: float | None = None
    #: Inner Thoughts: the best score among the agent's thoughts at this trigger (what the
    #: thresholds are compared with); None for baselines, simulated users and decisions
    #: recorded before it was kept (then ``score`` is the best, except for a System-1 draw).
    best_score: float | None = None


class NextSpeakerPrediction(Record):
    """Who a next-speaker predictor expects to speak after ``message_id``: a name or ``anyone``.

    ``probabilities`` covers every label offered (each participant's name and ``anyone``) and
    sums to 1; ``method`` says where it came from: the answer token's logprobs, the parsed answer
    alone (probability 1), or the offline engine's heuristic.
    """

    message_id: int
    predicted: str
    probabilities: dict[str, float]
    method: ScoreMethod
    origin: str = ""


class Usage(Record):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    #: Attempts made again after a 429, a 5xx, a timeout or a dropped connection.
    retries: int = 0
    #: Of those, the ones that waited out a 429 (rate limited), and the seconds waited for them.
    rate_limit_waits: int = 0
    rate_limit_seconds: float = 0.0
    #: Answers left out because they were unusable even after a repair request (a thought, a
    #: rating, a sample): the turn went on without them.
    dropped: int = 0
    #: Answers cut at the token limit (asked again with a higher limit, or trimmed).
    cut: int = 0
    #: What the server was found to accept (:class:`playground.llm.capabilities.ServerProfile`
    #: as JSON); empty for the offline engine.
    server_profile: str = ""

    def loss_text(self, lead: str = "") -> str:
        """``"2 answers dropped, 3 cut at the token limit"`` after ``lead``, or ``""``."""
        parts = []
        if self.dropped:
            parts.append(f"{self.dropped} {'answer' if self.dropped == 1 else 'answers'} dropped")
        if self.cut:
            parts.append(f"{self.cut} cut at the token limit")
        return lead + ", ".join(parts) if parts else ""

    def retry_text(self) -> str:
        """``"3 retries, 2 after 429 (4.5 s)"``, or ``""`` when nothing was retried."""
        if not self.retries:
            return ""
        text = f"{self.retries} {'retry' if self.retries == 1 else 'retries'}"
        if self.rate_limit_waits:
            text += f", {self.rate_limit_waits} after 429 ({self.rate_limit_seconds:.1f} s)"
        return text

    def calls_text(self) -> str:
        """``"12 chat calls, 3456 tokens, 3 retries"`` (see :meth:`retry_text`), or ``…, no
        retries``."""
        tokens = self.prompt_tokens + self.completion_tokens
        return f"{self.calls} chat calls, {tokens} tokens, {self.retry_text() or 'no retries'}"


#: The one-click question a person is asked about each AI message, at the window and in a
#: browser alike; the answer is stored in lower case ("not sure" counts as an answer).
MOMENT_QUESTION = "How did you take {speaker}'s message?"
MOMENT_ANSWERS = ("Interesting", "Helpful", "Off-topic", "Too pushy", "Not sure")
