"""Shared helpers for the benchmarks (they print figures; they never assert timings)."""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
    os.environ.pop(key, None)


def summary(values: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    v = sorted(x * scale for x in values)
    p95 = v[min(len(v) - 1, int(0.95 * len(v)))]
    return f"median {statistics.median(v):.2f} {unit} · p95 {p95:.2f} {unit} · max {v[-1]:.2f} {unit} · n={len(v)}"


@contextlib.contextmanager
def llm_server(latency: float) -> Iterator[str]:
    """The loopback OpenAI-compatible test server adding ``latency`` seconds per call, in a
    process of its own (as a real one would be: in the benchmark's process its work would compete
    for the interpreter lock); yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "testbed.llm_server", "--latency", str(latency), "--faithful"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()
