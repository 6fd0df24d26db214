"""The commands that change the live room's participants and the agents' minds.

A part of :class:`ui.session.controller.SessionController`, kept apart because the controller's
own concern is the session's life: set-up, run control, the human participant and shutdown. Each
command goes through the controller's ``guarded`` boundary (:class:`ui.session.live.LiveSession`),
so a failure becomes one clear message and the session keeps everything it had.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from playground import domain
from playground.settings import PRESETS, ProactivitySettings
from ui.session.live import LiveSession


class RoomCommands:
    """Participants (add, remove, policy, proactivity) and minds (thoughts, memories).

    Args:
        session: The controller: the room on screen, its settings, the failure boundary.
        notify: Shows a one-line notice in the window.
        thought_deleted: Told ``(agent, thought id)`` when the user deleted a thought (the
            window offers an undo).
    """

    def __init__(
        self,
        session: LiveSession,
        *,
        notify: Callable[[str], None],
        thought_deleted: Callable[[str, int], None],
    ) -> None:
        self._session = session
        self._notify = notify
        self._thought_deleted = thought_deleted

    # -- participants ------------------------------------------------------------------------------

    async def add_participant(
        self,
        persona: domain.Persona,
        preset: str | None = None,
        policy: domain.Policy = "inner-thoughts",
    ) -> None:
        s = self._session

        async def go() -> None:
            room = s.require_room()
            await room.add_agent(persona, PRESETS[preset or s.settings.preset], policy=policy)

        await s.guarded("Add participant", go)

    async def set_policy(self, name: str, policy: domain.Policy) -> None:
        """Change an AI participant's turn-taking policy; it applies from the next trigger."""

        async def go() -> None:
            self._session.require_room().set_policy(name, policy)

        await self._session.guarded("Turn-taking policy", go)

    async def remove_participant(self, name: str) -> None:
        async def go() -> None:
            self._session.require_room().remove_participant(name)

        await self._session.guarded("Remove participant", go)

    async def set_proactivity(self, name: str, proactivity: ProactivitySettings) -> None:
        async def go() -> None:
            from ui.proactivity_text import summary

            self._session.require_room().set_proactivity(name, proactivity)
            self._notify(
                f"{name}'s proactivity is now {summary(proactivity)}; it applies from the next trigger."
            )

        await self._session.guarded("Participant settings", go)

    # -- minds ------------------------------------------------------------------------------------

    async def force_express(self, agent: str, thought_id: int) -> None:
        await self._session.guarded(
            "Express thought", lambda: self._session.require_room().force_express(agent, thought_id)
        )

    async def delete_thought(self, agent: str, thought_id: int) -> None:
        async def go() -> None:
            self._session.require_room().delete_thought(agent, thought_id)
            self._thought_deleted(agent, thought_id)

        await self._session.guarded("Delete thought", go)

    async def restore_thought(self, agent: str, thought_id: int) -> bool:
        """Undo the deletion of a thought (Ctrl+Z, or Undo in the status bar); True when it is back."""

        async def go() -> bool:
            self._session.require_room().restore_thought(agent, thought_id)
            return True

        return bool(await self._session.guarded("Undo delete", go))

    async def add_memory(self, agent: str, kind: str, text: str, weight: float) -> None:
        await self._session.guarded(
            "Add memory",
            lambda: self._session.require_room().add_memory(
                agent, cast(domain.MemoryKind, kind), text, weight
            ),
        )

    async def edit_memory(
        self, agent: str, memory_id: int, kind: str, text: str, weight: float
    ) -> None:
        await self._session.guarded(
            "Edit memory",
            lambda: self._session.require_room().edit_memory(
                agent, memory_id, kind=cast(domain.MemoryKind, kind), text=text, weight=weight
            ),
        )

    async def delete_memory(self, agent: str, memory_id: int) -> None:
        async def go() -> None:
            self._session.require_room().delete_memory(agent, memory_id)

        await self._session.guarded("Delete memory", go)
