"""An Inner Thoughts agent: persona, long-term memory, thought reservoir and proactivity settings.

The room drives an agent through the stages of a trigger (retrieval → thought formation →
evaluation → participation); each stage publishes its events. Stages that wait on a mind are
``async``; bookkeeping stages are plain methods the room calls in a fixed agent order, so ids and
events are reproducible whatever order concurrent calls finish in.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from playground import domain, events
from playground.cognition import scoring
from playground.cognition.base import (
    Articulation,
    Cognition,
    Context,
    Rating,
    ThoughtDraft,
    placeholder_reason,
)
from playground.domain.refs import parse_ref, ref_kind
from playground.embedding.cache import CachingEmbedder
from playground.inner_thoughts import memory, participation
from playground.inner_thoughts.reservoir import ThoughtReservoir
from playground.settings import ProactivitySettings, RoomSettings

STIMULUS_LIMIT = 8


@dataclass
class TriggerWork:
    """What one agent holds between the stages of one trigger."""

    ctx: Context
    stimuli: list[domain.Stimulus] = field(default_factory=list)
    retained: list[int] = field(default_factory=list)
    drafts: list[tuple[ThoughtDraft, np.ndarray]] = field(default_factory=list)
    #: Drafts that said nothing (empty, "...", a slot copied from the prompt), with the reason:
    #: never adopted, evaluated or spoken; published as ThoughtRefused by :meth:`Agent.adopt`.
    refused: list[tuple[ThoughtDraft, str]] = field(default_factory=list)
    new: list[domain.Thought] = field(default_factory=list)
    scored: list[participation.Scored] = field(default_factory=list)


class Agent:
    """One AI participant."""

    kind: domain.ParticipantKind = "ai"

    def __init__(
        self,
        persona: domain.Persona,
        proactivity: ProactivitySettings,
        *,
        cognition: Cognition,
        embedder: CachingEmbedder,
        memory_ids: Iterator[int],
        room_settings: RoomSettings,
        seed: int,
        emit: Callable[[events.BaseEvent], None],
        policy: domain.Policy = "inner-thoughts",
    ) -> None:
        self.persona = persona
        #: How this agent takes turns: Inner Thoughts, or a baseline (see :mod:`playground.room.room`).
        self.policy: domain.Policy = policy
        self.name = persona.name
        self.proactivity = proactivity
        self.cognition = cognition
        self._embedder = embedder
        self._settings = room_settings
        self._seed = seed
        self._emit = emit
        self.memory = memory.MemoryStore(self.name, embedder, memory_ids, emit)
        self.reservoir = ThoughtReservoir(self.name, emit)
        self.last_spoke = 0
        self.turns = 0
        self._wm_tau: dict[int, int] = {}

    def rng(self, step: int, purpose: str) -> random.Random:
        """A generator that depends only on seed, agent, step and purpose: no scheduling effects."""
        return random.Random(f"{self._seed}:{self.name}:{step}:{purpose}")

    async def load_persona(self) -> None:
        rows: list[tuple[domain.MemoryKind, str, float]] = [
            ("fact", f, 1.0) for f in self.persona.facts
        ]
        rows += [(m.kind, m.text, m.weight) for m in self.persona.memories]
        await self.memory.add_many(rows)

    # -- retrieval -------------------------------------------------------------------------------

    def retrieve(
        self, work: TriggerWork, messages: memory.Pool, u: np.ndarray, u_interp: np.ndarray | None
    ) -> None:
        """Find salient long-term memories, utterances and earlier thoughts; refresh their τ."""
        t = work.ctx.step
        s = self._settings
        latest = work.ctx.latest.ref if work.ctx.latest else None
        wm = memory.Pool(
            refs=messages.refs,
            texts=messages.texts,
            vectors=messages.vectors,
            weights=messages.weights,
            taus=np.array(
                [
                    self._wm_tau.get(parse_ref(r)[1], int(tau))
                    for r, tau in zip(messages.refs, messages.taus, strict=True)
                ],
                np.int64,
            ),
        )
        found: list[domain.Stimulus] = []
        for pool in (self.memory.pool(), wm, self.reservoir.pool(self._embedder.dim)):
            for i, sal in memory.salient(
                pool,
                u,
                u_interp,
                t,
                threshold=s.saliency_threshold,
                decay=s.memory_decay,
                limit=STIMULUS_LIMIT,
            ):
                if pool.refs[i] != latest:
                    found.append(
                        domain.Stimulus(
                            ref=pool.refs[i], text=pool.texts[i], saliency=round(sal, 4)
                        )
                    )
        found.sort(key=lambda st: -st.saliency)
        found = found[:STIMULUS_LIMIT]
        rng = self.rng(t, "creativity")
        if self.memory.items and rng.random() < s.creativity_prob:
            # "Creativity": now and then, pull in one random long-term memory even if it is not
            # salient. Never because nothing was: then the agent thinks from the conversation
            # and its reservoir, as the paper does.
            pool = self.memory.pool()
            taken = {st.ref for st in found}
            options = [i for i, r in enumerate(pool.refs) if r not in taken]
            if options:
                i = rng.choice(options)
                cosine = float(pool.vectors[i] @ u)
                sal = scoring.saliency(
                    cosine,
                    float(pool.vectors[i] @ u_interp) if u_interp is not None else -1.0,
                    float(pool.weights[i]),
                    t,
                    int(pool.taus[i]),
                    s.memory_decay,
                )
                found.append(
                    domain.Stimulus(
                        ref=pool.refs[i],
                        text=pool.texts[i],
                        saliency=round(sal, 4),
                        random=True,
                        cosine=round(cosine, 4),
                    )
                )
        refs = [(st.ref, *parse_ref(st.ref)) for st in found]
        self.memory.touch([r for r, kind, _ in refs if kind == "memory"], t)
        for _, kind, number in refs:
            if kind == "message":
                self._wm_tau[number] = t
        # Retained thoughts to re-score: the most salient few (``found`` is sorted by saliency).
        work.retained = [n for _, kind, n in refs if kind == "thought"][: s.max_retained]
        self.reservoir.touch(work.retained, t)
        work.stimuli = found
        self._emit(events.MemoriesRetrieved(agent=self.name, stimuli=found, step=t))

    # -- thought formation -----------------------------------------------------------------------

    async def form(self, work: TriggerWork) -> int:
        """Form System-1 thoughts from the conversation alone (docs/spec.md §1.3: quick, no
        memories) and System-2 thoughts from every stimulus, in separate requests run together.

        Drafts that say nothing (:func:`placeholder_reason`) are set aside in ``work.refused``:
        they are never embedded, adopted or evaluated.

        Returns:
            How many drafts were kept.
        """
        parts = await asyncio.gather(self.form_system(work, 1), self.form_system(work, 2))
        drafts = self.sort_drafts(work, parts[0], parts[1])
        await self.embed_drafts(work, drafts)
        return len(drafts)

    def systems(self) -> list[Literal[1, 2]]:
        """The systems this agent forms thoughts of at a trigger (a count of 0 asks nothing)."""
        p = self.proactivity
        return [s for s, n in ((1, p.system1_count), (2, p.system2_count)) if n]  # type: ignore[misc]

    async def form_system(self, work: TriggerWork, system: Literal[1, 2]) -> list[ThoughtDraft]:
        """One system's drafts: System 1 from the messages that came to mind, System 2 from
        every stimulus (one request each)."""
        p = self.proactivity
        if system == 1:
            if not p.system1_count:
                return []
            quick = [st for st in work.stimuli if ref_kind(st.ref) == "message"]
            return await self.cognition.form_thoughts(
                work.ctx, quick, system1=p.system1_count, system2=0
            )
        if not p.system2_count:
            return []
        return await self.cognition.form_thoughts(
            work.ctx, work.stimuli, system1=0, system2=p.system2_count
        )

    @staticmethod
    def sort_drafts(
        work: TriggerWork, system1: list[ThoughtDraft], system2: list[ThoughtDraft]
    ) -> list[ThoughtDraft]:
        """The drafts worth keeping, System 1 first; the ones that say nothing go to
        ``work.refused`` with the reason, in the order the mind gave them."""
        kept: list[ThoughtDraft] = []
        for d in (*system1, *system2):
            why = placeholder_reason(d.text)
            if why is None:
                kept.append(d)
            else:
                work.refused.append((d, why))
        return kept

    async def embed_drafts(self, work: TriggerWork, drafts: list[ThoughtDraft]) -> None:
        """Embed the kept drafts (one request, in order) and hold them for :meth:`adopt`."""
        vecs = (
            await self._embedder.embed([d.text for d in drafts])
            if drafts
            else np.zeros((0, self._embedder.dim), np.float32)
        )
        work.drafts = list(zip(drafts, vecs, strict=True))

    def draft_thought(self, work: TriggerWork, draft: ThoughtDraft) -> domain.Thought:
        """A kept draft as the thought it will become, before it has an id: what an evaluation
        that starts before adoption is shown (the text and system; the id is given later, in
        the agents' fixed order, by :meth:`adopt`)."""
        return domain.Thought(
            id=0,
            agent=self.name,
            text=_shorten(draft.text),
            system=1 if draft.system == 1 else 2,
            stimuli=[],
            saliency=0.0,
            created_step=work.ctx.step,
            last_access=work.ctx.step,
            origin=self.cognition.name,
        )

    def retained_thoughts(self, work: TriggerWork) -> list[domain.Thought]:
        """The retained thoughts to re-score at this trigger (known as soon as retrieval ends)."""
        return [self.reservoir.get(i) for i in work.retained if i in self.reservoir]

    def adopt(self, work: TriggerWork, ids: Iterator[int]) -> None:
        """Turn drafts into numbered thoughts in the reservoir (publishes ThoughtFormed); the
        refused drafts are published first (ThoughtRefused), in the order the mind gave them."""
        for draft, why in work.refused:
            self._emit(
                events.ThoughtRefused(
                    agent=self.name, text=draft.text, reason=why, step=work.ctx.step
                )
            )
        known = {st.ref: st for st in work.stimuli}
        recent = {m.ref for m in work.ctx.recent}
        if work.ctx.latest:
            recent.add(work.ctx.latest.ref)
        for draft, vec in work.drafts:
            refs = (r.strip().strip("[]").strip() for r in draft.stimuli)  # "[memory:3]" too
            stimuli = [r for r in dict.fromkeys(refs) if r in known or r in recent]
            sal = max(0.0, max((known[r].saliency for r in stimuli if r in known), default=0.0))
            thought = domain.Thought(
                id=next(ids),
                agent=self.name,
                text=_shorten(draft.text),
                system=1 if draft.system == 1 else 2,
                stimuli=stimuli,
                saliency=round(sal, 4),
                created_step=work.ctx.step,
                last_access=work.ctx.step,
                origin=self.cognition.name,
            )
            self.reservoir.add(thought, vec)
            work.new.append(thought)

    # -- evaluation ------------------------------------------------------------------------------

    def to_evaluate(self, work: TriggerWork) -> list[domain.Thought]:
        """New thoughts plus retained ones that became salient again."""
        new_ids = {t.id for t in work.new}
        retained = [
            self.reservoir.get(i) for i in work.retained if i in self.reservoir and i not in new_ids
        ]
        return work.new + retained

    async def evaluate(self, work: TriggerWork) -> list[Rating | None]:
        thoughts = self.to_evaluate(work)
        return await self.cognition.evaluate(work.ctx, thoughts, work.stimuli) if thoughts else []

    def score(self, work: TriggerWork, ratings: list[Rating | None]) -> None:
        """Apply the silence factor, store scores and publish ThoughtEvaluated."""
        t = work.ctx.step
        d_p = scoring.silence_factor(t, self.last_spoke, self._settings.silence_factor)
        new_ids = {th.id for th in work.new}
        for thought, r in zip(self.to_evaluate(work), ratings, strict=True):
            if r is None:
                continue
            expected = scoring.expected_rating(r.distribution)
            score = round(expected * d_p, 4)
            ev = domain.Evaluation(
                thought_id=thought.id,
                step=t,
                rating=r.rating,
                distribution=r.distribution,
                reasons_for=r.reasons_for,
                reasons_against=r.reasons_against,
                heuristics=r.heuristics,
                expected=round(expected, 4),
                silence_factor=round(d_p, 4),
                score=score,
                method=r.method,
                samples=r.samples,
            )
            current = self.reservoir.get(thought.id)
            if thought.id not in new_ids:
                stim = {st.ref: st.saliency for st in work.stimuli}
                current = current.model_copy(
                    update={"saliency": stim.get(thought.ref, current.saliency)}
                )
            self.reservoir.update(current.model_copy(update={"score": score}))
            work.scored.append(participation.Scored(thought.id, thought.system, score))
            self._emit(
                events.ThoughtEvaluated(
                    agent=self.name,
                    evaluation=ev,
                    saliency=current.saliency,
                    retained=thought.id not in new_ids,
                    step=t,
                )
            )

    # -- participation ---------------------------------------------------------------------------

    def decide(self, work: TriggerWork) -> domain.Decision:
        decision = participation.decide(
            agent=self.name,
            step=work.ctx.step,
            trigger=work.ctx.trigger,
            thoughts=work.scored,
            turn_type=work.ctx.turn_type,
            settings=self.proactivity,
            rng=self.rng(work.ctx.step, "system1"),
        )
        if not work.scored and work.refused:
            n = len(work.refused)
            why = (
                f"no thoughts to express: the {n} thought{'s' if n > 1 else ''} the mind formed"
                f" {'were' if n > 1 else 'was'} refused ({work.refused[0][1]})"
            )
            decision = decision.model_copy(update={"reason": why})
        return decision

    async def articulate(self, ctx: Context, thought: domain.Thought) -> str:
        stimuli = self._stimuli_of(thought, {m.id: m for m in ctx.recent})
        request = Articulation(thought, stimuli, proactive_tone=self.proactivity.proactive_tone)
        return await self.cognition.articulate(ctx, request)

    async def respond(self, ctx: Context) -> str:
        """A baseline turn: an answer from the static persona and the conversation, no thoughts."""
        return await self.cognition.respond(ctx)

    def _stimuli_of(
        self, thought: domain.Thought, by_id: dict[int, domain.Message], depth: int = 2
    ) -> list[domain.Stimulus]:
        """The memories, messages and thoughts a thought came from; an evolved thought also brings its roots."""
        out: list[domain.Stimulus] = []
        for ref in thought.stimuli:
            kind, num = parse_ref(ref)
            if kind == "memory" and num in self.memory.items:
                out.append(
                    domain.Stimulus(
                        ref=ref, text=self.memory.items[num].text, saliency=thought.saliency
                    )
                )
            elif kind == "message" and num in by_id:
                m = by_id[num]
                out.append(
                    domain.Stimulus(
                        ref=ref, text=f"{m.speaker}: {m.text}", saliency=thought.saliency
                    )
                )
            elif kind == "thought" and num in self.reservoir:
                root = self.reservoir.get(num)
                out.append(domain.Stimulus(ref=ref, text=root.text, saliency=thought.saliency))
                if depth > 0:
                    out.extend(self._stimuli_of(root, by_id, depth - 1))
        return out

    def expressed(self, thought_id: int, message_id: int, step: int) -> None:
        th = self.reservoir.get(thought_id)
        self.reservoir.update(th.model_copy(update={"expressed_in": message_id}))
        self.last_spoke = step  # (``turns`` is counted once, by Room.post, for every speaker)


def _shorten(text: str, limit: int = 14) -> str:
    """Thoughts stay under 15 words (docs/spec.md §1.3); longer output is cut at a word boundary."""
    words = text.strip().split()
    if len(words) <= limit:
        return " ".join(words)
    return " ".join(words[:limit]).rstrip(",;:") + "…"
