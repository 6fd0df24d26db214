"""Algorithm 1 (docs/spec.md §1.5 Participation) as a pure function; the turn agents decide
against; floor arbitration between agents (interruptions) and how each decision reads once it is settled."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from playground import domain
from playground.settings import ProactivitySettings


@dataclass(frozen=True)
class Scored:
    """A thought with its current motivation score."""

    thought_id: int
    system: int
    score: float


def relation(turn_type: domain.TurnType | None, me: str) -> str:
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
    if rel == "allocated-self":
        return domain.Decision(
            **base,
            action="speak",
            thought_id=best.thought_id,
            score=best.score,
            reason=f"addressed by name; answers with its best thought ({best.score:.2f})",
        )
    if rel == "allocated-other":
        thr = settings.interrupt_threshold
        who = turn_type.addressee if turn_type else "?"
        if best.score >= thr:
            return domain.Decision(
                **base,
                action="speak",
                thought_id=best.thought_id,
                score=best.score,
                threshold=thr,
                reason=f"turn belongs to {who}, but best score {best.score:.2f} ≥ interruptThreshold {thr:g}: interrupts",
            )
        return domain.Decision(
            **base,
            action="silent",
            score=best.score,
            threshold=thr,
            reason=f"turn belongs to {who}; best score {best.score:.2f} < interruptThreshold {thr:g}",
        )
    thr = settings.im_threshold
    if best.score >= thr:
        return domain.Decision(
            **base,
            action="speak",
            thought_id=best.thought_id,
            score=best.score,
            threshold=thr,
            reason=f"best score {best.score:.2f} ≥ imThreshold {thr:g}",
        )
    system1 = [s for s in thoughts if s.system == 1]
    if system1 and settings.system1_prob > 0:
        draw = rng.random()
        if draw < settings.system1_prob:
            pick = max(system1, key=lambda s: (s.score, -s.thought_id))
            return domain.Decision(
                **base,
                action="speak",
                thought_id=pick.thought_id,
                score=pick.score,
                threshold=thr,
                reason=f"best score {best.score:.2f} < imThreshold {thr:g}; System-1 reply drawn (p={settings.system1_prob:g}): thought #{pick.thought_id}, score {pick.score:.2f}",
            )
        return domain.Decision(
            **base,
            action="silent",
            score=best.score,
            threshold=thr,
            reason=f"best score {best.score:.2f} < imThreshold {thr:g}; no System-1 reply drawn (p={settings.system1_prob:g})",
        )
    return domain.Decision(
        **base,
        action="silent",
        score=best.score,
        threshold=thr,
        reason=f"best score {best.score:.2f} < imThreshold {thr:g}",
    )


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
    rel = relation(turn_type, agent)
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
    shown = f"predicted {label}" + (f" ({p:.2f})" if p is not None else "")
    if label != domain.ANYONE and label in movers and label != latest_speaker:
        return label, p, f"{shown}: {label} takes the turn"
    if label != domain.ANYONE and label in participants and label != latest_speaker:
        return None, p, f"{shown}, who is not a next-speaker agent: they wait for {label}"
    why = "anyone" if label == domain.ANYONE else f"{label}, who just spoke"
    if not others:
        return None, p, f"{shown}: no other next-speaker agent to take it"
    pick = rng.choice(others)
    if len(others) == 1:
        return (
            pick,
            p,
            f"{shown}: {why}, so {pick}, the only other next-speaker agent, takes it",
        )
    return (
        pick,
        p,
        f"{shown}: {why}, so {pick} was drawn uniformly among {', '.join(others)}"
        " (the next-speaker agents who did not just speak)",
    )


#: How an end after silent steps starts (after their number); :meth:`SilentRun.explain`.
SILENT_STEPS = "silent steps in a row"
#: What a session that went quiet for lack of motivation suggests changing.
QUIET_ADVICE = (
    "try a more talkative preset (active-contributor), lower the thresholds, or a stronger model"
)


@dataclass
class SilentRun:
    """Why nobody has spoken since the last message: what the decisions of the silent steps
    showed. The room notes every decision and refusal and starts afresh at each message; a loop
    that ends the session after silent steps gives :meth:`explain` as the end reason.

    Attributes:
        best: the Inner Thoughts decision whose score came closest to its threshold (the
            largest score minus threshold; the higher score on a tie).
        reached: a decision's score reached its threshold (so the threshold is not why nobody
            spoke).
        refused: thought drafts refused as empty or placeholder text.
        unspoken: utterances refused as empty or placeholder text (not posted).
        failed: agents whose thoughts could not be formed or rated at a step (see the errors).
    """

    best: domain.Decision | None = None
    reached: bool = False
    refused: int = 0
    unspoken: int = 0
    failed: int = 0

    def note(self, d: domain.Decision) -> None:
        """Take one agent's decision at a silent step into account (its best score: a drawn
        System-1 reply's own score is lower)."""
        score = _best(d)
        if d.policy != "inner-thoughts" or score is None or d.threshold is None:
            return
        if score >= d.threshold:
            self.reached = True
        b = self.best
        if b is None or (score - d.threshold, score) > (
            (_best(b) or 0.0) - (b.threshold or 0.0),
            _best(b) or 0.0,
        ):
            self.best = d

    def explain(self, steps: int) -> str:
        """The end reason after ``steps`` silent steps in a row, with why nobody spoke, e.g.
        ``4 silent steps in a row: no thought's motivation reached the threshold (best 3.10
        against 3.95); try a more talkative preset (active-contributor), lower the thresholds,
        or a stronger model``."""
        head = f"{steps} {SILENT_STEPS}"
        if self.unspoken:
            return (
                f"{head}: the model's messages were unusable ({_count(self.unspoken, 'message')}"
                " refused as empty or placeholder text, such as '...'); try a stronger model"
            )
        if self.best is None:
            if self.refused:
                return (
                    f"{head}: every thought the model formed was unusable"
                    f" ({_count(self.refused, 'thought')} refused as empty or placeholder text,"
                    " such as '...'), so none could be rated; try a stronger model"
                )
            if self.failed:
                return (
                    f"{head}: no thought could be formed or rated ({_count(self.failed, 'failure')},"
                    " see the errors); check the model server, or try a stronger model"
                )
            return head
        if self.reached:
            return head
        b = self.best
        refused = (
            f"; {_count(self.refused, 'other thought')} refused as empty or placeholder text"
            if self.refused
            else ""
        )
        return (
            f"{head}: no thought's motivation reached the threshold (best {_best(b) or 0.0:.2f}"
            f" against {b.threshold or 0.0:.2f}){refused}; {QUIET_ADVICE}"
        )


def _best(d: domain.Decision) -> float | None:
    """A decision's best score (``score`` for one recorded before the best was kept)."""
    return d.best_score if d.best_score is not None else d.score


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def explains_silence(reason: str) -> bool:
    """True for an end reason that says why nobody spoke (:meth:`SilentRun.explain` said more
    than the bare ``N silent steps in a row``): the window shows it in full."""
    return f"{SILENT_STEPS}: " in reason
