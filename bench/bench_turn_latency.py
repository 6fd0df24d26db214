"""Benchmark 2: turn latency against a local OpenAI-compatible server that adds 300 ms per call.

Agents think concurrently, so a turn should cost about the LLM calls on its critical path
(interpretation ∥ turn type → thoughts → evaluation → articulation = 4 calls), not the sum of all
calls. Target: median turn ≤ 1.3 × 4 × 0.3 s = 1.56 s; 8 agents within 15 % of 4 agents, per
posted message *including silent steps* (a run's time divided by the messages it posted).
Also prints calls and tokens per turn for both evaluation modes, and the command line's start-up:
time from launching ``playground simulate`` to its first trigger.

The server runs in a process of its own, as a real one would: in this process its work would
compete with the agents for the interpreter lock and inflate the figures with more agents.

Run: .venv/bin/python bench/bench_turn_latency.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

from pathlib import Path
from typing import Any

from _common import REPO, llm_server, summary

from playground import events, factory, personas
from playground.room import loops
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.settings import load_settings

LATENCY = 0.3
CRITICAL_PATH_CALLS = 4


def startup(base_url: str, agents: int) -> tuple[float, float, float]:
    """Seconds from launching ``playground simulate`` to its first trigger (the icebreaker is
    printed as it is posted; the trigger follows at once), to the first agent's message, and to
    the end of the run."""
    db = Path(tempfile.mkdtemp()) / "startup.db"
    argv = [sys.executable, "-m", "playground", "simulate", "--engine", "openai"]
    argv += ["--base-url", base_url, "--api-key", "bench", "--model", "fake-model"]
    argv += ["--agents", str(agents), "--turns", "3", "--seed", "7", "--db", str(db)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
    )
    first = second = float("nan")
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("[ 1/"):
            first = time.perf_counter() - t0
        elif line.startswith("[ 2/"):
            second = time.perf_counter() - t0
    proc.wait()
    return first, second, time.perf_counter() - t0


def model_load() -> float:
    """Seconds a fresh process takes to import torch and load MiniLM (what start-up overlaps)."""
    code = (
        "import time; t = time.perf_counter();"
        "from playground.embedding.minilm import MiniLMEmbedder as S;"
        "S().load_sync(); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


async def run(
    base_url: str, embedder: CachingEmbedder, agents: int, mode: str, turns: int = 15
) -> dict[str, float]:
    settings = load_settings(
        {},
        {
            "engine": "openai",
            "base_url": base_url,
            "api_key": "bench",
            "model": "fake-model",
            "max_turns": turns,
            "seed": 7,
            "evaluation_mode": mode,
            "max_silent_steps": 60,
            # a talkative preset, so that 15 turns are reached with the server's arbitrary ratings
            "preset": "active-contributor",
        },
    )
    engine = await factory.build_engine(settings, embedder=embedder)
    bus = events.EventBus()
    steps: list[dict[str, float]] = []

    candidates: dict[tuple[int, str], int] = {}  # (step, agent) → thoughts rated

    def on(e: Any) -> None:
        kind = getattr(e, "kind", "")
        client = engine.client
        assert client is not None, "the bench runs against a server"
        c = client.counts
        if kind == "thought_evaluated":
            key = (e.step, e.agent)
            candidates[key] = candidates.get(key, 0) + 1
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
            )
        elif kind == "message_posted" and steps and "end" not in steps[-1]:
            steps[-1]["spoke"] = 1.0
            steps[-1]["turn"] = time.perf_counter() - steps[-1]["start"]

    bus.subscribe(on)
    library = personas.load_personas(REPO / "personas")
    room, _ = await factory.create_room(
        settings, engine, db=None, personas=factory.pick_personas(library, agents, 7), bus=bus
    )
    t0 = time.perf_counter()
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    total = time.perf_counter() - t0
    await engine.close()
    turn_times = [s["turn"] for s in steps if s["spoke"]]
    replied = [s for s in steps if s["spoke"] and s["new"]]
    return {
        "median_turn": statistics.median(turn_times),
        "turns": len(room.messages) - 1,
        "steps": room.step,
        "total": total,
        "per_message": total / max(1, len(room.messages) - 1),
        "calls": statistics.mean(s["calls"] for s in replied),
        "tokens": statistics.mean(s["tokens"] for s in replied),
        "summary": summary(turn_times, "s", 1.0),
        "candidates": statistics.mean(candidates.values()) if candidates else 0.0,
    }


async def main() -> None:
    minilm = MiniLMEmbedder()
    embedder = CachingEmbedder(minilm)
    await minilm.load()  # one-off model load, outside every figure but start-up's
    target = 1.3 * CRITICAL_PATH_CALLS * LATENCY
    with llm_server(LATENCY) as base_url:
        print(f"model load alone, fresh process: {model_load():.1f} s")
        for agents in (4, 8):
            first, second, total = startup(base_url, agents)
            print(
                f"start-up, {agents} agents: first trigger {first:.1f} s after launch,"
                f" first agent message {second:.1f} s ({total:.1f} s for 3 turns)"
            )
        results = {}
        for agents in (4, 8):
            for mode in ("per-thought", "batched"):
                r = await run(base_url, embedder, agents, mode)
                results[(agents, mode)] = r
                L = agents - 1
                bound = f"≤ {2 + 3 * L + 1}" if mode == "batched" else f"paper/authors: {2 + 5 * L}"
                print(
                    f"{agents} agents, {mode:<11}: {r['per_message']:.2f} s per posted message, silent steps included;"
                    f" spoken turn {r['summary']}"
                )
                print(
                    f"    {r['turns']} replies in {r['steps']} steps, {r['total']:.1f} s; per answered message: {r['calls']:.1f} chat calls "
                    f"({bound} for L={L} listeners), {r['tokens']:.0f} tokens; 0 remote embedding requests;"
                    f" {r['candidates']:.1f} candidate thoughts rated per agent per trigger"
                )
        for mode in ("per-thought", "batched"):
            m4, m8 = results[(4, mode)]["per_message"], results[(8, mode)]["per_message"]
            t4 = results[(4, mode)]["median_turn"]
            print(
                f"\n{mode}: per posted message {m4:.2f} s (4 agents) → {m8:.2f} s (8 agents),"
                f" {(m8 / m4 - 1) * 100:+.1f} % (target within 15 %); median spoken turn, 4 agents:"
                f" {t4:.2f} s (target ≤ {target:.2f} s = 1.3 × {CRITICAL_PATH_CALLS} calls × {LATENCY} s)"
            )


if __name__ == "__main__":
    asyncio.run(main())
