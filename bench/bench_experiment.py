"""Benchmark: ``playground experiment`` as a user runs it, a whole batch through the CLI.

Every figure is a whole run of ``python -m playground experiment`` in a subprocess, start-up
included (imports, the MiniLM load, the server probe), into a fresh database:

1. offline: inner-thoughts + next-speaker × 50 conversations, 4 agents, 15 turns, seed 1, at
   ``--concurrency`` 1, 2 and 8. The offline engine is CPU-bound (MiniLM in a worker thread,
   KeyBERT), so on 2 cores more conversations in flight buy little; the best is printed.
2. LLM: the same against the loopback OpenAI-compatible server in a process of its own, adding
   300 ms per call (``testbed.llm_server_async --latency 0.3 --faithful``: the test
   server's answers from one asyncio thread; ``--server threaded`` uses the thread-per-connection
   test server, whose threads queue for the interpreter lock under load), at ``--concurrency``
   1, 4 and 16 with ``--llm-concurrency 64`` (so that the LLM limiter is not the bottleneck).
   Each run does 4 rounds of its concurrency (``2 × K`` conversations per condition, at least
   2), so that every run has the same share of ramp-up and tail. Scaling efficiency at 16 =
   rate(16) / (16 × rate(1)); the target is ≥ 0.8. Next to it, each conversation's own wall
   time (from its session row) gives the slowdown of one conversation when K run at once, which
   is the scaling while all K slots are busy, without ramp-up and tail. The server's CPU time
   is printed too: it shares the 2 cores.
3. peak memory: the child's ``ru_maxrss`` (``os.wait4`` on its pid), printed for every run;
   the figure asked for is the LLM run at concurrency 16.

Inner figures come from the progress lines the runner writes to standard error when it is not a
terminal (``[k/N] …``): start-up = launch to the ``Experiment …`` banner (engine built, runner
ready); first = launch to the first finished conversation; steady rate = conversations per
minute between the banner and the last one. The 1-minute load average before and after each
run is printed next to it: the machine may be shared, and the figures are only as quiet as it.

Run: .venv/bin/python bench/bench_experiment.py [--parts offline,llm] [--quick]
     [--offline-concurrency 1,2,8] [--llm-concurrency 1,4,16] [--conversations N]
     [--llm-rounds R] [--turns T] [--server async|threaded] [--latency S]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO

LATENCY = 0.3
CONDITIONS = "inner-thoughts,next-speaker"
AGENTS = 4
SEED = 1
LLM_CONCURRENCY = 64
PROGRESS = re.compile(
    r"^\[(\d+)/(\d+)\] .*?; (\d+) LLM calls, (\d+) tokens, (\d+) retries, (\d+) errors"
)


@dataclass
class Run:
    """One ``playground experiment`` process."""

    label: str
    concurrency: int
    jobs: int
    wall: float = float("nan")
    startup: float = float("nan")  # launch → the "Experiment …" banner
    first: float = float("nan")  # launch → the first finished conversation
    last: float = float("nan")  # launch → the last finished conversation
    finished: int = 0
    failed: int = 0
    calls: int = 0
    tokens: int = 0
    retries: int = 0
    errors: int = 0
    maxrss_mb: float = float("nan")
    cpu: float = float("nan")  # the child's user + system seconds
    load_before: float = float("nan")
    load_after: float = float("nan")
    returncode: int = 0
    stderr_tail: list[str] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)  # each finished conversation, seconds
    server_cpu: float = float("nan")  # the server process's user + system seconds during the run

    @property
    def mean_duration(self) -> float:
        return statistics.fmean(self.durations) if self.durations else float("nan")

    @property
    def rate(self) -> float:
        """Conversations per minute over the whole run, start-up included."""
        return 60.0 * self.finished / self.wall if self.wall > 0 else float("nan")

    @property
    def steady_rate(self) -> float:
        """Conversations per minute from the banner to the last finished conversation."""
        span = self.last - self.startup
        return 60.0 * self.finished / span if span > 0 else float("nan")

    @property
    def load(self) -> str:
        return f"{self.load_before:.1f}→{self.load_after:.1f}"


def env() -> dict[str, str]:
    """The bench's environment (offline hub, no inherited OpenAI settings)."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out.setdefault("PYTHONPATH", str(REPO))
    return out


