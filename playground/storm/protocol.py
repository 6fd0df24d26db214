"""The design of a batch of dyadic STORM runs: its protocol, conditions and draws.

docs/spec.md §2.1 and §2.9; STORM paper §2.2 and §3.1. A batch is profiles × uncertainties ×
profile-access modes (:mod:`playground.storm.run` runs it on the experiment machinery):

- a **draw** is one profile: ``experiment_draws`` holds ``participants = [user, "Assistant"]``,
  ``initiator = user`` and ``icebreaker = the task``; its seed drives that profile's dialogues;
- a **condition** is one (uncertainty, profile access) pair, labelled e.g. ``u40/profile`` (the
  assistant sees the masked profile) or ``u40/no-profile`` (the dialogue only); every profile
  runs under every condition (a paired design, as the paper's Table 2 compares them).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from playground import domain, errors
from playground.domain.simulated_user import UNCERTAINTIES, UserProfile
from playground.experiments.protocol import BatchProtocol, Draw
from playground.storm.assistant import ASSISTANT_NAME

AssistantKind = Literal["plain", "inner-thoughts"]
ASSISTANTS: tuple[AssistantKind, ...] = ("plain", "inner-thoughts")
#: The assistant's turn-taking policy by kind: the plain assistant answers when addressed (in a
#: dyad, always), the Inner Thoughts assistant decides by its motivation.
POLICY: dict[AssistantKind, domain.Policy] = {
    "plain": "reactive",
    "inner-thoughts": "inner-thoughts",
}
#: The simulated user's speak probability in a dyad: it always writes when it is its turn.
USER_SPEAK_PROBABILITY = 1.0


def condition_label(uncertainty: int, access: bool) -> str:
    """``u40/profile`` (the assistant sees the masked profile) or ``u40/no-profile``."""
    return f"u{uncertainty}/{'profile' if access else 'no-profile'}"


class StormProtocol(BatchProtocol):
    """What defines a batch of dyadic STORM runs; its id is a hash of this.

    ``profiles`` are the users as drawn or loaded (before each uncertainty is applied);
    ``model`` is the user's model, ``agent_model`` the assistant's (both ``offline`` on the
    offline engine). The judge is not part of it: judging never changes a dialogue.
    """

    id_prefix = "s"

    profiles: tuple[UserProfile, ...] = Field(min_length=1)
    uncertainties: tuple[int, ...] = Field(min_length=1)
    profile_access: tuple[bool, ...] = Field(min_length=1)
    turns: int = Field(ge=1, le=200)
    seed: int
    assistant: AssistantKind = "plain"
    #: An assistant reply over 150 characters: ``cut`` at a word boundary, or ``keep`` it whole.
    reply_limit: Literal["cut", "keep"] = "cut"
    #: The user's chance of writing again after an Inner Thoughts assistant stayed silent.
    user_speak_probability: float = Field(USER_SPEAK_PROBABILITY, ge=0, le=1)
    agent_model: str

    @property
    def conditions(self) -> tuple[str, ...]:
        """Every (uncertainty, access) label, uncertainty first."""
        return tuple(condition_label(u, a) for u in self.uncertainties for a in self.profile_access)

    def cells(self) -> dict[str, tuple[int, bool]]:
        """Each condition label's (uncertainty, profile access)."""
        return {
            condition_label(u, a): (u, a) for u in self.uncertainties for a in self.profile_access
        }


def check_uncertainties(values: Sequence[int], flag: str = "--uncertainties") -> tuple[int, ...]:
    """The paper's levels, each once, in the order given.

    Raises:
        SettingsError: a value that is not one of 0, 40, 60, 80 (named with the flag).
    """
    out: list[int] = []
    for u in values:
        if u not in UNCERTAINTIES:
            raise errors.SettingsError(
                f"{flag}: {u} is not an uncertainty level; choose from"
                f" {', '.join(str(x) for x in UNCERTAINTIES)} (percent of unknown attributes)"
            )
        if u not in out:
            out.append(u)
    if not out:
        raise errors.SettingsError(f"{flag}: give at least one uncertainty level")
    return tuple(out)


def draws(protocol: StormProtocol) -> list[Draw]:
    """One draw per profile: the user, the assistant, the user opening with the task."""
    out = []
    for i, p in enumerate(protocol.profiles):
        rng = random.Random(f"{protocol.seed}:storm:{i}")
        out.append(
            Draw(
                index=i,
                seed=rng.randrange(2**31),
                participants=(p.name, ASSISTANT_NAME),
                initiator=p.name,
                icebreaker=p.task.task,
            )
        )
    return out
