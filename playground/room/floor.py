"""The floor: who takes the turn at a trigger once every participant has decided.

The turn every participant decides against (:func:`floor_turn`), the baseline agents' decisions
(:func:`baseline`, :func:`next_speaker_turn`), arbitration between those that want to speak
(interruptions, the addressee, the next-speaker pick, the highest score: :func:`arbitrate`) and
how each decision reads once the floor is settled (:func:`outcome`, "lost the floor to …").
One agent's own decision is Algorithm 1, in :mod:`playground.inner_thoughts.participation`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from playground import domain
from playground.inner_thoughts import participation


def floor_turn(
    trigger: domain.TriggerKind, latest: domain.TurnType, pending: domain.TurnType | None
) -> domain.TurnType:
    """The turn every agent decides against at a trigger.

    - A pause opens the floor: after silence the turn is open to anyone, whoever was addressed.
    - A message that hands the turn to someone allocates it to them.
    - An open message leaves a pending allocation in force: an agent that interrupted the
      addressee spoke instead of them, not for them, so the addressee may still answer.

    Args:
        trigger: what fired.
        latest: the predicted turn type of the latest message.
        pending: an allocation an interruption left unanswered, if any.
    """
    if trigger == "pause":
        return domain.TurnType(message_id=latest.message_id, kind="open", origin="pause")
    if latest.kind == "allocated":
        return latest
    return pending or latest


def _tier(d: domain.Decision, prediction_first: bool) -> int:
    """Who goes first when several want the floor (lower first); see :func:`arbitrate`."""
    if d.policy == "inner-thoughts" and d.turn_type == "allocated-other":
        return 0
    if d.turn_type == "allocated-self":
        return 1
    if d.policy == "simulated":
        return (
            2  # a simulated user stands in for a person speaking up: see playground.room.simulated
        )
    if d.policy == "next-speaker":
        return 2 if prediction_first else 4
    return 3


def arbitrate(
    wanting: Sequence[domain.Decision], rng: random.Random, *, prediction_first: bool = True
) -> domain.Decision | None:
    """Who takes the floor among the agents that decided to speak.

    1. An interrupter: an Inner Thoughts agent the turn was not allocated to decides to speak only
       when its best score reaches interruptThreshold, which "overrides standard turn allocation"
       (the paper): it takes the floor from the addressee. If several do, the highest score wins.
    2. Otherwise the addressee, whatever its score or policy. Then a simulated user that speaks
       up unaddressed (it stands in for a person, whom no agent's motivation holds back; it
       shares the next-speaker pick's place below, a tie being drawn).
    3. Otherwise the agent the next-speaker predictor picked: the prediction stands for the turn
       allocation of that condition, so in a mixed room it goes before Inner Thoughts agents that
       merely passed imThreshold on an open turn (they can still take it by interrupting).
       With ``prediction_first`` False (room setting ``mixed_floor = "motivation-first"``) it
       goes after them instead: it speaks only when no Inner Thoughts agent wants an open turn.
    4. Otherwise (an open turn) the highest score.

    Scores are compared as they are shown (:func:`shown`, 2 decimals): scores that read the same
    are a tie, broken by a draw from ``rng`` (the room seeds it by session seed and step, so runs
    stay reproducible), rather than by who joined the room first.
    """
    if not wanting:
        return None
    first = min(_tier(d, prediction_first) for d in wanting)
    group = [d for d in wanting if _tier(d, prediction_first) == first]
    top = max(shown(d.score) for d in group)
    tied = [d for d in group if shown(d.score) == top]
    return rng.choice(tied) if len(tied) > 1 else tied[0]


#: Decimals a motivation score is shown and compared with (window, transcript, decision reasons).
SCORE_DECIMALS = 2


def shown(score: float | None) -> float:
    """A score as the user reads it: rounded to :data:`SCORE_DECIMALS`; two agents whose scores
    read the same are tied (a score that differs only past the second decimal wins nothing)."""
    return round(score or 0.0, SCORE_DECIMALS)


def baseline(
    *,
    agent: str,
    policy: domain.Policy,
    step: int,
    trigger: domain.TriggerKind,
    turn_type: domain.TurnType | None,
    chosen: str | None,
    probability: float | None,
    rule: str,
    speaker: str = "",
) -> domain.Decision:
    """A baseline agent's decision: it has no thoughts and no motivation score.

    - ``reactive`` speaks only when the turn is allocated to it by name.
    - ``next-speaker`` speaks when the room gave it the turn from the predictor's answer
      (``chosen``, explained by ``rule``).
    """
    rel = participation.relation(turn_type, agent)
    base = {"agent": agent, "step": step, "trigger": trigger, "turn_type": rel, "policy": policy}
    if policy == "reactive":
        if rel == "allocated-self":
            return domain.Decision(
                **base,
                action="speak",
                reason=f"reactive: addressed by name{f' by {speaker}' if speaker else ''}; answers",
            )
        if rel == "allocated-other" and turn_type is not None:
            why = f"reactive: the turn is {turn_type.addressee}'s, not addressed to it; silent"
        else:
            why = "reactive: not addressed by name; silent"
        return domain.Decision(**base, action="silent", reason=why)
    if chosen == agent:
        return domain.Decision(
            **base,
            action="speak",
            probability=probability,
            reason=f"next-speaker: {rule}",
        )
    why = f"next-speaker: {rule}; not picked" if rule else "next-speaker: no prediction"
    return domain.Decision(**base, action="silent", probability=probability, reason=why)


def outcome(
    d: domain.Decision, winner: domain.Decision | None, turn: domain.TurnType | None
) -> domain.Decision:
    """The decision as published once the floor is settled, with both sides of it explained.

    An agent that wanted to speak but lost the floor is silent and says to whom and why; an
    interrupter that took the floor says whose turn it took.
    """
    if d.action != "speak" or winner is None:
        return d
    who = turn.addressee if turn and turn.addressee else "?"
    if d is winner:
        if d.turn_type != "allocated-other":
            return d
        why = f"takes the floor from {who}, who may still answer next"
        return d.model_copy(update={"reason": f"{d.reason}; {why}"})
    score = winner.score or 0.0
    if winner.policy == "simulated" and winner.turn_type != "allocated-self":
        why = f"lost the floor to {winner.agent}, a simulated user who spoke up"
    elif winner.policy == "next-speaker" and winner.turn_type != "allocated-self":
        why = f"lost the floor to {winner.agent}, whom the next-speaker predictor picked"
    elif winner.turn_type == "allocated-other":
        if d.turn_type == "allocated-self":
            why = (
                f"lost the floor to {winner.agent}, who interrupted ({score:.2f} ≥"
                f" interruptThreshold {winner.threshold or 0:g}); the turn stays {d.agent}'s"
                " for the next step"
            )
        else:
            why = f"lost the floor to {winner.agent}, who interrupted with {score:.2f}"
    elif winner.turn_type == "allocated-self":
        why = f"lost the floor to {winner.agent}, who was addressed"
    else:
        why = f"lost the floor to {winner.agent}, who scored higher ({score:.2f})"
    if (
        shown(d.score) == shown(score)
        and winner.turn_type == d.turn_type
        and winner.policy == d.policy == "inner-thoughts"
    ):
        why = f"tied with {winner.agent} at {score:.2f}; {winner.agent} won the seeded draw"
    return d.model_copy(update={"action": "silent", "reason": f"{d.reason}; {why}"})


def next_speaker_turn(
    *,
    trigger: domain.TriggerKind,
    latest_speaker: str,
    prediction: domain.NextSpeakerPrediction | None,
    movers: Sequence[str],
    participants: Sequence[str],
    rng: random.Random,
) -> tuple[str | None, float | None, str]:
    """Which next-speaker agent gets the turn: (agent or None, probability of the label, why).

    - A predicted name that is a next-speaker agent who did not just speak: that agent.
    - ``anyone``, a predicted name who just spoke, or a pause: one of the next-speaker agents
      who did not just speak, drawn uniformly (seeded by session seed and step).
    - A predicted human or Inner Thoughts agent: nobody; the next-speaker agents wait for them.

    Args:
        movers: the next-speaker agents in the room.
        rng: seeded by the room with session seed and step, so a draw is reproducible.
    """
    others = [n for n in movers if n != latest_speaker]
    if trigger == "new_message" and prediction is None:
        if not others:
            return None, None, "no prediction (the predictor failed) and no other agent"
        pick = rng.choice(others)
        return (
            pick,
            None,
            f"no prediction (the predictor failed; see the error): {pick} drawn uniformly"
            f" among {', '.join(others)}",
        )
    if trigger == "pause" or prediction is None:
        if not others:
            return (
                None,
                None,
                "the floor is open after a pause, but no other next-speaker agent",
            )
        pick = rng.choice(others)
        return (
            pick,
            None,
            f"the floor is open after a pause: {pick} drawn uniformly among {', '.join(others)}",
        )
    label = prediction.predicted
    p = prediction.probabilities.get(label)
    predicted = f"predicted {label}" + (f" ({p:.2f})" if p is not None else "")
    if label != domain.ANYONE and label in movers and label != latest_speaker:
        return label, p, f"{predicted}: {label} takes the turn"
    if label != domain.ANYONE and label in participants and label != latest_speaker:
        return None, p, f"{predicted}, who is not a next-speaker agent: they wait for {label}"
    why = "anyone" if label == domain.ANYONE else f"{label}, who just spoke"
    if not others:
        return None, p, f"{predicted}: no other next-speaker agent to take it"
    pick = rng.choice(others)
    if len(others) == 1:
        return (
            pick,
            p,
            f"{predicted}: {why}, so {pick}, the only other next-speaker agent, takes it",
        )
    return (
        pick,
        p,
        f"{predicted}: {why}, so {pick} was drawn uniformly among {', '.join(others)}"
        " (the next-speaker agents who did not just speak)",
    )


class Floor:
    """The floor between triggers: the allocation an interrupter took the turn from, which the
    addressee may still answer (the only state the floor keeps; it owns it alone)."""

    def __init__(self) -> None:
        self._pending: domain.TurnType | None = None

    @property
    def pending(self) -> domain.TurnType | None:
        """The allocation still owed to its addressee, if any."""
        return self._pending

    def turn_at(self, trigger: domain.TriggerKind, latest: domain.TurnType) -> domain.TurnType:
        """The turn every participant decides against at this trigger (:func:`floor_turn`):
        silence opens the floor, and a newer allocation replaces the one owed."""
        if trigger == "pause" or latest.kind == "allocated":
            self._pending = None
        return floor_turn(trigger, latest, self._pending)

    def interrupted(self, turn: domain.TurnType) -> None:
        """Someone spoke in the addressee's place: the turn stays owed to them."""
        self._pending = turn

    def spoke(self, name: str) -> None:
        """``name`` posted: if the turn was owed to them, it is answered."""
        if participation.relation(self._pending, name) == "allocated-self":
            self._pending = None

    def left(self, name: str) -> None:
        """``name`` left the room: nobody is owed the turn in their place."""
        self.spoke(name)
