"""The offline engine: the real Inner Thoughts algorithm with no language model and no network.

Retrieval and saliency use the real embeddings. Topic phrases come from KeyBERT on the same
MiniLM model (``topics``); thoughts are formed from the retrieved memories and recent utterances
with plain templates (``forming``); the eight heuristics are rated from measured signals
(``heuristics``); utterances come from templates that never repeat what was said and name someone
only when the thought is about them (``replies``); the next speaker is predicted by a fixed rule
(``next_speaker``). Everything it produces is labelled "offline engine". Deterministic for a
given seed: every random choice comes from a generator keyed by seed, agent, step and purpose.
"""

from __future__ import annotations

from playground import domain
from playground.cognition.base import Articulation, Context, Rating, ThoughtDraft
from playground.cognition.offline import forming, heuristics, next_speaker, replies
from playground.cognition.offline.mind import NAME, Mind

__all__ = ["NAME", "OfflineCognition"]


class OfflineCognition(Mind):
    """Inner Thoughts without a language model. See the package docstring."""

    name = NAME

    async def interpret(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> str:
        return await forming.interpret(self, message, recent, participants)

    async def predict_turn_type(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> domain.TurnType:
        return forming.turn_type(message, participants, NAME)

    async def predict_next_speaker(
        self, recent: list[domain.Message], participants: list[str]
    ) -> domain.NextSpeakerPrediction:
        return next_speaker.predict_offline(recent, participants)

    async def respond(self, ctx: Context) -> str:
        return await replies.respond(self, ctx)

    async def form_thoughts(
        self, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
    ) -> list[ThoughtDraft]:
        return await forming.form_thoughts(self, ctx, stimuli, system1=system1, system2=system2)

    async def evaluate(
        self, ctx: Context, thoughts: list[domain.Thought], stimuli: list[domain.Stimulus]
    ) -> list[Rating | None]:
        return await heuristics.evaluate(self, ctx, thoughts)

    async def articulate(self, ctx: Context, request: Articulation) -> str:
        return await replies.articulate(self, ctx, request)
