"""Algorithm 1 (docs/spec.md §1.5 Participation) as a pure function: whether one agent speaks at a
trigger, and with which thought, given its scored thoughts and how the turn relates to it.

Who then takes the floor among those that want it is the room's concern
(:mod:`playground.room.floor`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from playground import domain
from playground.settings import ProactivitySettings


@dataclass(frozen=True)
class Scored:
    """A thought with its current motivation score."""

    thought_id: int
    system: int
    score: float


#: How a turn relates to one participant (``Decision.turn_type``).
Relation = Literal["open", "allocated-self", "allocated-other"]


def relation(turn_type: domain.TurnType | None, me: str) -> Relation:
    """How the latest utterance's turn type relates to ``me``: open, allocated-self or allocated-other."""
    if turn_type is None or turn_type.kind == "open" or not turn_type.addressee:
        return "open"
    return (
        "allocated-self" if turn_type.addressee.casefold() == me.casefold() else "allocated-other"
    )


def decide(
    *,
    agent: str,
    step: int,
    trigger: domain.TriggerKind,
    thoughts: Sequence[Scored],
    turn_type: domain.TurnType | None,
    settings: ProactivitySettings,
    rng: random.Random,
) -> domain.Decision:
    """Decide whether ``agent`` speaks, and with which thought.

    - Open turn: the best thought if its score ≥ imThreshold; otherwise, with probability
      system1Prob, a System-1 thought; otherwise silence.
    - Allocated to this agent: speak with the best thought.
    - Allocated to someone else: speak (interrupt) only if the best score ≥ interruptThreshold.

    The rng is consulted only on the System-1 branch, so seeded runs stay reproducible.
    """
    rel = relation(turn_type, agent)
    base = {"agent": agent, "step": step, "trigger": trigger, "turn_type": rel}
    if not thoughts:
        return domain.Decision(**base, action="silent", reason="no thoughts to express")
    best = max(thoughts, key=lambda s: (s.score, -s.thought_id))
    base["best_score"] = best.score

    def speak(pick: Scored, reason: str, *, threshold: float | None = None) -> domain.Decision:
        return domain.Decision(
            **base,
            action="speak",
            thought_id=pick.thought_id,
            score=pick.score,
            threshold=threshold,
            reason=reason,
        )

    def silent(reason: str, *, threshold: float) -> domain.Decision:
        return domain.Decision(
            **base, action="silent", score=best.score, threshold=threshold, reason=reason
        )

    if rel == "allocated-self":
        return speak(best, f"addressed by name; answers with its best thought ({best.score:.2f})")
    if rel == "allocated-other":
        thr = settings.interrupt_threshold
        who = turn_type.addressee if turn_type else "?"
        if best.score >= thr:
            return speak(
                best,
                f"turn belongs to {who}, but best score {best.score:.2f} ≥ interruptThreshold {thr:g}: interrupts",
                threshold=thr,
            )
        return silent(
            f"turn belongs to {who}; best score {best.score:.2f} < interruptThreshold {thr:g}",
            threshold=thr,
        )
    thr = settings.im_threshold
    if best.score >= thr:
        return speak(best, f"best score {best.score:.2f} ≥ imThreshold {thr:g}", threshold=thr)
    system1 = [s for s in thoughts if s.system == 1]
    if system1 and settings.system1_prob > 0:
        draw = rng.random()
        if draw < settings.system1_prob:
            pick = max(system1, key=lambda s: (s.score, -s.thought_id))
            return speak(
                pick,
                f"best score {best.score:.2f} < imThreshold {thr:g}; System-1 reply drawn (p={settings.system1_prob:g}): thought #{pick.thought_id}, score {pick.score:.2f}",
                threshold=thr,
            )
        return silent(
            f"best score {best.score:.2f} < imThreshold {thr:g}; no System-1 reply drawn (p={settings.system1_prob:g})",
            threshold=thr,
        )
    return silent(f"best score {best.score:.2f} < imThreshold {thr:g}", threshold=thr)
