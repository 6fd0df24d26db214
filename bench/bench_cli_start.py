"""Benchmark: how fast the commands that never talk to a model start (issue 35, target ≤ 0.5 s).

Times whole processes, interpreter start-up included, as a user at a shell sees them:
``playground --help``, ``playground sessions``, ``playground show ID`` and ``playground export ID``
on a database of 5 offline sessions (2 agents, 4 turns; made once by ``playground experiment``
outside the timing, or given with ``--db``). Each command runs ``--runs`` times (default 7) after
one warm-up run (the page cache); the median wall-clock time (and the CPU time, which a busy
machine disturbs less) is what docs/benchmarks.md quotes. The heaviest
modules each command has loaded at exit are listed too (the mechanism
tests/cli/test_start_imports.py checks).

Run: .venv/bin/python bench/bench_cli_start.py [--runs 7] [--db FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO

TARGET = 0.5
#: Run in the measured process after the command: which of these it has loaded.
HEAVY = ("openai", "aiohttp", "httpx2", "torch", "scipy", "matplotlib", "pandas", "rich", "numpy")
PROBE = (
    "import atexit, json, runpy, sys\n"
    "atexit.register(lambda: print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)),"
    " file=sys.__stderr__))\n"
    "sys.argv = ['playground', *sys.argv[1:]]\n"
    "runpy.run_module('playground', run_name='__main__')\n"
)


def make_db(path: Path) -> None:
    """Five offline sessions, through the command line (not timed)."""
    subprocess.run(
        [
            *(sys.executable, "-m", "playground", "experiment", "--conditions", "inner-thoughts"),
            *("--conversations", "5", "--agents", "2", "--turns", "4", "--no-progress"),
            *("--db", str(path)),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )


def first_session(db: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "playground", "sessions", "--db", str(db)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.strip().splitlines()[-1].split()[0]


def timed(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of each run."""
    cmd = [sys.executable, "-m", "playground", *argv]
    subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def loaded(argv: list[str]) -> list[str]:
    got = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(got.stderr.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--db", type=Path, help="a database to list (default: 5 fresh sessions)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "five.db"
        if args.db is None:
            make_db(db)
        sid = first_session(db)
        out = Path(tmp) / "export.jsonl"
        commands = {
            "--help": ["--help"],
            "sessions": ["sessions", "--db", str(db)],
            "show ID": ["show", sid, "--db", str(db)],
            "export ID": ["export", sid, "--db", str(db), "--output", str(out)],
        }
        load = os.getloadavg()[0]
        print(f"{args.runs} runs each after a warm-up; target ≤ {TARGET} s; load {load:.1f}")
        for label, argv in commands.items():
            wall, cpu = timed(argv, args.runs)
            med = statistics.median(wall)
            verdict = "meets" if med <= TARGET else "misses"
            print(
                f"playground {label:<10} median {med:.3f} s (min {min(wall):.3f}, max"
                f" {max(wall):.3f}; CPU {statistics.median(cpu):.3f} s) {verdict} the target;"
                f" loaded: {', '.join(loaded(argv)) or '-'}"
            )


if __name__ == "__main__":
    main()
