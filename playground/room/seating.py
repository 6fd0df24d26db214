"""Seating and removing the room's participants: AI agents, humans and simulated users.

A part the room holds (:class:`playground.room.room.Room` ``.seating``), kept apart because the
room's own concern is one trigger's turn-taking; this module holds how participants join and leave.
It owns the participants' colour order; the participants themselves are the room's shared state.
"""

from __future__ import annotations

import asyncio
import itertools

from playground import domain, errors, events
from playground.cognition.user import UserSimulator
from playground.domain.simulated_user import UserProfile
from playground.inner_thoughts.agent import Agent
from playground.room import simulated
from playground.room.participants import Human, SimulatedUser
from playground.room.state import RoomState
from playground.settings import PRESETS, ProactivitySettings


class Seating:
    """Participants: the agents, humans and simulated users in the room, joining and leaving."""

    def __init__(self, room: RoomState) -> None:
        self.room = room
        self._colors = itertools.count()

    async def add_agent(
        self,
        persona: domain.Persona,
        proactivity: ProactivitySettings | None = None,
        *,
        policy: domain.Policy = "inner-thoughts",
        defer_memories: bool = False,
    ) -> Agent:
        """Add an AI participant and load its persona into long-term memory.

        With ``defer_memories`` the memories are embedded in the background (agents in the order
        they were added, so ids do not depend on timing) and the first retrieval waits for them:
        the command line seats the agents and posts the icebreaker while the model still loads.
        """
        self.room.require_open()
        if persona.name in self.room.participants:
            raise errors.PlaygroundError(
                f"a participant named {persona.name!r} is already in the room"
            )
        proactivity = proactivity or PRESETS[self.room.settings.preset]
        agent = Agent(
            persona,
            proactivity,
            cognition=self.room.cognition,
            embedder=self.room.embedder,
            memory_ids=self.room.memory_ids,
            room_settings=self.room.settings.room,
            seed=self.room.seed,
            emit=self.room.emit,
            policy=policy,
        )
        self.room.participants[agent.name] = agent
        self.room.emit(
            events.ParticipantJoined(
                name=agent.name,
                participant_kind="ai",
                persona=persona,
                proactivity=proactivity.model_dump(),
                color_index=next(self._colors),
                policy=policy,
            )
        )
        self.room.follow_seats(f"{agent.name} ({policy}) joined")
        if defer_memories:
            before = self.room.memories_loading

            async def load() -> None:
                if before is not None:
                    await before
                await agent.load_persona()

            self.room.memories_loading = asyncio.ensure_future(load())
        else:
            await self.room.embeddings_ready()
            await agent.load_persona()
        self.room.set_state(agent.name, "idle")
        return agent

    def add_human(self, name: str, *, remote: bool = False) -> Human:
        """A person joins: at the window, or from a browser (``remote``, an invited seat).

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: the name is empty or already taken.
        """
        self.room.require_open()
        if not name.strip() or name in self.room.participants:
            raise errors.PlaygroundError(
                f"cannot join as {name!r}: the name is empty or already taken"
            )
        human = Human(name=name)
        self.room.participants[name] = human
        self.room.emit(
            events.ParticipantJoined(
                name=name,
                participant_kind="human",
                color_index=next(self._colors),
                remote=remote,
            )
        )
        return human

    def set_presence(self, name: str, *, online: bool) -> None:
        """A remote human's browser connected or lost its connection (recorded; taken also
        after the session ended, when the browsers are told and close).

        Raises:
            PlaygroundError: ``name`` is not a human participant.
        """
        if not isinstance(self.room.participants.get(name), Human):
            raise errors.PlaygroundError(f"{name!r} is not a human participant")
        self.room.emit(events.PresenceChanged(name=name, online=online))

    def add_simulated_user(
        self,
        profile: UserProfile,
        simulator: UserSimulator,
        *,
        speak_probability: float | None = None,
        name: str | None = None,
    ) -> SimulatedUser:
        """Seat a simulated user (see :mod:`playground.room.simulated` for its turn taking).

        Args:
            profile: its private profile (snapshotted into the session, never shown to others).
            simulator: the mind that answers for it.
            speak_probability: its chance of speaking unaddressed; the room setting if None.
            name: its name in the room; the profile's name if None.

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: the name is taken, or the probability is not between 0 and 1.
        """
        self.room.require_open()
        name = name or profile.name
        if not name.strip() or name in self.room.participants:
            raise errors.PlaygroundError(
                f"cannot seat the simulated user {name!r}: the name is empty or already taken"
            )
        p = self.room.settings.room.simulated_speak_probability if speak_probability is None else speak_probability  # fmt: skip
        if not 0.0 <= p <= 1.0:
            raise errors.PlaygroundError(f"speak probability of {name}: {p} is not between 0 and 1")
        user = SimulatedUser(name, profile, simulator, speak_probability=p)
        self.room.participants[name] = user
        self.room.emit(
            events.ParticipantJoined(
                name=name,
                participant_kind="simulated",
                proactivity={"speak_probability": p},  # its seating, read back by a fork
                color_index=next(self._colors),
                profile=profile,
            )
        )
        self.room.set_state(name, "idle")
        return user

    async def simulated_turn(self, name: str) -> domain.Message:
        """Make a simulated user speak now, whoever has the floor (e.g. to open a STORM dyad).

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: ``name`` is not a simulated user in the room.
            LLMError: its simulator's model could not be used.
        """
        self.room.require_open()
        user = self.room.participants.get(name)
        if not isinstance(user, SimulatedUser):
            raise errors.PlaygroundError(f"{name!r} is not a simulated user in the room")
        self.room.generation += 1
        self.room.set_state(name, "speaking")
        try:
            msg = await simulated.speak(self.room, user, addressed_by=None)
        finally:
            self.room.set_state(name, "idle")
        assert msg is not None  # no generation given: never stale
        self.room.arrived.set()
        return msg

    def remove_participant(self, name: str) -> None:
        """A participant leaves.

        Raises:
            SessionEnded: the session has ended.
        """
        self.room.require_open()
        if self.room.participants.pop(name, None) is not None:
            self.room.floor.left(name)  # the addressee left: nobody is owed the turn
            self.room.generation += 1
            self.room.emit(events.ParticipantLeft(name=name))
            self.room.follow_seats(f"{name} left")
