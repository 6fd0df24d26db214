"""A few workers sharing a queue of calls, where the first failure stops them all.

``playground eval-next-speaker`` and ``playground storm-judge`` ask a model about many items, a
few at a time; a failure that ends the command (the server cannot be used) should end it with
that error, not with the task group's wrapper around it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from playground import errors


async def run_workers(worker: Callable[[], Coroutine[Any, Any, None]], count: int) -> None:
    """Run ``count`` copies of ``worker`` (at least one) at once, until all have returned.

    Raises:
        PlaygroundError: the first one a worker raised (the others are cancelled); any other
            exception when no worker raised a PlaygroundError.
    """
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, count)):
                group.create_task(worker())
    except BaseExceptionGroup as exc:
        raise first_error(exc) from None


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first PlaygroundError inside a task group's failure (else the first exception)."""
    flat: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop(0)
        if isinstance(exc, BaseExceptionGroup):
            stack[:0] = list(exc.exceptions)
        else:
            flat.append(exc)
    return next((e for e in flat if isinstance(e, errors.PlaygroundError)), flat[0])
