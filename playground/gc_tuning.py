"""Garbage-collector settings for long batch runs (``playground experiment``, ``playground storm``).

A batch keeps a large, long-lived heap (the embedding model's tensors and tokenizer, personas,
memories, the openai and aiohttp clients) and allocates many short-lived containers per call: each
answer with logprobs parses into a few thousand small dicts and lists. With CPython's default
thresholds (700, 10, 10) the young collections come every few answers and the older ones walk the
whole long-lived heap again and again. Measured with ``bench/bench_experiment.py`` (64
conversations at concurrency 16): the client's CPU for the same run fell from 41 to 31
CPU-seconds with the server adding no latency, and the run from 85–88 s to about 77 s with 300 ms
per call.

Nothing is turned off: cycles are still collected, only less often, and what exists before the
batch starts is moved out of the collector's way (``gc.freeze``), since it lives as long as the
process anyway. The window does its own collection on the GUI thread (``ui/collector.py``).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Allocations between young collections (CPython's default is 700), and how many collections of
#: one generation before the next older one is collected (defaults 10 and 10).
BATCH_THRESHOLDS = (50_000, 20, 100)


@contextlib.contextmanager
def batch() -> Iterator[None]:
    """Inside: what was allocated before is frozen and the thresholds are
    :data:`BATCH_THRESHOLDS`; on the way out both are undone (a process that runs several
    batches, or the test suite, goes back to the defaults). Enter it once the engine and the
    runner are set up, just before the conversations start."""
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.collect()  # what is garbage now should not be frozen
    gc.freeze()
    gc.set_threshold(*BATCH_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not frozen:  # someone else's freeze (the replay window's) stays as they left it
            gc.unfreeze()
