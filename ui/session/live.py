"""What the session controller's parts use of it: the session on screen and the failure boundary.

The parts (:mod:`ui.session.room_commands`, :mod:`ui.session.simulated`, :mod:`ui.session.study`)
take the controller typed as :class:`LiveSession`, so each names exactly what it reads, and none
can reach the rest of the controller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from playground import factory
    from playground.room.room import Room
    from playground.settings import Settings

T = TypeVar("T")


class LiveSession(Protocol):
    """The session on screen, as the controller's parts see it."""

    @property
    def settings(self) -> Settings:
        """The settings of the session on screen (and of the next one)."""
        ...

    @property
    def engine(self) -> factory.Engine | None:
        """The engine of the session on screen (set and cleared with its room)."""
        ...

    def require_room(self) -> Room:
        """The session on screen.

        Raises:
            PlaygroundError: there is none.
        """
        ...

    def require_live_room(self) -> Room:
        """The session on screen, if it has not ended.

        Raises:
            PlaygroundError: there is none.
            SessionEnded: it has ended.
        """
        ...

    async def guarded(self, what: str, fn: Callable[[], Awaitable[T]]) -> T | None:
        """Run a command: a failure becomes one clear message (None is returned), never a crash."""
        ...
