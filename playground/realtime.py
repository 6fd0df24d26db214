"""The real-time loop: messages trigger the agents as they arrive; silence fires on_pause."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import TYPE_CHECKING

from playground import errors, events

if TYPE_CHECKING:
    from playground.room import Room


async def run_realtime(room: Room) -> None:
    """Real time: each message triggers the agents; after ``pause_seconds`` of silence on_pause fires.

    Pauses stop firing after ``max_silent_steps`` in a row until someone speaks again, and after
    ``max_agent_streak`` agent messages in a row the agents wait for a human. A trigger that
    arrives while agents think cancels their work. Errors are reported and the room goes on.
    """
    s = room.settings.room
    pauses = 0
    room._stopped = False  # a stop asked of an earlier loop (the simulation handing over) is spent
    while not room._stopped:
        waiting_for_human = _agent_streak(room) >= s.max_agent_streak
        quiet = pauses >= s.max_silent_steps or waiting_for_human
        timeout = None if quiet or not room.messages else s.pause_seconds
        with suppress(TimeoutError):
            await asyncio.wait_for(room._arrived.wait(), timeout=timeout)
        if room._stopped:
            break
        is_new = room._arrived.is_set()
        room._arrived.clear()
        if not room.messages:
            continue
        if _agent_streak(room) >= s.max_agent_streak:
            continue  # the agents have talked among themselves long enough: they wait for a person
        pauses = 0 if is_new else pauses + 1
        task = asyncio.create_task(room.step_once(silent_steps=pauses))
        waiter = asyncio.create_task(room._arrived.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()  # the room itself is being stopped: take the step in flight with it
            with suppress(asyncio.CancelledError):
                await task
            raise
        finally:
            waiter.cancel()
        if not task.done():
            task.cancel()  # superseded by a newer message
            with suppress(asyncio.CancelledError):
                await task
            continue
        exc = task.exception()
        if isinstance(exc, errors.PlaygroundError):
            room.emit(
                events.ErrorOccurred(where="room", message=str(exc), error_type=type(exc).__name__)
            )
        elif exc is not None:
            raise exc
    room.finish("finished", "stopped")


def _agent_streak(room: Room) -> int:
    """How many messages at the end of the transcript came from agents, with no human in between."""
    n = 0
    for m in reversed(room.messages):
        if m.kind == "human":
            break
        n += 1
    return n if any(m.kind == "human" for m in room.messages) else 0
