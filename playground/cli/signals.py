"""Ctrl-C and SIGTERM during a command that runs on an event loop: a clean, prompt stop.

The first signal cancels the command's task, so its ``finally`` blocks end the session
``interrupted`` and print its id; the exit code is 128 + the signal (130 for Ctrl-C, 143 for
SIGTERM), as a shell reports a process stopped by that signal. Another signal within
:data:`REPEAT_GRACE` seconds is the same request; one after that leaves at once without cleaning
up (when the clean stop hangs, e.g. on a locked database): the database stays consistent (SQLite's
journal), and a session left ``running`` by a process that is gone is marked ``interrupted`` the
next time the database opens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TextIO

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds after the first signal during which another one counts as the same request: the
#: clean stop (normally well under a second) is not cut short by a double press.
REPEAT_GRACE = 1.0


def exit_code(signum: int) -> int:
    """The exit code of a command stopped by ``signum``: 128 + its number."""
    return 128 + signum


def run_interruptible(coro: Coroutine[Any, Any, int], err: TextIO) -> int:
    """Run ``coro`` on a new event loop until it returns, or until SIGINT or SIGTERM stops it.

    Signals are only taken over on the main thread (elsewhere they cannot be); the handlers that
    were installed before are put back afterwards (the event loop would leave Python's defaults).

    Returns:
        The coroutine's result, or ``exit_code(signal)`` when a signal cancelled it.
    """
    received: list[int] = []
    on_main = threading.current_thread() is threading.main_thread()

    async def runner() -> int:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        first_at = 0.0

        def stop(signum: int) -> None:
            nonlocal first_at
            if received:
                if loop.time() - first_at < REPEAT_GRACE:
                    return  # the same request (a double press, or SIGINT and SIGTERM together)
                print("interrupted again: leaving at once", file=err, flush=True)
                os._exit(exit_code(signum))
            received.append(signum)
            first_at = loop.time()
            if task is not None:
                task.cancel()

        if on_main:
            for sig in SIGNALS:
                loop.add_signal_handler(sig, stop, sig)
        try:
            result = int(await coro)
        except asyncio.CancelledError:
            if not received:
                raise
            result = 0
        if received:  # cancelled, or the command swallowed the cancellation and returned
            print("interrupted", file=err, flush=True)
            return exit_code(received[0])
        return result

    previous = {sig: signal.getsignal(sig) for sig in SIGNALS} if on_main else {}
    try:
        return asyncio.run(runner())
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)
