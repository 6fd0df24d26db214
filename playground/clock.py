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
