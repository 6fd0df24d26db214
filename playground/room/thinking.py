"""Each Inner Thoughts agent's stages at one trigger, in the paper's order: retrieval, thought
formation, evaluation, and its decision (Algorithm 1), run for the listening agents at once
(a bounded number at a time) before the room settles the floor.

A part the room holds (:class:`playground.room.room.Room` ``.thinking``), owning the limit of
agents thinking at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, TypeVar

import numpy as np

from playground import domain, errors, events
from playground.cognition.base import Rating, ThoughtDraft, placeholder_reason
from playground.events import StageName
from playground.inner_thoughts.agent import Agent, TriggerWork
from playground.inner_thoughts.memory import Pool
from playground.room.state import FATAL, RoomState
from playground.room.timeline import Timeline
from playground.room.trigger import Trigger

T = TypeVar("T")
#: Each listening agent's work and decision at a trigger, by name.
Decided: TypeAlias = dict[str, tuple[Agent, TriggerWork, domain.Decision]]


class Thinking:
    """The Inner Thoughts stages of the listening agents at one trigger."""

    def __init__(self, room: RoomState) -> None:
        self.room = room
        self._sem = asyncio.Semaphore(room.settings.room.agent_concurrency)

    async def think(
        self, t: Trigger, understood: tuple[str, domain.TurnType], turn: domain.TurnType
    ) -> Decided:
        """The Inner Thoughts stages for one trigger: retrieval, thought formation, evaluation,
        and each agent's decision (Algorithm 1), before the floor is arbitrated.

        Where the mind rates each thought on its own (one call per thought, the paper's way),
        every agent runs its stages as a pipeline (:meth:`_agent_pipeline`): each thought is
        evaluated as soon as it is formed, retained thoughts as soon as retrieval found them,
        and no agent waits for another. Otherwise (a batched evaluation lists the thoughts by
        id, and ids are given in the agents' order) every agent forms its thoughts before any
        evaluates them. Either way the bookkeeping (ids, events, scores, decisions) is done in
        the agents' fixed order once the calls are back, so the recording does not depend on
        which answer came first.
        """
        if not t.thinkers:
            return {}
        tl = t.timeline
        with tl.stage(
            "retrieval", after=tl.ids("interpretation", "turn type", "embeddings")
        ) as retrieved:
            active = self._retrieve(t, understood, turn)
        if getattr(self.room.cognition, "evaluates_alone", False):
            ratings = await self._pipelined(active, t, retrieved)
        else:
            with tl.stage("System-2 thoughts", detail="every agent", after=[retrieved]) as formed:
                await self._form(active)
            with tl.stage("evaluation", detail="every agent", after=[formed]):
                ratings = await self._bounded(Agent.evaluate, active)
        decided: Decided = {}
        for (a, w), r in zip(active, ratings, strict=True):
            decided[a.name] = (a, w, self._decide(a, w, r, t.kind))
        return decided

    async def _pipelined(
        self, active: list[tuple[Agent, TriggerWork]], t: Trigger, retrieved: int
    ) -> list[list[Rating | None] | None]:
        """Every agent's pipeline at once (a bounded number of agents at a time); then, in the
        agents' order, what the barrier-free calls found: failures reported, drafts adopted."""

        async def one(agent: Agent, work: TriggerWork) -> _Piped:
            async with self._sem:
                return await self._agent_pipeline(agent, work, t, retrieved)

        results = await asyncio.gather(*(one(a, w) for a, w in active), return_exceptions=True)
        piped: list[_Piped] = []
        for r in results:
            if isinstance(r, BaseException):
                raise r  # a fatal error (the pipeline keeps the others as its outcome)
            piped.append(r)
        # Thought formation's outcome, in the agents' order, as the two-phase flow reports it:
        # a failed formation (reported), then every agent's drafts adopted.
        for (agent, _), p in zip(active, piped, strict=True):
            if p.form_error is not None:
                self._report(agent, p.form_error)
                self.room.silence.failed += 1
        for a, w in active:
            a.adopt(w, self.room.thought_ids)
            self.room.silence.refused += len(w.refused)
        ratings: list[list[Rating | None] | None] = []
        for (agent, _), p in zip(active, piped, strict=True):
            if p.eval_error is not None:
                self._report(agent, p.eval_error)
                ratings.append(None)
            else:
                ratings.append(p.ratings)
        return ratings

    async def _agent_pipeline(self, a: Agent, w: TriggerWork, t: Trigger, retrieved: int) -> _Piped:
        """One agent's thought formation and evaluation, each call started as soon as what it
        needs is known:

        - retained thoughts are re-scored at once (retrieval found them);
        - System-1 and System-2 thoughts are formed at once, in one request each;
        - each kept draft is evaluated as soon as its request answers, while the drafts are
          embedded for the reservoir.

        The prompts are the ones the two-phase flow sends: an evaluation is shown the thought's
        text, never its id. A formation that fails drops all of the agent's new thoughts (as the
        two-phase flow does), and a failed evaluation makes it sit the trigger out.
        """
        tl = t.timeline
        rescoring = [
            self._rating(a, w, th, "re-evaluation", retrieved, tl) for th in a.retained_thoughts(w)
        ]

        async def system(n: Literal[1, 2]) -> list[tuple[ThoughtDraft, _RatingTask | None]]:
            label: StageName = "System-1 thoughts" if n == 1 else "System-2 thoughts"
            with tl.stage(label, agent=a.name, after=[retrieved]) as formed:
                drafts = await a.form_system(w, n)
            return [
                (
                    d,
                    None
                    if placeholder_reason(d.text) is not None
                    else self._rating(a, w, a.draft_thought(w, d), "evaluation", formed, tl),
                )
                for d in drafts
            ]

        out = _Piped()
        started: list[_RatingTask] = list(rescoring)
        try:
            forms = await asyncio.gather(*(system(n) for n in a.systems()), return_exceptions=True)
            parts = [f for f in forms if not isinstance(f, BaseException)]
            new = [task for part in parts for _, task in part if task is not None]
            started += new
            error = next((f for f in forms if isinstance(f, BaseException)), None)
            if error is not None:
                out.form_error = _failure(error)
                for task in new:
                    task.cancel()  # the agent's new thoughts are dropped: their ratings unused
                new = []
            else:
                by_system = dict(zip(a.systems(), parts, strict=True))
                drafts = a.sort_drafts(w, *([d for d, _ in by_system.get(n, [])] for n in (1, 2)))
                formed = tl.ids("System-1 thoughts", "System-2 thoughts")
                with tl.stage("embeddings", agent=a.name, detail="thoughts", after=formed):
                    await a.embed_drafts(w, drafts)
            got = await asyncio.gather(*new, *rescoring, return_exceptions=True)
        except BaseException:
            for task in started:
                task.cancel()
            raise
        failed = next((g for g in got if isinstance(g, BaseException)), None)
        if failed is not None:
            out.eval_error = _failure(failed)
        else:
            out.ratings = [g for g in got if not isinstance(g, BaseException)]
        return out

    def _rating(
        self,
        a: Agent,
        w: TriggerWork,
        thought: domain.Thought,
        label: StageName,
        after: int,
        tl: Timeline,
    ) -> _RatingTask:
        """One thought's evaluation, started now as a stage of its own."""

        async def rate() -> Rating | None:
            with tl.stage(label, agent=a.name, detail=thought.text, after=[after]):
                rated = await self.room.cognition.evaluate(w.ctx, [thought], w.stimuli)
            return rated[0] if rated else None

        return asyncio.ensure_future(rate())

    def _report(self, agent: Agent, exc: BaseException) -> None:
        self.room.emit(
            events.ErrorOccurred(
                where=f"{agent.name}", message=str(exc), error_type=type(exc).__name__
            )
        )

    def _retrieve(
        self, t: Trigger, understood: tuple[str, domain.TurnType], turn: domain.TurnType
    ) -> list[tuple[Agent, TriggerWork]]:
        """Retrieval: each thinker's work for this trigger, with what the latest utterance and
        its interpretation bring up from its memories and the conversation."""
        u = self.room.message_vectors[t.latest.id]
        u_interp = self.room.embedder.cached(understood[0])
        pool = self._message_pool()
        works = [
            TriggerWork(
                self.room.context(a, t.latest, t.kind, (understood[0], turn), t.silent_steps)
            )
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
        self.room.silence.failed += sum(1 for f in formed if f is None)
        for a, w in active:
            a.adopt(w, self.room.thought_ids)
            self.room.silence.refused += len(w.refused)

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
            self.room.silence.failed += 1
            return domain.Decision(
                agent=a.name,
                step=self.room.step,
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
                self._report(agent, r)
                out.append(None)
            elif isinstance(r, BaseException):
                raise r
            else:
                out.append(r)
        return out

    def _message_pool(self) -> Pool:
        """The conversation as a retrieval pool: every message, weight 1, at its step."""
        if not self.room.messages:
            return Pool.empty(self.room.embedder.dim)
        return Pool(
            refs=[m.ref for m in self.room.messages],
            texts=[f"{m.speaker}: {m.text}" for m in self.room.messages],
            vectors=np.stack([self.room.message_vectors[m.id] for m in self.room.messages]),
            weights=np.ones(len(self.room.messages), np.float32),
            taus=np.array([m.step for m in self.room.messages], np.int64),
        )


#: One thought's evaluation in flight.
_RatingTask: TypeAlias = "asyncio.Future[Rating | None]"


@dataclass
class _Piped:
    """What one agent's pipeline found: its ratings (new thoughts, then retained ones), or the
    error that stopped its formation or its evaluation (reported in the agents' order)."""

    ratings: list[Rating | None] = field(default_factory=list)
    form_error: errors.PlaygroundError | None = None
    eval_error: errors.PlaygroundError | None = None


def _failure(exc: BaseException) -> errors.PlaygroundError:
    """An error that only makes this agent sit the step out; anything else is raised (the
    server is gone, the database cannot be written, the step was cancelled, a bug)."""
    if isinstance(exc, errors.PlaygroundError) and not isinstance(exc, FATAL):
        return exc
    raise exc
