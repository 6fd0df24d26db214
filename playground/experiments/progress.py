"""What a batch run reports as it goes (the progress bar's figures), and the options a run takes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict


@dataclass
class ConditionProgress:
    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0  # finished by an earlier run


@dataclass
class Progress:
    """What the progress bar shows; the runner updates it in place and calls ``on_progress``."""

    experiment_id: str
    conditions: dict[str, ConditionProgress] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0
    retries: int = 0
    errors: int = 0
    running: int = 0
    started: float = field(default_factory=time.monotonic)
    last_error: str = ""

    @property
    def finished(self) -> int:
        return sum(c.done + c.failed for c in self.conditions.values())

    @property
    def total(self) -> int:
        return sum(c.total for c in self.conditions.values())


class RunOptions(TypedDict, total=False):
    """:class:`Runner`'s keyword options, for a subclass that passes them on unchanged."""

    concurrency: int
    shard: tuple[int, int]
    name: str | None
    on_progress: Callable[[Progress], None] | None
