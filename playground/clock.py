"""Time, injected: nothing else in the engine reads the wall clock."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Protocol


class Clock(Protocol):
    def now_iso(self) -> str: ...
    def monotonic(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Wall-clock time for timestamps, monotonic time and asyncio sleeps."""

    def now_iso(self) -> str:
        return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class FixedClock(SystemClock):
    """Timestamps from a fixed start advancing one second per call: reproducible transcripts."""

    def __init__(self, start: str = "2026-01-01T00:00:00+00:00") -> None:
        self._t = dt.datetime.fromisoformat(start)

    def now_iso(self) -> str:
        self._t += dt.timedelta(seconds=1)
        return self._t.isoformat(timespec="milliseconds")
