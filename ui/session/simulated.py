"""The controller's commands for STORM simulated users: their profiles and seating them.

A part of :class:`ui.session.controller.SessionController`, as
:class:`ui.session.room_commands.RoomCommands` is. Profiles live as TOML files in
``<personas>/users`` (``playground.storm.profiles``); a simulated user joins the live room through
``Room.add_simulated_user`` with the simulator the session's engine provides
(``playground.storm.user.simulator_for``). Every command goes through the controller's
``guarded`` boundary (:class:`ui.session.live.LiveSession`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ui.session.live import LiveSession

if TYPE_CHECKING:
    from playground.domain.simulated_user import UserProfile
    from playground.room.room import Room

#: The speak probability the window offers by default (the room's own default when None).
DEFAULT_SPEAK_PROBABILITY = 0.3


@dataclass(frozen=True)
class SimulatedSeat:
    """A simulated user to seat: its profile and its speak probability when not addressed.

    Attributes:
        profile: The private profile it plays.
        speak_probability: Chance to speak after a message not addressed to it (None: the
            room's default).
    """

    profile: UserProfile
    speak_probability: float | None = None


class SimulatedUsers:
    """Profiles (list, generate, save) and simulated users (seat at start, add mid-session).

    Args:
        session: The controller: the room on screen, its settings and engine, the failure
            boundary.
        personas_dir: The persona library; profiles are saved in its ``users`` folder.
        notify: Shows a one-line notice in the window.
    """

    def __init__(
        self, session: LiveSession, *, personas_dir: str | Path, notify: Callable[[str], None]
    ) -> None:
        self._session = session
        self._personas_dir = Path(personas_dir)
        self._notify = notify
        self._users_dir: Path | None = None

    @property
    def users_dir(self) -> Path:
        """Where simulated users' profiles are saved: ``<personas>/users`` unless set."""
        return self._users_dir or self._personas_dir / "users"

    @users_dir.setter
    def users_dir(self, path: str | Path) -> None:
        self._users_dir = Path(path)

    def user_profiles(self) -> list[UserProfile]:
        """The saved profiles (none when the folder does not exist yet).

        Raises:
            ProfileError: a profile file is invalid (the message names the file and field).
        """
        from playground.storm import profiles

        if not self.users_dir.is_dir():
            return []
        return list(profiles.load_profiles(self.users_dir))

    def save_profile(self, profile: UserProfile) -> Path:
        """Write ``profile`` to its TOML file in :attr:`users_dir`.

        Raises:
            ProfileError: the profile cannot be written (names the file and field).
        """
        from playground.storm import profiles

        self.users_dir.mkdir(parents=True, exist_ok=True)
        return Path(profiles.save_profile(profile, self.users_dir))

    def generate_profile(
        self, seed: int, *, task: str | None, difficulty: int | None, uncertainty: int
    ) -> UserProfile:
        """A profile drawn from the paper's pools (offline, reproducible by seed).

        Raises:
            PlaygroundError: the task is not known or a value is out of range.
        """
        from playground.storm import profiles

        return profiles.generate_profile(
            seed, task=task, difficulty=difficulty, uncertainty=uncertainty
        )

    async def add_simulated_user(
        self, profile: UserProfile, *, speak_probability: float | None = None
    ) -> None:
        """Seat a simulated user in the live session (Participants ▸ Add simulated user…)."""

        async def go() -> None:
            room = self._session.require_live_room()
            names = await self.seat(room, [SimulatedSeat(profile, speak_probability)])
            self._notify(f"{names[0]} joined as a simulated user.")

        await self._session.guarded("Add simulated user", go)

    async def seat(self, room: Room, seats: Sequence[SimulatedSeat]) -> list[str]:
        """Seat each of ``seats`` in ``room`` under a name nobody there has; their names.

        Raises:
            PlaygroundError: the room or the engine refused (the message says why).
        """
        from playground.storm.user import simulator_for

        seated: list[str] = []
        engine, settings = self._session.engine, self._session.settings
        for seat in seats:
            name = _free_name(seat.profile.name, set(room.participants))
            assert engine is not None  # the room's: the two are set and cleared together
            simulator = simulator_for(
                engine,
                seed=settings.engine.seed,
                short_messages=settings.room.simulated_short_messages,
            )
            result: Any = room.add_simulated_user(
                seat.profile,
                simulator,
                speak_probability=seat.speak_probability,
                name=name,
            )
            if inspect.isawaitable(result):
                await result
            seated.append(name)
        return seated


def _free_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3``… when someone in the room has it already."""
    if name not in taken:
        return name
    n = 2
    while f"{name}{n}" in taken:
        n += 1
    return f"{name}{n}"
