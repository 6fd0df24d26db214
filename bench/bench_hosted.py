"""Benchmark: what a posted message costs against a hosted-style API, through the command line.

The stand-in is ``testbed.llm_server_async`` answering like an instruction-following model, in a
process of its own, reached at a hostname that is not local (``api.standin.test``, resolved to
127.0.0.1 by the stub in ``testbed/hosted_dns``), so the client treats it as a hosted API: its
timeouts and its starting concurrency. Two stand-ins:

* **fixed**: every call costs the same ``--latency`` (0.4 s), so seconds ÷ latency counts the
  dependent waves a message takes;
* **per-token**: the same plus ``--per-token`` (3 ms) per completion token, closer to a real API.

Each run is ``playground simulate --engine openai`` with default settings (per-thought
evaluation, ``--llm-concurrency auto``), 5 turns, seed 2 unless told. The figures, per posted
message after the icebreaker, are read from the session database (the messages' times) and the
stand-in's call log: seconds, calls, calls in flight while the server was busy, and the depth
(seconds ÷ the mean call time). The trigger breakdown (where each trigger's time went, the
critical path's calls) comes from the session's recorded timings (``playground show``).

Run: .venv/bin/python bench/bench_hosted.py [--agents 4,8] [--runs 3] [--per-token 0.003]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from _common import REPO

HOST = "api.standin.test"
STUB = REPO / "testbed" / "hosted_dns"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONPATH"] = os.pathsep.join([str(STUB), str(REPO)])
    return env


def start_standin(latency: float, per_token: float, log: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "testbed.llm_server_async", "--faithful"]
    argv += ["--latency", str(latency), "--per-token", str(per_token), "--log", str(log)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    return proc, url.replace("127.0.0.1", HOST)


def _ts(at: str) -> float:
    return datetime.fromisoformat(at).timestamp()


def in_flight_while_busy(rows: list[dict[str, float]]) -> float:
    """Mean calls in flight over the time at least one was."""
    marks = sorted([(r["start"], 1) for r in rows] + [(r["end"], -1) for r in rows])
    busy = area = 0.0
    level, last = 0, None
    for t, d in marks:
        if last is not None and level > 0:
            busy += t - last
            area += level * (t - last)
        level += d
        last = t
    return area / busy if busy else 0.0


def one_run(
    agents: int, turns: int, seed: int, latency: float, per_token: float, extra: list[str]
) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp())
    log = tmp / "calls.jsonl"
    proc, url = start_standin(latency, per_token, log)
    db = tmp / "run.db"
    argv = [sys.executable, "-m", "playground", "simulate", "--engine", "openai"]
    argv += ["--base-url", url, "--api-key", "bench", "--model", "standin"]
    argv += ["--agents", str(agents), "--turns", str(turns), "--seed", str(seed)]
    argv += ["--db", str(db), "--quiet", *extra]
    try:
        t0 = time.perf_counter()
        out = subprocess.run(argv, cwd=REPO, env=_env(), capture_output=True, text=True)
        wall = time.perf_counter() - t0
    finally:
        proc.kill()
        proc.wait()
    if out.returncode != 0:
        raise SystemExit(f"simulate failed ({out.returncode}): {out.stderr.strip()[-400:]}")
    sid = out.stdout.strip().splitlines()[-1]
    con = sqlite3.connect(db)
    ats = [_ts(a) for (a,) in con.execute("SELECT posted_at FROM messages ORDER BY id")]
    con.close()
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    posted = len(ats) - 1
    span = ats[-1] - ats[0]
    mean_call = statistics.fmean(r["end"] - r["start"] for r in rows) if rows else latency
    return {
        "session": sid,  # type: ignore[dict-item]  # two labels among the figures
        "wall": wall,
        "posted": posted,
        "per_message": span / posted if posted else float("nan"),
        "calls": len(rows) / posted if posted else float("nan"),
        "in_flight": in_flight_while_busy(rows),
        "depth": (span / posted) / mean_call if posted else float("nan"),
        "db": str(db),  # type: ignore[dict-item]  # as above
    }


def breakdown(db: str, session: str) -> str:
    """The session's per-trigger time breakdown as ``playground show`` prints it."""
    out = subprocess.run(
        [sys.executable, "-m", "playground", "show", session, "--db", db, "--timings"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
    )
    return out.stdout if out.returncode == 0 else f"(no breakdown: {out.stderr.strip()[-200:]})"


def person_to_reply(latency: float, agents: int, tries: int) -> list[float]:
    """Seconds from a person's message to the first agent reply, as the window runs the room
    (the real-time loop, posting as fast as possible: typing pace excluded), in this process
    against the fixed stand-in at the hosted name. A talkative preset, so that someone answers."""
    import asyncio
    import importlib.util

    spec = importlib.util.spec_from_file_location("hosted_dns", STUB / "sitecustomize.py")
    assert spec
    assert spec.loader
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # the resolver stub

    from playground import events, factory, personas
    from playground.embedding.cache import CachingEmbedder
    from playground.embedding.minilm import MiniLMEmbedder
    from playground.room import loops
    from playground.settings import load_settings

    tmp = Path(tempfile.mkdtemp())
    proc, url = start_standin(latency, 0.0, tmp / "calls.jsonl")
    minilm = MiniLMEmbedder()
    embedder = CachingEmbedder(minilm)

    async def once(seed: int) -> float:
        settings = load_settings(
            {},
            {
                "engine": "openai",
                "base_url": url,
                "api_key": "bench",
                "model": "standin",
                "seed": seed,
                "preset": "non-stop-chatter",
                "pause_seconds": 60,
            },
        )
        engine = await factory.build_engine(settings, embedder=embedder)
        replied = asyncio.Event()
        bus = events.EventBus()
        bus.subscribe(
            lambda e: (
                replied.set()
                if isinstance(e, events.MessagePosted) and e.message.kind == "ai"
                else None
            )
        )
        lib = personas.load_personas(REPO / "personas")
        room, _ = await factory.create_room(
            settings, engine, db=None, personas=factory.pick_personas(lib, agents, seed), bus=bus
        )
        room.add_human("Zoe")
        await room.embeddings_ready()
        runner = asyncio.create_task(loops.run_realtime(room))
        await asyncio.sleep(0.2)
        t0 = time.perf_counter()
        await room.post_human_message("Zoe", "What did you all do last weekend?")
        await asyncio.wait_for(replied.wait(), 60)
        took = time.perf_counter() - t0
        room.stop()
        await runner
        await engine.close()
        return took

    async def all_tries() -> list[float]:
        await minilm.load()
        return [await once(seed) for seed in range(tries)]

    try:
        return asyncio.run(all_tries())
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="4,8")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.4)
    ap.add_argument("--per-token", type=float, default=0.0)
    ap.add_argument("--show", action="store_true", help="print the last run's trigger breakdown")
    ap.add_argument(
        "--person", type=int, default=0, help="also time a person's message → first reply (N tries)"
    )
    ap.add_argument("extra", nargs="*", help="more simulate flags, after --")
    args = ap.parse_args()
    stand_in = f"{args.latency:g} s fixed" + (
        f" + {args.per_token * 1000:g} ms/token" if args.per_token else ""
    )
    print(f"stand-in: {stand_in} at {HOST}; {args.turns} turns, seed {args.seed} (+ run index)")
    print(
        "| stand-in | agents | s / posted message | calls / message | in flight while busy | depth |"
    )
    print("|---|---|---|---|---|---|")
    medians: dict[int, float] = {}
    for n in (int(a) for a in args.agents.split(",")):
        runs = [
            one_run(n, args.turns, args.seed + i, args.latency, args.per_token, args.extra)
            for i in range(args.runs)
        ]
        per = [r["per_message"] for r in runs]
        medians[n] = statistics.median(per)
        print(
            f"| {stand_in} | {n} | {min(per):.2f}–{max(per):.2f}, median {medians[n]:.2f}"
            f" | {statistics.fmean(r['calls'] for r in runs):.1f}"
            f" | {min(r['in_flight'] for r in runs):.1f}–{max(r['in_flight'] for r in runs):.1f}"
            f" | {min(r['depth'] for r in runs):.1f}–{max(r['depth'] for r in runs):.1f},"
            f" median {statistics.median(r['depth'] for r in runs):.1f} |",
            flush=True,
        )
        if args.show:
            print(breakdown(str(runs[-1]["db"]), str(runs[-1]["session"])))
    if len(medians) > 1:
        low, high = min(medians), max(medians)
        change = 100 * (medians[high] / medians[low] - 1)
        print(f"{high} agents vs {low}: {change:+.0f} % per posted message (target within 15 %)")
    if args.person:
        took = person_to_reply(args.latency, min(medians) if medians else 4, args.person)
        med = statistics.median(took)
        print(
            f"a person's message → the first agent reply: median {med:.2f} s"
            f" ({min(took):.2f}–{max(took):.2f}, n={len(took)}) = {med / args.latency:.2f} × the"
            " per-call latency (target ≤ 4.5; typing pace excluded)"
        )
    if args.latency and medians:
        print(
            f"{min(medians)} agents: {medians[min(medians)] / args.latency:.2f} × the per-call"
            " latency per posted message (target ≤ 4.5 on the fixed stand-in)"
        )


if __name__ == "__main__":
    main()
