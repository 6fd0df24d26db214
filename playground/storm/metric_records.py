"""The records STORM's metrics produce: one user turn, one dialogue, one group of dialogues.

Computed by :mod:`playground.storm.metrics` (where the formulas are described) and shown by the
STORM report. A figure is None where its value is absent: a rating the user never gave, a
difference at the first rated turn, Clarify without a judge; the counts say how many dialogues
each group figure rests on.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TurnMetrics(_Record):
    """The metrics of one user turn; None where the value is absent: the ratings the user gave
    none of, the differences at the first rated turn, goal progress without criteria."""

    turn: int
    #: The user's ratings at this turn (None: the answer gave none that could be read).
    satisfaction: float | None
    clarity: float | None
    #: The changes since the previous turn where the value was rated.
    d_clarity: float | None = None
    d_satisfaction: float | None = None
    #: Share of the success criteria addressed before this turn (absent without criteria).
    goal_share: float | None = None
    #: g_t: the change of that share since the previous turn.
    goal_progress: float | None = None
    #: C_t = w1·Δclarity + w2·Δsatisfaction + w3·g since the previous turn where both ratings
    #: were given (a missing g counts 0); None unless both are rated here and at an earlier turn.
    score: float | None = None


class DialogueMetrics(_Record):
    """The metrics of one dialogue (one simulated user's turns in one session), from the turns
    whose satisfaction (clarity, for the self-rated figure) was rated."""

    turns: int
    #: Turns whose satisfaction was read; every satisfaction figure rests on these alone.
    satisfaction_rated: int
    #: The last rated satisfaction and the mean of the rated ones (None: none was rated).
    final_satisfaction: float | None
    average_satisfaction: float | None
    #: Least-squares slope of the rated satisfactions against their turn (below two: None).
    trend: float | None
    #: Share of the rated turns with satisfaction ≥ the high threshold.
    high_turn_share: float | None
    #: The dialogue's final (or average) satisfaction ≥ the high threshold.
    high: bool | None
    #: Share of the rated turns after the first rated one whose satisfaction exceeds it.
    improved_turn_share: float | None
    #: The last rated satisfaction above the first rated one (None below two rated turns).
    improved: bool | None
    #: Turns whose satisfaction could not be read (left out of every figure).
    missing_satisfaction: int
    #: Turns whose clarity could not be read (left out of Δclarity, C and the self-rated figure).
    missing_clarity: int
    mean_c: float | None
    #: Clarify from a judge's labels (absent without a judge), and how many pairs it rests on.
    clarify: float | None
    judged_pairs: int
    #: The same formula over the simulated user's own clarity ratings: not a judge's figure.
    self_clarify: float | None
    ssa: float | None
    self_ssa: float | None
    per_turn: list[TurnMetrics]


class GroupMetrics(_Record):
    """The metrics of a group of dialogues (one cell pair of Table 2). Each figure is over the
    dialogues that have it; the counts say how many those are and how many turns were unrated."""

    n: int
    judged: int
    #: Dialogues with at least one rated satisfaction: the denominator of Average and Final
    #: Satisfaction and of the High Satisfaction Rate.
    n_rated: int
    #: Dialogues with at least two: the denominator of the Improved Satisfaction Rate and trend.
    n_compared: int
    #: Dialogues with a C value (mean C) and with a self-rated clarity figure.
    n_scored: int
    n_self_rated: int
    #: User turns in the group, and those whose satisfaction / clarity could not be read.
    turns: int
    missing_satisfaction: int
    missing_clarity: int
    average_satisfaction: float | None
    final_satisfaction: float | None
    trend: float | None
    high_rate: float | None
    improved_rate: float | None
    mean_c: float | None
    clarify: float | None
    self_clarify: float | None
    #: SSA of the row's Average Satisfaction and Clarify (so the table can be checked by hand).
    ssa: float | None
    self_ssa: float | None
