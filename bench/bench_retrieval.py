"""Benchmark 1: retrieval over 10,000 long-term memories per trigger, embeddings cached.

Target: median under 5 ms per agent per trigger. Run: .venv/bin/python bench/bench_retrieval.py
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time

from _common import summary

from playground import domain
from playground.inner_thoughts.agent import Agent, TriggerWork
from playground.cognition.base import Context
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.inner_thoughts.memory import Pool
from playground.settings import PRESETS, RoomSettings

SUBJECTS = [
    "I",
    "My sister",
    "My old friend",
    "Our neighbour",
    "My team",
    "My grandmother",
    "A colleague",
    "My partner",
]
VERBS = [
    "loves",
    "once visited",
    "talks about",
    "is learning",
    "hates",
    "dreams of",
    "keeps photos of",
    "writes about",
]
OBJECTS = [
    "surfing in Portugal",
    "baking sourdough",
    "jazz records",
    "the mountains of Peru",
    "old film cameras",
    "chess openings",
    "growing tomatoes",
    "night trains",
    "Korean cooking",
    "vintage bicycles",
    "rock climbing",
    "medieval history",
    "board games",
    "sea swimming",
    "modern architecture",
    "street photography",
    "birdwatching",
    "marathon training",
    "pottery",
    "astronomy",
]
WHEN = [
    "every weekend",
    "since childhood",
    "last summer",
    "on rainy days",
    "after work",
    "with friends",
    "alone",
    "in winter",
]


async def main() -> None:
    rng = random.Random(0)
    texts = list(
        dict.fromkeys(
            f"{s} {v} {o} {w}." for s, v, o, w in itertools.product(SUBJECTS, VERBS, OBJECTS, WHEN)
        )
    )
    rng.shuffle(texts)
    texts = texts[:10_000]
    embedder = CachingEmbedder(MiniLMEmbedder())
    t0 = time.perf_counter()
    await embedder.embed(texts)
    print(
        f"embedded {len(texts)} memories once in {time.perf_counter() - t0:.1f} s (cached from here on)"
    )

    persona = domain.Persona(id="bench", name="Bench", facts=["I am a benchmark."])
    agent = Agent(
        persona,
        PRESETS["simulation"],
        cognition=None,  # type: ignore[arg-type]  # retrieval only: no thinking step runs
        embedder=embedder,
        memory_ids=itertools.count(1),
        room_settings=RoomSettings(creativity_prob=0.0),
        seed=0,
        emit=lambda e: None,
    )
    await agent.memory.add_many([("experience", t, rng.uniform(0.3, 1.0)) for t in texts])
    utterances = [f"Has anyone here tried {o} {w}?" for o in OBJECTS for w in WHEN][:200]
    interps = [f"Someone wants to hear about {o}." for o in OBJECTS for _ in WHEN][:200]
    uvecs = await embedder.embed(utterances)
    ivecs = await embedder.embed(interps)
    messages = Pool.empty(embedder.dim)
    agent.memory.pool()  # the matrix is built once after loading, then reused
    times, found = [], []
    for step, (u, ui) in enumerate(zip(uvecs, ivecs, strict=True), start=1):
        latest = domain.Message(id=step, speaker="X", text=utterances[step - 1], step=step, at="")
        work = TriggerWork(
            Context(
                agent="Bench",
                persona=persona,
                participants=["Bench", "X"],
                recent=[],
                latest=latest,
                trigger="new_message",
                step=step,
            )
        )
        t0 = time.perf_counter()
        agent.retrieve(work, messages, u, ui)
        times.append(time.perf_counter() - t0)
        found.append(len(work.stimuli))
    print(
        f"retrieval over {len(agent.memory)} memories per trigger: {summary(times)}  (target: median < 5 ms)"
    )
    print(f"stimuli returned per trigger: mean {sum(found) / len(found):.1f} (capped at 8)")


if __name__ == "__main__":
    asyncio.run(main())
