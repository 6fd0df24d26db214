"""RunControl: play / pause / single step / stop for a simulation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class RunControl:
    """Play / pause / single step / stop for a simulation (the asyncio form of a step controller)."""

    def __init__(self) -> None:
        self._go = asyncio.Event()
        self._go.set()
        self._steps: int | None = None
        self.stopped = False
        self.handing_over = False
        self.on_auto_pause: Callable[[], None] | None = (
            None  # told when a single step used up its permission
        )
        #: True while the loop waits for permission: no step is in flight.
        self.parked = False
        #: Told when the loop starts waiting for permission (a pause took effect, a step ended).
        self.on_parked: Callable[[], None] | None = None

    def play(self) -> None:
        self._steps = None
        self.parked = False
        self._go.set()

    def pause(self) -> None:
        self._go.clear()

    def step(self) -> None:
        self._steps = 1
        self.parked = False
        self._go.set()

    def stop(self) -> None:
        self.stopped = True
        self.parked = False
        self._go.set()

    def hand_over(self) -> None:
        """Stop the simulation loop but keep the session open (a human joins: real time takes over)."""
        self.handing_over = True
        self.stop()

    @property
    def paused(self) -> bool:
        return not self._go.is_set()

    async def wait_for_step_permission(self) -> bool:
        """Wait until the next step may run; False once stopped.

        While it waits, ``parked`` is True and ``on_parked`` was told: the step before has ended.
        """
        if not self._go.is_set():
            self.parked = True
            if self.on_parked is not None:
                self.on_parked()
        await self._go.wait()
        self.parked = False
        if self.stopped:
            return False
        if self._steps is not None:
            self._steps -= 1
            if self._steps <= 0:
                self._steps = None
                self._go.clear()
                if self.on_auto_pause is not None:
                    self.on_auto_pause()
        return True
