"""The commands that change the live room's participants and the agents' minds.

A part of :class:`ui.session.controller.SessionController` (it inherits them), kept apart because the
controller's own concern is the session's life: set-up, run control, the human participant and
shutdown. Both are a :class:`ui.session.core.SessionCore`, which owns the session's state. Each
command goes through the core's ``guarded`` boundary, so a failure becomes one clear message and
the session keeps everything it had.
"""

from __future__ import annotations

from typing import cast

from playground import domain
from playground.settings import PRESETS, ProactivitySettings
from ui.session.core import SessionCore


class RoomCommands(SessionCore):
    """Participants (add, remove, policy, proactivity) and minds (thoughts, memories)."""

    # -- participants ------------------------------------------------------------------------------

    async def add_participant(
        self,
        persona: domain.Persona,
        preset: str | None = None,
        policy: domain.Policy = "inner-thoughts",
    ) -> None:
        async def go() -> None:
            room = self._require_room()
            await room.add_agent(persona, PRESETS[preset or self.settings.preset], policy=policy)

        await self.guarded("Add participant", go)

    async def set_policy(self, name: str, policy: domain.Policy) -> None:
        """Change an AI participant's turn-taking policy; it applies from the next trigger."""

        async def go() -> None:
            self._require_room().set_policy(name, policy)

        await self.guarded("Turn-taking policy", go)

    async def remove_participant(self, name: str) -> None:
        async def go() -> None:
            self._require_room().remove_participant(name)

        await self.guarded("Remove participant", go)

    async def set_proactivity(self, name: str, proactivity: ProactivitySettings) -> None:
        async def go() -> None:
            from ui.proactivity_text import summary

            self._require_room().set_proactivity(name, proactivity)
            self.notice.emit(
                f"{name}'s proactivity is now {summary(proactivity)}; it applies from the next trigger."
            )

        await self.guarded("Participant settings", go)

    # -- minds ------------------------------------------------------------------------------------

    async def force_express(self, agent: str, thought_id: int) -> None:
        await self.guarded(
            "Express thought", lambda: self._require_room().force_express(agent, thought_id)
        )

    async def delete_thought(self, agent: str, thought_id: int) -> None:
        async def go() -> None:
            self._require_room().delete_thought(agent, thought_id)
            self.thought_deleted_by_user.emit(agent, thought_id)

        await self.guarded("Delete thought", go)

    async def restore_thought(self, agent: str, thought_id: int) -> bool:
        """Undo the deletion of a thought (Ctrl+Z, or Undo in the status bar); True when it is back."""

        async def go() -> bool:
            self._require_room().restore_thought(agent, thought_id)
            return True

        return bool(await self.guarded("Undo delete", go))

    async def add_memory(self, agent: str, kind: str, text: str, weight: float) -> None:
        await self.guarded(
            "Add memory",
            lambda: self._require_room().add_memory(
                agent, cast(domain.MemoryKind, kind), text, weight
            ),
        )  # type: ignore[arg-type]

    async def edit_memory(
        self, agent: str, memory_id: int, kind: str, text: str, weight: float
    ) -> None:
        await self.guarded(
            "Edit memory",
            lambda: self._require_room().edit_memory(
                agent, memory_id, kind=cast(domain.MemoryKind, kind), text=text, weight=weight
            ),
        )  # type: ignore[arg-type]

    async def delete_memory(self, agent: str, memory_id: int) -> None:
        async def go() -> None:
            self._require_room().delete_memory(agent, memory_id)

        await self.guarded("Delete memory", go)
