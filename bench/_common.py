"""Shared helpers for the benchmarks (they print figures; they never assert timings)."""

from __future__ import annotations

import os
import statistics
import sys
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
