"""Benchmark 2: turn latency against a local OpenAI-compatible server that adds 300 ms per call.

Agents think concurrently, so a turn should cost about the LLM calls on its critical path
(interpretation ∥ turn type → thoughts → evaluation → articulation = 4 calls), not the sum of all
calls. Target: median turn ≤ 1.3 × 4 × 0.3 s = 1.56 s; 8 agents within 15 % of 4 agents.
Also prints calls and tokens per turn for both evaluation modes.

Run: .venv/bin/python bench/bench_turn_latency.py
"""

from __future__ import annotations

import asyncio
import statistics
import time

from _common import REPO, summary

from playground import events, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import SentenceTransformerEmbedder
from playground.settings import load_settings
from tests.support.llm_server import FakeLLMServer
from tests.support.responders import faithful_responder

LATENCY = 0.3
CRITICAL_PATH_CALLS = 4


async def run(
    srv: FakeLLMServer, embedder: CachingEmbedder, agents: int, mode: str, turns: int = 15
) -> dict[str, float]:
    settings = load_settings(
        {},
        {
            "engine": "openai",
            "base_url": srv.base_url,
            "api_key": "bench",
            "model": "fake-model",
            "max_turns": turns,
            "seed": 7,
            "evaluation_mode": mode,
            "concurrency": 16,
            "max_silent_steps": 60,
            # a talkative preset, so that 15 turns are reached with the server's arbitrary ratings
            "preset": "active-contributor",
        },
    )
    engine = await factory.build_engine(settings, embedder=embedder)
    bus = events.EventBus()
    steps: list[dict[str, float]] = []

    def on(e: object) -> None:
        kind = getattr(e, "kind", "")
        c = engine.client.counts if engine.client else None
        if kind in ("trigger_fired", "session_finished") and steps and "end" not in steps[-1]:
            last = steps[-1]
            last["end"] = time.perf_counter()
            last["calls"] = c.calls - last["calls0"]
            last["tokens"] = c.prompt_tokens + c.completion_tokens - last["tokens0"]
        if kind == "trigger_fired":
            steps.append(
                {
                    "start": time.perf_counter(),
                    "calls0": c.calls,
                    "tokens0": c.prompt_tokens + c.completion_tokens,
                    "new": float(e.trigger == "new_message"),
                    "spoke": 0.0,
                }
            )  # type: ignore[attr-defined]
        elif kind == "message_posted" and steps and "end" not in steps[-1]:
            steps[-1]["spoke"] = 1.0
            steps[-1]["turn"] = time.perf_counter() - steps[-1]["start"]

    bus.subscribe(on)
    library = personas.load_personas(REPO / "personas")
    room, _ = await factory.create_room(
        settings, engine, db=None, personas=factory.pick_personas(library, agents, 7), bus=bus
    )
    t0 = time.perf_counter()
    await room.run_simulation(icebreaker="What did you do last weekend?")
    total = time.perf_counter() - t0
    await engine.close()
    turns = [s["turn"] for s in steps if s["spoke"]]
    replied = [s for s in steps if s["spoke"] and s["new"]]
    return {
        "median_turn": statistics.median(turns),
        "turns": len(room.messages) - 1,
        "steps": room.step,
        "total": total,
        "calls": statistics.mean(s["calls"] for s in replied),
        "tokens": statistics.mean(s["tokens"] for s in replied),
        "summary": summary(turns, "s", 1.0),
    }


async def main() -> None:
    embedder = CachingEmbedder(SentenceTransformerEmbedder())
    await embedder.inner.load()  # one-off model load, outside every figure
    target = 1.3 * CRITICAL_PATH_CALLS * LATENCY
    with FakeLLMServer(latency=LATENCY) as srv:
        srv.set_responder(faithful_responder)
        results = {}
        for agents in (4, 8):
            for mode in ("batched", "per-thought"):
                r = await run(srv, embedder, agents, mode)
                results[(agents, mode)] = r
                L = agents - 1
                bound = f"≤ {2 + 2 * L + 1}" if mode == "batched" else f"paper/authors: {2 + 5 * L}"
                print(f"{agents} agents, {mode:<11}: turn {r['summary']}")
                print(
                    f"    {r['turns']} replies in {r['steps']} steps, {r['total']:.1f} s; per answered message: {r['calls']:.1f} chat calls "
                    f"({bound} for L={L} listeners), {r['tokens']:.0f} tokens; 0 remote embedding requests"
                )
        b4, b8 = results[(4, "batched")]["median_turn"], results[(8, "batched")]["median_turn"]
        print(
            f"\nmedian turn, 4 agents batched: {b4:.2f} s (target ≤ {target:.2f} s = 1.3 × {CRITICAL_PATH_CALLS} calls × {LATENCY} s)"
        )
        print(
            f"median turn, 8 agents batched: {b8:.2f} s ({(b8 / b4 - 1) * 100:+.1f} % vs 4 agents; target within 15 %)"
        )


if __name__ == "__main__":
    asyncio.run(main())