def experiment(
    label: str, extra: list[str], conversations: int, turns: int, concurrency: int
) -> Run:
    """Run one batch into a fresh database and time it from launch."""
    db = Path(tempfile.mkdtemp(prefix="bench-experiment-")) / "x.db"
    argv = [sys.executable, "-m", "playground", "experiment", *extra]
    argv += ["--conditions", CONDITIONS, "--conversations", str(conversations)]
    argv += ["--agents", str(AGENTS), "--turns", str(turns), "--seed", str(SEED)]
    argv += ["--db", str(db), "--concurrency", str(concurrency)]
    run = Run(label, concurrency, 2 * conversations)
    run.load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env()
    )
    lines: list[tuple[float, str]] = []

    def read_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.perf_counter() - t0, line.rstrip("\n")))

    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    assert proc.stdout is not None
    proc.stdout.read()  # the summary table; the figures come from the progress lines
    _, status, usage = os.wait4(proc.pid, 0)
    run.wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    run.load_after = os.getloadavg()[0]
    run.returncode = proc.returncode
    run.maxrss_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    run.cpu = usage.ru_utime + usage.ru_stime
    for at, line in lines:
        if line.startswith("Experiment "):
            run.startup = at
        m = PROGRESS.match(line)
        if m:
            done = int(m.group(1))
            if done >= 1 and run.first != run.first:  # still NaN
                run.first = at
            if done > run.finished:
                run.finished, run.last = done, at
            run.calls, run.tokens, run.retries, run.errors = (int(g) for g in m.groups()[2:])
        if line.startswith("error:") or " failed; the last: " in line:
            run.stderr_tail.append(line)
    m_failed = [ln for _, ln in lines if " failed; the last: " in ln]
    if m_failed:
        run.failed = int(m_failed[-1].split()[0])
    if proc.returncode != 0 and not run.stderr_tail:
        run.stderr_tail = [ln for _, ln in lines[-5:]]
    run.durations = durations(db)
    shutil.rmtree(db.parent, ignore_errors=True)
    return run


def durations(db: Path) -> list[float]:
    """Each finished conversation's wall time, from its session's first to its last write."""
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT (julianday(finished_at) - julianday(created_at)) * 86400 FROM sessions"
            " WHERE status = 'finished' AND finished_at IS NOT NULL"
        ).fetchall()
    return [r[0] for r in rows if r[0] is not None]


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU seconds so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVERS = {"async": "testbed.llm_server_async", "threaded": "testbed.llm_server"}


