"""The loops that drive a room: a simulation of silent steps, and real time.

A loop decides *when* the room takes its next step (:meth:`playground.room.room.Room.step_once`) and
when a session ends. It depends on the room; the room never imports it.
"""

from __future__ import annotations

import asyncio
import random
from contextlib import suppress

from playground import errors, events
from playground.room.room import Room
from playground.room.run_control import RunControl


async def run_simulation(
    room: Room,
    *,
    icebreaker: str | None = None,
    initiator: str | None = None,
    control: RunControl | None = None,
) -> str:
    """Run a simulation until max turns, repeated silence, or stop. Returns the final status.

    Each step is a trigger: a new message if one was posted since the last step, else a pause (a
    silent step).

    Args:
        room: a started room with at least one agent.
        icebreaker: the first message, posted by ``initiator`` (a seeded random agent when None)
            if the transcript is empty.
        initiator: who posts the icebreaker.
        control: play / pause / step / stop; without one the simulation runs straight through.

    Raises:
        PlaygroundError: the room has no agent.
        LLMError: when the server cannot be used; the session is marked failed first.
        RecordingError: when the database cannot be written; the run stops at once and the
            session is marked failed if the database still takes that write.
    """
    s = room.settings.room
    if not room.agents:
        raise errors.PlaygroundError("add at least one AI participant before running")
    try:
        if icebreaker and not room.messages:
            rng = random.Random(f"{room.seed}:room")
            initiator = initiator or rng.choice([a.name for a in room.agents])
            await room.post(initiator, icebreaker, origin="icebreaker")
        silent = 0
        while True:
            check_recording(room)
            if turns_taken(room) >= s.max_turns:
                await room.keep_last_vectors()
                room.finish("finished", turn_limit_reason(room))
                break
            if silent >= s.max_silent_steps:
                await room.keep_last_vectors()
                room.finish("finished", room.silence.explain(silent))
                break
            if room.stop_requested or (control and not await control.wait_for_step_permission()):
                if not (control and control.handing_over):
                    room.finish("interrupted", "stopped by the user")
                break
            msg = await room.step_once(silent_steps=silent)
            silent = 0 if msg else silent + 1
    except asyncio.CancelledError:
        if not (control and control.handing_over):
            room.finish("interrupted", "cancelled")
        raise
    except errors.RecordingError as exc:
        fail_unrecorded(room, exc)
        raise
    except errors.PlaygroundError as exc:
        room.emit(
            events.ErrorOccurred(
                where="simulation", message=str(exc), error_type=type(exc).__name__
            )
        )
        room.finish("failed", str(exc))
        raise
    return room.status


async def run_realtime(room: Room) -> None:
    """Real time: each message triggers the agents; after ``pause_seconds`` of silence on_pause fires.

    People pace the conversation: it lasts until it is stopped (or a study's time is up), and the
    turn cap (``max_turns``, a simulation's stopping rule) does not apply; the end reason says so
    when the session ends longer than the cap (see docs/fidelity.md).

    Pauses stop firing after ``max_silent_steps`` in a row until someone speaks again, and after
    ``max_agent_streak`` agent messages in a row the agents wait for a human. A trigger that
    arrives while agents think cancels their work. Errors are reported and the room goes on,
    except a database that cannot be written.

    Raises:
        RecordingError: the database cannot be written; the session is marked failed first if
            it still can be.
    """
    if room.realtime_since is None:  # people pace the conversation now: no turn cap
        room.realtime_since = len(room.messages)
    try:
        await _realtime(room)
    except errors.RecordingError as exc:
        fail_unrecorded(room, exc)
        raise


async def run_for(room: Room, seconds: float) -> None:
    """:func:`run_realtime` for ``seconds`` (a study's timed conversation); then the room is
    stopped and the session finished, unless it ended before.

    Raises:
        RecordingError: as :func:`run_realtime`.
    """
    loop = asyncio.ensure_future(run_realtime(room))
    try:
        done, _ = await asyncio.wait({loop}, timeout=seconds)
        if not done:
            room.stop("the conversation's time is up")
            await loop
        loop.result()
    finally:
        if not loop.done():
            loop.cancel()
            await asyncio.gather(loop, return_exceptions=True)
    room.finish("finished", "the conversation's time is up")


async def _realtime(room: Room) -> None:
    s = room.settings.room
    pauses = 0
    room.rearm()  # a stop asked of an earlier loop (the simulation handing over) is spent
    while not room.stop_requested:
        check_recording(room)
        waiting_for_human = agent_streak(room) >= s.max_agent_streak
        quiet = pauses >= s.max_silent_steps or waiting_for_human
        timeout = None if quiet or not room.messages else s.pause_seconds
        with suppress(TimeoutError):
            await asyncio.wait_for(room.arrived.wait(), timeout=timeout)
        if room.stop_requested:
            break
        is_new = room.arrived.is_set()
        room.arrived.clear()
        if not room.messages:
            continue
        if agent_streak(room) >= s.max_agent_streak:
            continue  # the agents have talked among themselves long enough: they wait for a person
        pauses = 0 if is_new else pauses + 1
        task = asyncio.create_task(room.step_once(silent_steps=pauses))
        waiter = asyncio.create_task(room.arrived.wait())
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
        if isinstance(exc, errors.PlaygroundError) and not isinstance(exc, errors.RecordingError):
            room.emit(
                events.ErrorOccurred(where="room", message=str(exc), error_type=type(exc).__name__)
            )
        elif exc is not None:
            raise exc
    check_recording(room)
    await room.keep_last_vectors()
    room.finish("finished", room.stop_reason)


def turns_taken(room: Room) -> int:
    """What the turn limit (``max_turns``) counts: every message in the transcript, the
    icebreaker, people's and simulated users' included."""
    return len(room.messages)


def turn_limit_reason(room: Room) -> str:
    """The end reason at the turn limit: the limit, the count it reached and what it counts
    (more messages than the limit when some were posted outside the steps, e.g. carried over
    into a fork, or a simulated user made to speak)."""
    n = turns_taken(room)
    return (
        f"reached max turns {room.settings.room.max_turns}: {n} message{'' if n == 1 else 's'}"
        " (every message counts: the icebreaker, people's and simulated users' too)"
    )


def check_recording(room: Room) -> None:
    """Raise the recorder's failure, also when a publisher up the stack caught it: a run must not
    go on unsaved.

    Raises:
        Exception: the first failure of a required subscriber (a RecordingError from the recorder).
    """
    if room.bus.failure is not None:
        raise room.bus.failure


def fail_unrecorded(room: Room, exc: errors.RecordingError) -> None:
    """End the session ``failed`` after a write failure (the recorder makes one last attempt to
    save that status). An ending already announced whose own write failed is no ending: it is
    replaced."""
    if room.status != "failed":
        room.status = "running"
        room.finish("failed", str(exc))


def agent_streak(room: Room) -> int:
    """How many messages at the end of the transcript came from agents, with no human in between."""
    n = 0
    for m in reversed(room.messages):
        if m.kind == "human":
            break
        n += 1
    return n if any(m.kind == "human" for m in room.messages) else 0
