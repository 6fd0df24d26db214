"""How many calls go to a server at once, adapted to what it sustains (see :class:`AdaptiveLimit`),
and which waiting call goes next."""

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

    With ``affinity`` (a server on this machine: it answers one request at a time and keeps the
    state of the last one), a freed slot goes to the waiting call whose ``key`` (its prompt, see
    :func:`prompt_key`) shares the longest prefix with the call sent just before, the earliest on
    a tie: the server then reuses that prefix instead of evaluating it again (an evaluation's
    final rating call right after it, one agent's evaluations back to back). The choice is made
    once the current step of the event loop ends, so a call that follows at once from the answer
    just read (a final rating call) competes for the slot that answer freed. Without it, calls
    go in the order they asked.
    """

    def __init__(
        self, start: int, ceiling: int, *, adaptive: bool = True, affinity: bool = False
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = min(max(1, start), self.ceiling) if adaptive else self.ceiling
        self.adaptive = adaptive
        self.affinity = affinity
        self.active = 0
        self._fastest: dict[str, float] = {}
        self._waiting: list[tuple[str, asyncio.Future[None]]] = []
        self._last = ""  # the key of the call sent last
        self._dispatching = False

    @contextlib.asynccontextmanager
    async def slot(self, key: str = "") -> Any:
        """Hold one of the slots while the block runs; ``key``: the call's prompt, for
        ``affinity``."""
        if self.active < self.limit and not self._waiting and not self._dispatching:
            self._take(key)
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append((key, fut))
            self._schedule()
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._free()  # granted, then cancelled before it ran
                else:
                    self._waiting = [(k, f) for k, f in self._waiting if f is not fut]
                raise
        try:
            yield
        finally:
            self._free()

    def _take(self, key: str) -> None:
        self.active += 1
        self._last = key

    def _free(self) -> None:
        self.active -= 1
        self._schedule()

    def _schedule(self) -> None:
        if self._dispatching or not self._waiting:
            return
        self._dispatching = True
        asyncio.get_running_loop().call_soon(self._dispatch)

    def _dispatch(self) -> None:
        self._dispatching = False
        while self.active < self.limit and self._waiting:
            self._waiting = [(k, f) for k, f in self._waiting if not f.done()]
            if not self._waiting:
                return
            i = self._next() if self.affinity else 0
            key, fut = self._waiting.pop(i)
            self._take(key)
            fut.set_result(None)

    def _next(self) -> int:
        """The waiting call sharing the longest prefix with the last one sent (the first one
        on a tie)."""
        best, best_len = 0, -1
        for i, (key, _) in enumerate(self._waiting):
            n = shared_prefix(key, self._last)
            if n > best_len:
                best, best_len = i, n
        return best

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
            self._schedule()  # calls waiting for a slot may go now
        elif per > 4 * best and self.limit > 1:
            self.limit = max(1, self.limit // 2)

    def overloaded(self) -> None:
        if self.adaptive and self.limit > 1:
            self.limit = max(1, self.limit // 2)


def shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of two texts (binary search on slice equality:
    the comparisons run in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def prompt_key(messages: list[dict[str, str]]) -> str:
    """A request's messages as one text whose prefixes are the prompt's prefixes, as a server
    formats them (roles and contents in order)."""
    return "".join(f"\x1e{m.get('role', '')}\x1f{m.get('content', '')}" for m in messages)
