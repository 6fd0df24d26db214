"""How long ``playground simulate`` takes to stop on Ctrl-C or SIGTERM, as a user meets it.

A 3-agent offline run in a subprocess gets the signal at three moments: right after start-up
(the handlers are installed, the imports still run), while the embedding model loads (the
session row exists), and mid-run (two messages saved). Printed: from the signal to the process's
exit, per signal and moment. tests/cli/test_cli_faults.py checks what the stop leaves behind
(exit code 128 + signal, no traceback, the session marked interrupted).

Target: under 15 s at every moment (a stop the user would not take for a hang).
Run:  .venv/bin/python bench/bench_signal_stop.py [--repeats N]
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import REPO

MOMENTS = ("imports", "model_load", "mid_run")


def _count(db: Path, sql: str) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return 0
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0  # not created yet
    finally:
        conn.close()


def _catches(pid: int, signum: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(ln for ln in status.splitlines() if ln.startswith("SigCgt:"))
    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)


def stop_once(signum: int, moment: str) -> tuple[int, float]:
    """Exit code and seconds from the signal to the exit."""
    tmp = Path(tempfile.mkdtemp())
    db = tmp / "run.db"
    argv = [sys.executable, "-m", "playground", "simulate", "--engine", "offline"]
    argv += ["--agents", "3", "--turns", "500", "--max-silent-steps", "100", "--seed", "1"]
    argv += ["--db", str(db)]
    with (tmp / "out.txt").open("wb") as out, (tmp / "err.txt").open("wb") as err:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=err)
    ready: Callable[[], bool] = {
        "imports": lambda: _catches(proc.pid, signal.SIGTERM),
        "model_load": lambda: _count(db, "SELECT COUNT(*) FROM sessions") > 0,
        "mid_run": lambda: _count(db, "SELECT COUNT(*) FROM messages") >= 2,
    }[moment]
    try:
        deadline = time.monotonic() + 120
        while not ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the run never reached {moment}: {(tmp / 'err.txt').read_text()}")
            time.sleep(0.005)
        sent = time.perf_counter()
        proc.send_signal(signum)
        code = proc.wait(120)
        return code, time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for signum in (signal.SIGINT, signal.SIGTERM):
        for moment in MOMENTS:
            runs = [stop_once(signum, moment) for _ in range(args.repeats)]
            codes = sorted({code for code, _ in runs})
            took = sorted(t for _, t in runs)
            print(
                f"{signal.Signals(signum).name:7} at {moment:10}: exit {codes} · median"
                f" {took[len(took) // 2]:.2f} s · longest {took[-1]:.2f} s · n={len(took)}"
            )
    print("target: under 15 s at every moment")


if __name__ == "__main__":
    main()