@contextlib.contextmanager
def server(latency: float, kind: str) -> Iterator[tuple[str, int]]:
    """The loopback server in its own process; yields its base URL and pid."""
    proc = subprocess.Popen(
        [sys.executable, "-m", SERVERS[kind], "--latency", str(latency), "--faithful"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), proc.pid
    finally:
        proc.kill()
        proc.wait()


def show(run: Run) -> None:
    """One run's line, printed as soon as it ends."""
    ok = "" if run.returncode == 0 else f"  EXIT {run.returncode}: {' | '.join(run.stderr_tail)}"
    print(
        f"  {run.label:<8} K={run.concurrency:<3} {run.finished}/{run.jobs} conversations"
        f" ({run.failed} failed) in {run.wall:6.1f} s → {run.rate:6.2f}/min"
        f" (steady {run.steady_rate:6.2f}/min); start-up {run.startup:4.1f} s, first finished"
        f" {run.first:5.1f} s; {run.calls} LLM calls, {run.retries} retries, {run.errors} errors;"
        f" CPU {run.cpu:.0f} s (server {run.server_cpu:.0f} s); mean conversation"
        f" {run.mean_duration:.1f} s; peak RSS {run.maxrss_mb:.0f} MB; load {run.load}{ok}",
        flush=True,
    )


def table(runs: list[Run]) -> None:
    """The closing table."""
    head = (
        f"{'engine':<8} {'K':>3} {'convs':>5} {'wall s':>7} {'conv/min':>8} {'steady':>7}"
        f" {'start-up s':>10} {'1st done s':>10} {'CPU s':>6} {'LLM calls':>9} {'peak MB':>7}"
        f" {'load 1m':>10}"
    )
    print("\n" + head)
    print("-" * len(head))
    for r in runs:
        print(
            f"{r.label:<8} {r.concurrency:>3} {r.finished:>5} {r.wall:>7.1f} {r.rate:>8.2f}"
            f" {r.steady_rate:>7.2f} {r.startup:>10.1f} {r.first:>10.1f} {r.cpu:>6.0f} {r.calls:>9}"
            f" {r.maxrss_mb:>7.0f} {r.load:>10}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="offline,llm", help="offline, llm, or both (default)")
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--offline-concurrency", default="1,2,8")
    ap.add_argument("--llm-concurrency", default="1,4,16")
    ap.add_argument(
        "--conversations", type=int, help="offline conversations per condition (default 50)"
    )
    ap.add_argument(
        "--llm-rounds",
        type=int,
        help="LLM runs: conversations per condition = max(1, rounds × K / 2) (default 4)",
    )
    ap.add_argument("--turns", type=int, help="turns per conversation (default 15)")
    ap.add_argument(
        "--latency",
        type=float,
        default=LATENCY,
        help="seconds the server adds per call (default 0.3; 0 measures the CPU-bound floor)",
    )
    ap.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default="async",
        help="the loopback server: one asyncio thread (default), or a thread per connection",
    )
    args = ap.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - {"offline", "llm"}
    if unknown:
        ap.error(f"--parts: unknown {', '.join(sorted(unknown))}; choose offline and/or llm")
    turns = args.turns or (5 if args.quick else 15)
    conversations = args.conversations or (2 if args.quick else 50)
    rounds = args.llm_rounds or (1 if args.quick else 4)
    off_ks = [int(k) for k in args.offline_concurrency.split(",")]
    llm_ks = [int(k) for k in args.llm_concurrency.split(",")]
    if args.quick:
        off_ks, llm_ks = off_ks[:2], [k for k in llm_ks if k <= 4] or llm_ks[:1]
    print(f"{os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: list[Run] = []

    if "offline" in parts:
        print(
            f"\noffline engine: {CONDITIONS} × {conversations} conversations, {AGENTS} agents,"
            f" {turns} turns, seed {SEED}",
            flush=True,
        )
        offline: list[Run] = []
        for k in off_ks:
            offline.append(experiment("offline", ["--engine", "offline"], conversations, turns, k))
            show(offline[-1])
        runs += offline
        best = max(offline, key=lambda r: r.rate)
        print(
            f"  best on {os.cpu_count()} CPUs: --concurrency {best.concurrency}"
            f" ({best.rate:.2f} conversations/min, {best.wall:.0f} s for {best.finished})"
        )

    if "llm" in parts:
        print(
            f"\nLLM engine against a local server adding {args.latency * 1000:.0f} ms per call:"
            f" {CONDITIONS}, {rounds} rounds of K conversations, {AGENTS} agents, {turns} turns,"
            f" --llm-concurrency {LLM_CONCURRENCY}; {args.server} server ({SERVERS[args.server]})",
            flush=True,
        )
        llm: list[Run] = []
        with server(args.latency, args.server) as (url, pid):
            for k in llm_ks:
                n = max(1, rounds * k // 2)
                extra = ["--engine", "openai", "--base-url", url, "--api-key", "bench"]
                extra += ["--model", "fake", "--llm-concurrency", str(LLM_CONCURRENCY)]
                before = cpu_seconds(pid)
                r = experiment("openai", extra, n, turns, k)
                r.server_cpu = cpu_seconds(pid) - before
                show(r)
                llm.append(r)
        runs += llm
        by_k = {r.concurrency: r for r in llm}
        if 1 in by_k:
            one = by_k[1]
            for k, r in sorted(by_k.items()):
                if k == 1:
                    continue
                eff = r.rate / (k * one.rate)
                eff_steady = r.steady_rate / (k * one.steady_rate)
                slow = r.mean_duration / one.mean_duration
                print(
                    f"  scaling at K={k}: {eff:.2f} × linear (whole run), {eff_steady:.2f} ×"
                    f" linear (steady, start-up excluded); target ≥ 0.8 at 16. A conversation"
                    f" takes {r.mean_duration:.1f} s on average at K={k}, {one.mean_duration:.1f} s"
                    f" at K=1 ({slow:.2f} ×): {1 / slow:.2f} × linear while all K slots are busy"
                )
        top = max(llm, key=lambda r: r.concurrency)
        print(f"  peak memory at K={top.concurrency}: {top.maxrss_mb:.0f} MB (ru_maxrss)")

    table(runs)


if __name__ == "__main__":
    main()
