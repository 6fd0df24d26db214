"""One trigger of the room's loop, as its stages share it: what fired (a new message or a
pause), on which message, at which generation, and who listens.

:meth:`playground.room.room.Room.step_once` makes one per step and hands it to each stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground import domain
from playground.inner_thoughts.agent import Agent
from playground.room.participants import SimulatedUser
from playground.room.timeline import Timeline


@dataclass(frozen=True)
class Trigger:
    """One trigger, as its stages share it: what fired, on which message, and who listens.

    The listeners are fixed when the trigger fires (a policy changed meanwhile applies from the
    next trigger, except where a stage reads an agent's policy again).
    """

    kind: domain.TriggerKind
    latest: domain.Message
    generation: int
    silent_steps: int
    #: The agents that did not post the triggering message.
    listeners: list[Agent]
    #: The simulated users that did not post it (they answer when addressed).
    users: list[SimulatedUser]
    #: The listeners that think (policy ``inner-thoughts``).
    thinkers: list[Agent]
    #: A next-speaker agent is in the room: the predictor is asked.
    predicting: bool
    #: Where the trigger's time goes, stage by stage (published when it ends).
    timeline: Timeline

    @property
    def names(self) -> list[str]:
        """Everyone who listens: the agents, then the simulated users."""
        return [*(a.name for a in self.listeners), *(u.name for u in self.users)]

    @property
    def said(self) -> str:
        """Who posted the triggering message ("" for a pause)."""
        return self.latest.speaker if self.kind == "new_message" else ""
