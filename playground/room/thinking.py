"""Each Inner Thoughts agent's stages at one trigger, in the paper's order: retrieval, thought
formation, evaluation, and its decision (Algorithm 1), run for the listening agents at once
(a bounded number at a time) before the room settles the floor.

A part of the room (:class:`playground.room.room.Room` inherits it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeAlias, TypeVar

import numpy as np

from playground import domain, errors, events
from playground.cognition.base import Rating
from playground.inner_thoughts.agent import Agent, TriggerWork
from playground.inner_thoughts.memory import Pool
from playground.room.state import FATAL, RoomState
from playground.room.trigger import Trigger

T = TypeVar("T")
#: Each listening agent's work and decision at a trigger, by name.
Decided: TypeAlias = dict[str, tuple[Agent, TriggerWork, domain.Decision]]


class Thinking(RoomState):
    """The Inner Thoughts stages of the listening agents at one trigger."""

    async def _think(
        self, t: Trigger, understood: tuple[str, domain.TurnType], turn: domain.TurnType
    ) -> Decided:
        """The Inner Thoughts stages for one trigger: retrieval, thought formation, evaluation,
        and each agent's decision (Algorithm 1), before the floor is arbitrated."""
        if not t.thinkers:
            return {}
        active = self._retrieve(t, understood, turn)
        await self._form(active)
        ratings = await self._bounded(Agent.evaluate, active)
        decided: Decided = {}
        for (a, w), r in zip(active, ratings, strict=True):
            decided[a.name] = (a, w, self._decide(a, w, r, t.kind))
        return decided

    def _retrieve(
        self, t: Trigger, understood: tuple[str, domain.TurnType], turn: domain.TurnType
    ) -> list[tuple[Agent, TriggerWork]]:
        """Retrieval: each thinker's work for this trigger, with what the latest utterance and
        its interpretation bring up from its memories and the conversation."""
        u = self._msg_vec[t.latest.id]
        u_interp = self.embedder.cached(understood[0])
        pool = self._message_pool()
        works = [
            TriggerWork(self._context(a, t.latest, t.kind, (understood[0], turn), t.silent_steps))
            for a in t.thinkers
        ]
        for a, w in zip(t.thinkers, works, strict=True):
            a.retrieve(w, pool, u, u_interp)
        return list(zip(t.thinkers, works, strict=True))

    async def _form(self, active: list[tuple[Agent, TriggerWork]]) -> None:
        """Thought formation: each agent drafts thoughts (a bounded number at once) and adopts
        the usable ones into its reservoir."""
        # An agent whose thought formation failed still re-scores its retained thoughts.
        formed = await self._bounded(Agent.form, active)
        self.silence.failed += sum(1 for f in formed if f is None)
        for a, w in active:
            a.adopt(w, self._thought_ids)
            self.silence.refused += len(w.refused)

    def _decide(
        self,
        a: Agent,
        w: TriggerWork,
        ratings: list[Rating | None] | None,
        trigger: domain.TriggerKind,
    ) -> domain.Decision:
        """Evaluation's scores and the agent's decision (Algorithm 1); silent when its thoughts
        could not be evaluated."""
        if ratings is None:
            self.silence.failed += 1
            return domain.Decision(
                agent=a.name,
                step=self.step,
                trigger=trigger,
                action="silent",
                reason="could not evaluate its thoughts (see error)",
            )
        a.score(w, ratings)
        return a.decide(w)

    async def _bounded(
        self,
        stage: Callable[[Agent, TriggerWork], Awaitable[T]],
        pairs: list[tuple[Agent, TriggerWork]],
    ) -> list[T | None]:
        """Run one stage for several agents concurrently; an agent whose mind fails sits this trigger out."""

        async def one(agent: Agent, work: TriggerWork) -> T:
            async with self._sem:
                # The coroutine is made only once the agent's turn comes: nothing is left un-awaited
                # when a newer trigger cancels the stage.
                return await stage(agent, work)

        results = await asyncio.gather(*(one(a, w) for a, w in pairs), return_exceptions=True)
        out: list[T | None] = []
        for (agent, _), r in zip(pairs, results, strict=True):
            if isinstance(r, asyncio.CancelledError):
                raise r
            if isinstance(r, FATAL):
                raise r
            if isinstance(r, errors.PlaygroundError):
                self.emit(
                    events.ErrorOccurred(
                        where=f"{agent.name}", message=str(r), error_type=type(r).__name__
                    )
                )
                out.append(None)
            elif isinstance(r, BaseException):
                raise r
            else:
                out.append(r)
        return out

    def _message_pool(self) -> Pool:
        """The conversation as a retrieval pool: every message, weight 1, at its step."""
        if not self.messages:
            return Pool.empty(self.embedder.dim)
        return Pool(
            refs=[m.ref for m in self.messages],
            texts=[f"{m.speaker}: {m.text}" for m in self.messages],
            vectors=np.stack([self._msg_vec[m.id] for m in self.messages]),
            weights=np.ones(len(self.messages), np.float32),
            taus=np.array([m.step for m in self.messages], np.int64),
        )
