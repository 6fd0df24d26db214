"""Who can sit in a room besides an AI agent: a human, and a simulated user.

The records only: how a human joins is in :mod:`playground.room.seating`, and how a simulated
user takes turns and speaks is in :mod:`playground.room.simulated`. An AI agent is an
:class:`~playground.inner_thoughts.agent.Agent`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from playground import domain
from playground.cognition.user import UserSimulator
from playground.domain.simulated_user import HiddenState, UserProfile
from playground.inner_thoughts.agent import Agent

#: The default chance that a simulated user speaks when nobody addressed it.
DEFAULT_SPEAK_PROBABILITY = 0.3


@dataclass
class Human:
    """A person in the room (their messages trigger the agents; they do not think in the engine)."""

    name: str
    kind: domain.ParticipantKind = "human"
    last_spoke: int = 0
    turns: int = 0


@dataclass
class SimulatedUser:
    """A simulated user seated in a room.

    Attributes:
        name: its name in the room (the profile's name unless another was given).
        profile: its private profile.
        simulator: the mind that answers for it.
        speak_probability: its chance of speaking when not addressed.
        states: its hidden state at each of its messages, oldest first.
    """

    name: str
    profile: UserProfile
    simulator: UserSimulator
    speak_probability: float = DEFAULT_SPEAK_PROBABILITY
    kind: domain.ParticipantKind = "simulated"
    last_spoke: int = 0
    turns: int = 0
    states: list[HiddenState] = field(default_factory=list)


#: Anyone seated in a room.
Participant: TypeAlias = Agent | Human | SimulatedUser
