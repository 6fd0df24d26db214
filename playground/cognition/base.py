"""The Cognition protocol: what an agent asks of a mind, in the spec's vocabulary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from playground import domain


@dataclass(frozen=True)
class Context:
    """What an agent knows about the conversation at a trigger."""

    agent: str
    persona: domain.Persona | None
    participants: list[str]
    recent: list[domain.Message]
    latest: domain.Message | None
    trigger: domain.TriggerKind
    step: int
    interpretation: str = ""
    turn_type: domain.TurnType | None = None
    own_turns: int = 0
    total_turns: int = 0
    silent_steps: int = 0
    #: The user clicked the thought to be said: articulation must say that thought.
    forced: bool = False


@dataclass(frozen=True)
class ThoughtDraft:
    text: str
    system: int
    stimuli: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Rating:
    """One evaluation as the mind returns it; the engine adds the silence factor and score."""

    rating: int
    distribution: dict[int, float]
    reasons_for: list[str]
    reasons_against: list[str]
    method: domain.ScoreMethod
    heuristics: dict[str, float] = field(default_factory=dict)


def without_name(text: str, agent: str) -> str:
    """A model's utterance without the ``Name:`` prefix it sometimes writes before it."""
    prefix = f"{agent}:"
    return text[len(prefix) :].strip() if text.startswith(prefix) else text


class Cognition(Protocol):
    """Interpretation, turn-type prediction, thought formation, evaluation, articulation."""

    name: str
    """Shown with every output: 'offline engine' or the model name."""

    async def interpret(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> str:
        """One sentence: what the speaker said in context and what they may be thinking."""
        ...

    async def predict_turn_type(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> domain.TurnType:
        """Open to anyone, or allocated to a named participant."""
        ...

    async def predict_next_speaker(
        self, recent: list[domain.Message], participants: list[str]
    ) -> domain.NextSpeakerPrediction:
        """Next-speaker baseline: who speaks after ``recent[-1]`` (a name or ``anyone``), read
        from the last 5 messages and the names only."""
        ...

    async def respond(self, ctx: Context) -> str:
        """Baseline turn: an utterance from the static persona and the conversation, no thoughts."""
        ...

    async def form_thoughts(
        self, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
    ) -> list[ThoughtDraft]:
        """System-1 thoughts from the last utterances and System-2 thoughts from the stimuli."""
        ...

    async def evaluate(
        self, ctx: Context, thoughts: list[domain.Thought], stimuli: list[domain.Stimulus]
    ) -> list[Rating | None]:
        """One rating per thought, in order; None for a thought the mind failed to rate (not scored this time)."""
        ...

    async def articulate(
        self,
        ctx: Context,
        thought: domain.Thought,
        stimuli: list[domain.Stimulus],
        *,
        proactive_tone: bool,
    ) -> str:
        """The thought as an utterance in character (restyled assertively when proactive_tone)."""
        ...
