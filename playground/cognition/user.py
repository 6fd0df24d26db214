"""The UserSimulator protocol: what a room asks of the mind behind a simulated user.

A :class:`UserSimulator` turns a private profile and a :class:`UserView` (the visible messages,
its own earlier hidden states, who addressed it) into a
:class:`~playground.domain.simulated_user.UserTurn`: a message and the hidden state behind it.
``origin`` names the mind ("offline engine" or the model), as the room's other participants do.
The room (engine layer) seats users against this protocol; the simulators themselves (a model,
or offline) are in :mod:`playground.storm.user`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from playground.domain.simulated_user import HiddenState, UserProfile, UserTurn


@dataclass(frozen=True)
class UserView:
    """What a simulated user sees when it is its turn.

    Attributes:
        me: its name in the room.
        messages: the visible conversation so far, ``(speaker, text)`` in order.
        previous: its own hidden states at its earlier turns, oldest first.
        addressed_by: who addressed it (handed it the turn), or None.
    """

    me: str
    messages: list[tuple[str, str]] = field(default_factory=list)
    previous: list[HiddenState] = field(default_factory=list)
    addressed_by: str | None = None


class UserSimulator(Protocol):
    """A mind for simulated users; one simulator may answer for several users."""

    origin: str

    async def turn(self, profile: UserProfile, view: UserView) -> UserTurn:
        """The user's next message and hidden state.

        Raises:
            LLMError: the model could not be used, or gave no usable message.
        """
        ...
