"""Time, injected: nothing else in the engine reads the wall clock."""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import time
from dataclasses import dataclass
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


@dataclass
class CallMeter:
    """The model calls made within one stage of a trigger: how many, and the seconds spent in
    them (waiting for a free slot included; calls that overlap are each counted in full)."""

    calls: int = 0
    seconds: float = 0.0

    def add(self, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds


#: The meter of the stage the current task runs (set by the room's timeline; tasks a stage
#: starts inherit it). The model client adds every call to it.
CALL_METER: contextvars.ContextVar[CallMeter | None] = contextvars.ContextVar(
    "call_meter", default=None
)


def meter_call(seconds: float) -> None:
    """Count one model call of ``seconds`` to the stage that made it, if it is being timed."""
    meter = CALL_METER.get()
    if meter is not None:
        meter.add(seconds)
