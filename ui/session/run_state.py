"""The run state the window shows: what the session on screen is doing, derived from the facts.

The toolbar's Run / Step / Pause and the status bar's run-state label both follow
:func:`state_of`, so they cannot disagree. The states:

- ``none``: no session yet; ``setting-up``: a new session (or a fork) is being set up, the model
  may still be loading; Run and Step wait for it and then apply to the new session.
- ``paused``: the session is live and no step is in flight (also before the first Run).
- ``running``: steps follow one another.
- ``stepping``: one step (Step) is in flight; Run and Step are disabled until it ends.
- ``pausing``: Pause was pressed while a step was in flight. The step finishes and its message,
  if any, is posted; then the state is ``paused``.
- ``realtime``: a human has joined; ``ended``: the session finished, was stopped or failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import asyncio

    from playground.room.room import Room
    from playground.room.run_control import RunControl

RunState = Literal[
    "none", "setting-up", "paused", "running", "stepping", "pausing", "realtime", "ended"
]

#: The status bar's words for each state.
RUN_STATE_TEXT: dict[str, str] = {
    "none": "",
    "setting-up": "Setting up…",
    "paused": "Paused",
    "running": "Running",
    "stepping": "Stepping…",
    "pausing": "Pausing…",
    "realtime": "Live (real time)",
    "ended": "Ended",
}

#: States with a live session whose simulation loop may be working.
LIVE: frozenset[str] = frozenset({"paused", "running", "stepping", "pausing", "realtime"})


class RunFacts(Protocol):
    """The facts the run state is derived from (:class:`ui.session.controller.SessionController` has
    them all)."""

    @property
    def setting_up(self) -> bool:
        """A new session (or fork) is being set up."""
        ...

    @property
    def room(self) -> Room | None:
        """The session on screen (None: none yet); its ``status`` says whether it ended."""
        ...

    @property
    def mode(self) -> str:
        """``simulation``, or ``realtime`` once a human has joined."""
        ...

    @property
    def task(self) -> asyncio.Task[Any] | None:
        """The simulation (or real-time) loop, while there is one."""
        ...

    @property
    def control(self) -> RunControl:
        """The simulation loop's permissions: ``paused`` and ``parked``."""
        ...

    @property
    def stepping(self) -> bool:
        """A Step's trigger is in flight."""
        ...


def state_of(controller: RunFacts) -> RunState:
    """The run state of the controller's session (see the module docstring)."""
    if controller.setting_up:
        return "setting-up"
    room = controller.room
    if room is None:
        return "none"
    if room.status != "running":
        return "ended"
    if controller.mode == "realtime":
        return "realtime"
    task = controller.task
    if task is None or task.done() or controller.control.parked:
        return "paused"
    if controller.stepping:
        return "stepping"
    if controller.control.paused:
        return "pausing"
    return "running"


def describe(controller: RunFacts) -> str:
    """The status bar's run-state text, e.g. ``Pausing…`` or ``Ended (interrupted)``."""
    state = state_of(controller)
    if state == "ended" and controller.room is not None:
        return f"Ended ({controller.room.status})"
    return RUN_STATE_TEXT[state]
