"""A batch runs with a frozen heap and raised collection thresholds, and gives both back."""

from __future__ import annotations

import gc

from playground import gc_tuning


def test_a_batch_raises_the_thresholds_freezes_and_restores() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with gc_tuning.batch():
        assert gc.get_threshold() == gc_tuning.BATCH_THRESHOLDS
        assert gc.get_freeze_count() > frozen  # what existed before is out of the collector's way
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1  # collection still works inside: nothing is turned off
    assert gc.get_threshold() == before
    if not frozen:
        assert gc.get_freeze_count() == 0
