"""Benchmark: the ratings report over 80 sessions, 5 raters, 2,800 conversation ratings.

Builds a database (minimal `sessions`, `participants` and `messages` rows inserted with SQL, then
ratings, preferences, unnatural-turn marks and questionnaires through RatingStore), then times
`build_report`, the whole `playground report` command and the plot rendering (median of 5).
Target: the report under 1 s. Run: .venv/bin/python bench/bench_report.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import REPO, summary

from playground.cli import main as cli
from playground.report import plots, stats as report
from playground.rating.store import CONVERSATION_METRICS, PARTICIPANT_ITEMS, RatingStore
from playground.storage import open_database

CONDITIONS = {"inner-thoughts": 5.0, "next-speaker": 4.0}  # mean rating drawn for each
PER_CONDITION = 40
RATERS = [f"rater-{i}" for i in range(1, 6)]
MESSAGES = 15
NOW = "2026-01-01T00:00:00.000+00:00"


def build_database(path: Path, *, seed: int = 1) -> dict[str, int]:
    """A database of fake sessions with ratings; returns what it holds."""
    rng = random.Random(seed)
    db = open_database(path)
    sessions: dict[str, str] = {}
    with db.conn:
        for cond_index, cond in enumerate(CONDITIONS):
            for i in range(PER_CONDITION):
                sid = f"20260101-0000{cond_index}{i:02d}-b{cond_index}{i:02d}"
                sessions[sid] = cond
                db.execute(
                    "INSERT INTO sessions (id, created_at, status, engine, model, condition, config)"
                    " VALUES (?, ?, 'finished', 'offline engine', 'offline', ?, '{}')",
                    [sid, NOW, cond],
                )
                db.execute(
                    "INSERT INTO participants (session_id, name, kind, joined_at) VALUES (?, 'Ana', 'ai', ?)",
                    [sid, NOW],
                )
                for m in range(1, MESSAGES + 1):
                    db.execute(
                        "INSERT INTO messages (session_id, id, step, speaker, speaker_kind, text, posted_at)"
                        " VALUES (?, ?, ?, 'Ana', 'ai', 'hello', ?)",
                        [sid, m, m, NOW],
                    )
    store = RatingStore(db)
    ids = sorted(sessions)
    for rater in RATERS:
        for sid in ids:
            centre = CONDITIONS[sessions[sid]]
            values = {
                m.key: min(7, max(1, round(rng.gauss(centre, 1.3)))) for m in CONVERSATION_METRICS
            }
            store.rate_conversation(sid, rater, values)
            for _ in range(rng.choice([0, 0, 1, 2]) + (sessions[sid] == "next-speaker")):
                store.mark_turn(sid, rng.randint(2, MESSAGES), rater, "odd timing")
        inner = [s for s in ids if sessions[s] == "inner-thoughts"]
        other = [s for s in ids if sessions[s] != "inner-thoughts"]
        for a, b in zip(rng.sample(inner, 20), rng.sample(other, 20), strict=True):
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            chosen = a if rng.random() < 0.8 else b
            store.record_preference(rater, first, second, chosen, "felt more natural")
    for sid in ids[::4]:
        centre = CONDITIONS[sessions[sid]]
        store.answer_questionnaire(
            sid,
            f"participant-{sid[-3:]}",
            {i.key: min(7, max(1, round(rng.gauss(centre, 1.2)))) for i in PARTICIPANT_ITEMS},
        )
    counts = {
        table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        for table in ("sessions", "ratings", "preferences", "turn_marks")
    }
    db.close()
    return counts


def timed(fn: Callable[[], object], repeat: int = 5) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", metavar="DIR", help="build the database and plots here")
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-report-"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / "ratings.db"
    path.unlink(missing_ok=True)
    start = time.perf_counter()
    counts = build_database(path)
    print(f"built {path} in {time.perf_counter() - start:.1f} s: {counts}")

    db = open_database(path)
    first = timed(lambda: report.build_report(db), repeat=1)
    times = timed(lambda: report.build_report(db))
    rep = report.build_report(db)
    db.close()
    print(f"build_report (first call, imports scipy): {first[0] * 1000:.0f} ms")
    print(f"build_report: {summary(times)}")

    for fmt in ("table", "csv", "json"):
        argv = ["report", "--db", str(path), "--format", fmt]

        def report_once(argv: list[str] = argv) -> int:
            return cli.main(argv, out=io.StringIO(), err=io.StringIO())

        t = timed(report_once)
        print(f"playground report --format {fmt}: {summary(t)}")

    argv = [sys.executable, "-m", "playground", "report", "--db", str(path)]
    t = timed(lambda: subprocess.run(argv, check=True, capture_output=True, cwd=REPO), repeat=3)
    print(f"python -m playground report (new process, imports included): {summary(t)}")

    fig_times = {
        "likert_figure + PNG": timed(lambda: plots.figure_png(plots.likert_figure(rep))),
        "preference_figure + PNG": timed(lambda: plots.figure_png(plots.preference_figure(rep))),
    }
    for name, t in fig_times.items():
        print(f"{name}: {summary(t)}")
    out_dir = work / "plots"
    t = timed(lambda: plots.write_plots(rep, out_dir))
    print(f"write_plots (both PNGs): {summary(t)} -> {out_dir}")
    print(f"report under 1 s: median {statistics.median(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
