"""Benchmark 3: the offline engine, 4 agents, 15 turns: total time excluding the one-off model load.

Run: .venv/bin/python bench/bench_offline.py
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import time

from _common import REPO

from playground import events, factory, personas
from playground.room import loops
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.settings import load_settings


async def main() -> None:
    inner = MiniLMEmbedder()
    t0 = time.perf_counter()
    await inner.load()
    print(
        f"one-off model load (imports + MiniLM): {time.perf_counter() - t0:.2f} s (excluded below)"
    )
    library = personas.load_personas(REPO / "personas")
    totals = []
    for seed in range(5):
        settings = load_settings(
            {}, {"engine": "offline", "seed": seed, "max_turns": 15, "max_silent_steps": 10}
        )
        engine = await factory.build_engine(
            settings, embedder=CachingEmbedder(inner)
        )  # a cold cache every run
        room, _ = await factory.create_room(
            settings,
            engine,
            db=None,
            personas=factory.pick_personas(library, 4, seed),
            bus=events.EventBus(),
        )
        t0 = time.perf_counter()
        await loops.run_simulation(room, icebreaker=personas.load_icebreakers()[seed])
        totals.append(time.perf_counter() - t0)
        print(
            f"seed {seed}: {len(room.messages)} messages in {room.step} steps, {totals[-1]:.2f} s"
        )
    print(
        f"offline engine, 4 agents, 15 turns: median {statistics.median(totals):.2f} s per conversation "
        f"(min {min(totals):.2f}, max {max(totals):.2f}); peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )


if __name__ == "__main__":
    asyncio.run(main())
