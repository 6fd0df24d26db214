"""Benchmark: ``playground storm`` as a user runs it, whole batches through the CLI, offline.

Every figure is a whole run of ``python -m playground storm`` in a subprocess, start-up included
(imports, the MiniLM load), into a fresh database: 20 dyads (``--profiles 20``, round the 15
tasks) × 10 user turns, the plain assistant by default, at ``--concurrency`` 1 and 4. It prints
the wall time, dialogues per minute, messages and the time to the banner (start-up), with the
1-minute load average before and after (the machine may be shared).

Run: .venv/bin/python bench/bench_storm.py [--profiles 20] [--turns 10] [--concurrency 1,4]
     [--assistant plain|inner-thoughts]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO


def one_run(profiles: int, turns: int, concurrency: int, assistant: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "storm.db"
        cmd = [
            sys.executable, "-m", "playground", "storm", "--engine", "offline",
            "--profiles", str(profiles), "--turns", str(turns), "--seed", "1",
            "--concurrency", str(concurrency), "--assistant", assistant, "--db", str(db),
        ]  # fmt: skip
        load = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        banner = None
        assert proc.stderr is not None
        for line in proc.stderr:
            if banner is None and line.startswith("STORM batch"):
                banner = time.perf_counter() - start
        proc.wait()
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"run failed ({proc.returncode}): {' '.join(cmd)}")
        con = sqlite3.connect(db)
        try:
            done = con.execute("SELECT COUNT(*) FROM experiment_runs WHERE status = 'finished'").fetchone()[0]  # fmt: skip
            messages = con.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        finally:
            con.close()
        return {
            "wall": wall,
            "banner": banner or 0.0,
            "done": done,
            "messages": messages,
            "load_before": load,
            "load_after": os.getloadavg()[0],
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", type=int, default=20)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--concurrency", default="1,4")
    ap.add_argument("--assistant", default="plain")
    args = ap.parse_args()
    print(
        f"playground storm, offline: {args.profiles} dyads × {args.turns} turns,"
        f" {args.assistant} assistant ({os.cpu_count()} CPUs)"
    )
    for k in (int(x) for x in args.concurrency.split(",")):
        r = one_run(args.profiles, args.turns, k, args.assistant)
        rate = r["done"] / r["wall"] * 60
        print(
            f"concurrency {k:>2}: {r['wall']:6.1f} s wall ({r['banner']:.1f} s to the banner),"
            f" {r['done']} dialogues, {r['messages']} messages, {rate:5.1f} dialogues/min;"
            f" load {r['load_before']:.1f} → {r['load_after']:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
