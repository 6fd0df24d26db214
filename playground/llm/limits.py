"""How many calls go to a server at once: adapted to what it sustains (see :class:`AdaptiveLimit`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


class AdaptiveLimit:
    """How many calls are in flight at once, adapted to what the server sustains.

    Starts at ``start`` and never exceeds ``ceiling``. Each answer's latency is compared with the
    fastest seen for the same kind of call: while it holds (under twice that), one more call may
    go out at a time; when it grows past four times, or a call times out, the limit halves. A
    server that computes one request at a time settles at 1-2 calls in flight, and a call's
    timeout then counts its own computation, not the queue at the server.
    With ``adaptive`` False the limit stays at ``ceiling`` (``--llm-concurrency``).
    """

    def __init__(self, start: int, ceiling: int, *, adaptive: bool = True) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = min(max(1, start), self.ceiling) if adaptive else self.ceiling
        self.adaptive = adaptive
        self.active = 0
        self._fastest: dict[str, float] = {}
        self._cond: asyncio.Condition | None = None
        # The notifications in flight: the loop keeps only a weak reference to a task.
        self._notifying: set[asyncio.Future[None]] = set()

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    @contextlib.asynccontextmanager
    async def slot(self) -> Any:
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.active < self.limit)
            self.active += 1
        try:
            yield
        finally:
            async with cond:
                self.active -= 1
                cond.notify_all()

    def answered(self, kind: str, seconds: float, tokens: int) -> None:
        if not self.adaptive:
            return
        per = seconds / max(1, tokens + 8)  # per token, with the prompt's share as a floor
        best = self._fastest.get(kind)
        if best is None or per < best:
            self._fastest[kind] = per
            best = per
        if per <= 2 * best and self.limit < self.ceiling and self.active >= self.limit - 1:
            self.limit += 1
            cond = self._cond
            if cond is not None:  # calls waiting for a slot may go now
                task = asyncio.ensure_future(self._notify(cond))
                self._notifying.add(task)
                task.add_done_callback(self._notifying.discard)
        elif per > 4 * best and self.limit > 1:
            self.limit = max(1, self.limit // 2)

    def overloaded(self) -> None:
        if self.adaptive and self.limit > 1:
            self.limit = max(1, self.limit // 2)

    @staticmethod
    async def _notify(cond: asyncio.Condition) -> None:
        async with cond:
            cond.notify_all()
