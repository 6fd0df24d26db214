"""Benchmark: 30 raters at once on ``playground rate serve``, scripted, for ``--minutes`` (5).

Two real rating plans in one real SQLite file (six offline conversations, two conditions): one
of conversation ratings, one of pairwise preferences, each with thousands of raters, each served
by ``playground rate serve PLAN --open-link`` in a process of its own (as a researcher runs it).
Fifteen scripted raters per plan arrive through the open link one after another, as a
crowdsourcing platform sends them; each follows the redirect to its rater's page, opens the
WebSocket, reads every conversation (``shown``), marks a turn, answers the seven statements or
chooses A or B with a reason, and collects its completion code, pausing ``--think`` seconds
(0.2) between frames.

Printed: answers sent and answers stored (rows counted in the database after the servers stop:
each answer must be stored exactly once), marks sent and stored, completion codes, and the median
and p95 times of page loads (the open link, its redirect and the page) and of frames (a frame
sent until its ack). Target: nothing lost, nothing stored twice, the median under 100 ms.
Run:
    .venv/bin/python bench/bench_raters.py [--minutes 5] [--raters 30] [--think 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from _common import REPO

from playground.storage import open_database
from testbed.raters import Tally, crowd_worker, make_plan, simulated_sessions


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


@contextlib.contextmanager
def serving(db: Path, plan_id: int) -> Iterator[str]:
    """``playground rate serve PLAN --open-link`` in its own process; yields the open link."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "playground",
            "rate",
            "serve",
            str(plan_id),
            "--open-link",
            "--port",
            "0",
            "--cps",
            "1000",
            "--db",
            str(db),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


async def run(db: Path, links: list[str], raters: int, seconds: float, think: float) -> Tally:
    tally = Tally()
    deadline = time.monotonic() + seconds
    await asyncio.gather(
        *(crowd_worker(links[i % len(links)], deadline, tally, i, think) for i in range(raters))
    )
    return tally


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=5.0)
    p.add_argument("--raters", type=int, default=30, help="scripted raters at once (default 30)")
    p.add_argument("--think", type=float, default=0.2, help="seconds between a rater's frames")
    args = p.parse_args()
    seconds = args.minutes * 60
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "raters.db"
        print("making six offline conversations…", flush=True)
        ids = simulated_sessions(db, 6)
        per_plan = int(args.raters / 2 * seconds / (6 * max(args.think, 0.05))) + 100
        conversation = make_plan(db, "conversation", [f"c{i}" for i in range(per_plan)], 3, ids)
        pairwise = make_plan(db, "pairwise", [f"p{i}" for i in range(per_plan)], 3, ids)
        print(
            f"two plans of {per_plan} raters × 3 items; {args.raters} raters at once for"
            f" {args.minutes:g} min, {args.think:g} s between frames",
            flush=True,
        )
        with serving(db, conversation) as a, serving(db, pairwise) as b:
            tally = asyncio.run(run(db, [a, b], args.raters, seconds, args.think))
        con = open_database(db)
        count = lambda sql: int(con.execute(sql).fetchone()[0])  # noqa: E731
        rated = count("SELECT COUNT(DISTINCT assignment_id) FROM ratings")
        rows = count("SELECT COUNT(*) FROM ratings")
        preferred = count("SELECT COUNT(*) FROM preferences")
        marks = count("SELECT COUNT(*) FROM turn_marks")
        completed = count("SELECT COUNT(*) FROM assignments WHERE completed_at IS NOT NULL")
        codes = count("SELECT COUNT(*) FROM rater_links WHERE code IS NOT NULL")
        con.close()
    sent = tally.rates + tally.prefers
    print(
        f"arrivals (raters served): {len(tally.raters)}; completion codes {len(tally.codes)}"
        f" received, {codes} stored, {len(set(tally.codes))} distinct"
    )
    print(
        f"answers sent: {sent} ({tally.rates} ratings, {tally.prefers} preferences);"
        f" acknowledged frames: {tally.acks}; refused: {len(tally.refused)}"
    )
    print(
        f"answers stored: {rated + preferred} ({rated} ratings = {rows} rows / 7,"
        f" {preferred} preferences); assignments completed: {completed}"
    )
    print(f"marks sent {tally.marks}, stored {marks}")
    ok = sent == rated + preferred == completed and rows == 7 * rated and marks == tally.marks
    print("every answer stored exactly once:", "yes" if ok else "NO")
    for name, values in (("page", tally.page_ms), ("frame", tally.frame_ms)):
        print(
            f"{name} response: median {statistics.median(values):.1f} ms ·"
            f" p95 {_pct(values, 0.95):.1f} ms · max {max(values):.1f} ms · n={len(values)}"
        )


if __name__ == "__main__":
    main()
