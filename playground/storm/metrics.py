"""STORM's metrics over one dialogue and over a group of dialogues (docs/spec.md §2.8; STORM paper
§2.2, §3.2, appendix B.1). Pure functions over records: no database, no model, no clock.

Per user turn t ≥ 1 (turns count the simulated user's own messages from 0):

- Δclarity_t = c_t − c_{t−1} and Δsatisfaction_t = s_t − s_{t−1} (both on 0–1);
- goal progress g_t = share_t − share_{t−1}, where share_t is the share of the profile's success
  criteria that the assistant's messages seen before user turn t address: a criterion is
  *addressed* once some assistant message's embedding has a cosine ≥ ``goal_threshold`` with it
  (the embedding is computed elsewhere and passed in as vectors, see :func:`goal_shares`);
- the clarity score C_t = w1·Δclarity_t + w2·Δsatisfaction_t + w3·g_t; without success criteria
  (or without vectors) g_t is absent and its term counts 0.

Missing ratings are never counted as numbers. A turn whose satisfaction (or clarity) could not be
read (:attr:`~playground.domain.simulated_user.HiddenState.rated_satisfaction` is None) has no value: every
figure is computed from the turns that were rated, and says how many were not. Δ at a rated turn
is the change since the previous *rated* turn (None at an unrated turn and at the first rated
one); C_t is computed at a turn where both were rated, from the changes since the previous turn
where both were rated (its g term over the same span).

Per dialogue, over the rated turns: final (the last rated) and average satisfaction, the trend
(the least-squares slope of satisfaction against the turn number, two rated turns at least), the
high-satisfaction and improved-satisfaction figures (improved: the last rated turn above the first
rated one, two rated turns at least), mean C, **Clarify** from a judge's turn-pair labels and
**SSA = wα·(λ·S_avg) + wβ·C_clarify**, the appendix form, which reproduces Table 2
(0.7·7.75·0.83 + 0.3·5.23 = 6.07).

Clarify (the paper gives no formula; its values lie in 4.66–7.75 and λ = 7.75 is "the maximum
observed"): with I improvements, N no-changes and D decreases among P judged pairs,

- ``balanced`` (default): 10·(I + ½N)/P = 5 + 5·(I − D)/P, so 5 when nothing changes, 10 when
  every pair improves and 0 when every pair gets worse;
- ``improve-share``: 10·I/P, the share of pairs that improved, on 0–10.

The same formula applied to the simulated user's own clarity ratings (Δclarity between consecutive
rated turns > tolerance → improve, < −tolerance → decrease) gives a *self-rated* figure, which is
never the judge's Clarify.

Rates: the paper's High and Improved Satisfaction Rates are all multiples of 1/150 (150 dialogues
per cell: 4,800 / (4 models × 4 uncertainties × 2 access modes)), so they are shares of
*dialogues*: by default a dialogue is highly satisfied when its final satisfaction is
≥ ``high_threshold`` and improved when its final satisfaction exceeds its first. The per-turn
shares (rated turns with s ≥ threshold; rated turns after the first rated one with s above it)
are kept too and ``rates="turns"`` puts them in the table instead. A rate's denominator is the
dialogues that have the value: a dialogue with no rated turn has no High value, one with fewer
than two rated turns no Improved value (nor trend), and the group says how many there were
(:class:`~playground.storm.metric_records.GroupMetrics`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from playground import errors
from playground.domain.simulated_user import Change, HiddenState, TurnJudgement
from playground.storm.metric_records import DialogueMetrics, GroupMetrics, TurnMetrics

ClarifyMethod = Literal["balanced", "improve-share"]
CLARIFY_METHODS: tuple[ClarifyMethod, ...] = ("balanced", "improve-share")
CLARIFY_FORMULAS = {
    "balanced": "10·(I + ½N)/P = 5 + 5·(I − D)/P",
    "improve-share": "10·I/P",
}
#: What a dialogue-level rate is a share of.
Rates = Literal["dialogues", "turns"]
HighOn = Literal["final", "average"]


@dataclass(frozen=True)
class MetricOptions:
    """Every choice the metrics depend on; each is a flag of ``playground report --storm``.

    Raises:
        SettingsError: a value out of range (named by its flag).
    """

    #: w1, w2, w3 of C = w1·Δclarity + w2·Δsatisfaction + w3·g (``--c-weights``).
    weights: tuple[float, float, float] = (0.4, 0.4, 0.2)
    #: Cosine at which an assistant message addresses a success criterion (``--goal-threshold``).
    goal_threshold: float = 0.5
    #: Satisfaction counted as high (``--high-threshold``).
    high_threshold: float = 0.8
    #: Which satisfaction of a dialogue must reach it: the final one or the average (``--high-on``).
    high_on: HighOn = "final"
    #: Table rates as shares of dialogues (the paper's) or of turns (``--rates``).
    rates: Rates = "dialogues"
    #: How judge labels become Clarify (``--clarify-method``).
    clarify_method: ClarifyMethod = "balanced"
    #: |Δclarity| up to this counts as "not change" for the self-rated figure (``--self-tolerance``).
    self_tolerance: float = 0.0
    #: SSA's wα, wβ and λ (``--ssa-weights``, ``--ssa-lambda``).
    ssa_alpha: float = 0.7
    ssa_beta: float = 0.3
    ssa_lambda: float = 7.75

    def __post_init__(self) -> None:
        if len(self.weights) != 3 or not all(np.isfinite(w) for w in self.weights):
            raise errors.SettingsError(
                f"--c-weights: three numbers w1,w2,w3 are needed (got {self.weights})"
            )
        if not -1.0 <= self.goal_threshold <= 1.0:
            raise errors.SettingsError(
                f"--goal-threshold: a cosine between -1 and 1 is needed (got {self.goal_threshold})"
            )
        if not 0.0 <= self.high_threshold <= 1.0:
            raise errors.SettingsError(
                f"--high-threshold: a satisfaction between 0 and 1 is needed (got {self.high_threshold})"
            )
        if not 0.0 <= self.self_tolerance < 1.0:
            raise errors.SettingsError(
                f"--self-tolerance: a clarity change from 0 to below 1 is needed (got {self.self_tolerance})"
            )
        if self.clarify_method not in CLARIFY_METHODS:
            raise errors.SettingsError(
                f"--clarify-method: one of {', '.join(CLARIFY_METHODS)} (got {self.clarify_method!r})"
            )
        for name, value in (("--ssa-weights", self.ssa_alpha), ("--ssa-weights", self.ssa_beta)):
            if not (np.isfinite(value) and value >= 0):
                raise errors.SettingsError(f"{name}: weights must be 0 or more (got {value})")
        if not (np.isfinite(self.ssa_lambda) and self.ssa_lambda > 0):
            raise errors.SettingsError(f"--ssa-lambda: must be above 0 (got {self.ssa_lambda})")


def cosine_matrix(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> np.ndarray:
    """Cosines between the rows of ``a`` and ``b`` (zero vectors give 0)."""
    x = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    y = np.asarray(b, dtype=np.float64).reshape(len(b), -1)
    xn = np.linalg.norm(x, axis=1, keepdims=True)
    yn = np.linalg.norm(y, axis=1, keepdims=True)
    x = np.divide(x, xn, out=np.zeros_like(x), where=xn > 0)
    y = np.divide(y, yn, out=np.zeros_like(y), where=yn > 0)
    return np.asarray(x @ y.T)


def goal_shares(
    criteria: Sequence[Sequence[float]],
    seen_before: Sequence[Sequence[Sequence[float]]],
    threshold: float = 0.5,
) -> list[float] | None:
    """share_t for every user turn t: the share of the success criteria addressed so far.

    Args:
        criteria: one vector per success criterion of the profile.
        seen_before: for each user turn t, the vectors of the assistant's messages posted since
            the user's previous turn (for t = 0: before the user's first message).
        threshold: a criterion is addressed once a message's cosine with it reaches this.

    Returns:
        One share per turn (non-decreasing), or None when there are no criteria.
    """
    if not len(criteria):
        return None
    addressed = np.zeros(len(criteria), dtype=bool)
    out = []
    for vectors in seen_before:
        if len(vectors):
            addressed |= (cosine_matrix(criteria, vectors) >= threshold).any(axis=1)
        out.append(float(addressed.mean()))
    return out


def turn_metrics(
    states: Sequence[HiddenState],
    *,
    shares: Sequence[float] | None = None,
    weights: tuple[float, float, float] = (0.4, 0.4, 0.2),
) -> list[TurnMetrics]:
    """Δclarity, Δsatisfaction, g and C of every user turn, from the rated values only.

    A rating the answer did not give (``satisfaction_missing``, or a clarity carried over) is
    None here: Δ at a rated turn is the change since the previous rated turn, and C_t is computed
    where both ratings were given, from the changes since the previous such turn.

    Raises:
        ValueError: ``shares`` is given with another length than ``states``.
    """
    if shares is not None and len(shares) != len(states):
        raise ValueError(f"{len(shares)} goal shares for {len(states)} turns")
    w1, w2, w3 = weights
    out: list[TurnMetrics] = []
    last_s: float | None = None
    last_c: float | None = None
    anchor: tuple[int, float, float] | None = None  # the previous turn with both ratings
    for t, h in enumerate(states):
        s, c = h.rated_satisfaction, h.rated_clarity
        share = None if shares is None else float(shares[t])
        g = None if shares is None or t == 0 else float(shares[t]) - float(shares[t - 1])
        score = None
        if s is not None and c is not None:
            if anchor is not None:
                p, ps, pc = anchor
                gp = 0.0 if shares is None else float(shares[t]) - float(shares[p])
                score = w1 * (c - pc) + w2 * (s - ps) + w3 * gp
            anchor = (t, s, c)
        out.append(
            TurnMetrics(
                turn=t,
                satisfaction=s,
                clarity=c,
                d_clarity=None if c is None or last_c is None else c - last_c,
                d_satisfaction=None if s is None or last_s is None else s - last_s,
                goal_share=share,
                goal_progress=g,
                score=score,
            )
        )
        last_s = s if s is not None else last_s
        last_c = c if c is not None else last_c
    return out


def slope(values: Sequence[float], at: Sequence[float] | None = None) -> float | None:
    """The ordinary-least-squares slope of ``values`` against ``at`` (default 0, 1, 2…); None
    below two values (or two distinct positions)."""
    if len(values) < 2:
        return None
    y = np.asarray(values, dtype=np.float64)
    x = np.asarray(range(len(y)) if at is None else at, dtype=np.float64)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} positions for {len(y)} values")
    x = x - x.mean()
    sxx = float((x * x).sum())
    return float((x * (y - y.mean())).sum() / sxx) if sxx > 0 else None


def clarify_score(labels: Sequence[Change], method: ClarifyMethod = "balanced") -> float | None:
    """Clarify on 0–10 from turn-pair clarity labels (None when there are none).

    Raises:
        ValueError: an unknown method or label.
    """
    if not labels:
        return None
    unknown = set(labels) - {"improve", "not change", "decrease"}
    if unknown:
        raise ValueError(f"unknown clarity labels {sorted(unknown)}")
    improve = sum(1 for x in labels if x == "improve")
    same = sum(1 for x in labels if x == "not change")
    if method == "balanced":
        return 10.0 * (improve + 0.5 * same) / len(labels)
    if method == "improve-share":
        return 10.0 * improve / len(labels)
    raise ValueError(f"unknown Clarify method {method!r}")


def self_labels(clarities: Sequence[float | None], tolerance: float = 0.0) -> list[Change]:
    """Turn-pair labels from the simulated user's own clarity ratings (Δ beyond ± tolerance),
    between consecutive rated turns (None, not rated, is skipped)."""
    rated = [c for c in clarities if c is not None]
    out: list[Change] = []
    for before, after in itertools.pairwise(rated):
        d = after - before
        out.append("improve" if d > tolerance else "decrease" if d < -tolerance else "not change")
    return out


def ssa(
    s_avg: float | None,
    clarify: float | None,
    *,
    alpha: float = 0.7,
    beta: float = 0.3,
    lam: float = 7.75,
) -> float | None:
    """SSA = wα·(λ·S_avg) + wβ·C_clarify, the appendix B.1 form (None if either is missing).

    The main text's λ·(wα·S_avg + wβ·C_clarify) would give 7.75·(0.7·0.83 + 0.3·5.23) = 16.66
    for Table 2's Claude-3.7-Sonnet (0 %) row, whose SSA is 6.07; the appendix form gives 6.07.
    """
    if s_avg is None or clarify is None:
        return None
    return alpha * (lam * s_avg) + beta * clarify


def _mean(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return float(np.mean(present)) if present else None


def dialogue_metrics(
    states: Sequence[HiddenState],
    *,
    shares: Sequence[float] | None = None,
    judgements: Sequence[TurnJudgement] | None = None,
    options: MetricOptions | None = None,
) -> DialogueMetrics:
    """Every metric of one dialogue from its hidden states (turn order) and a judge's labels.

    Satisfaction figures rest on the turns whose satisfaction was rated, the self-rated figure on
    those whose clarity was; the unrated ones are counted (``missing_*``), never imputed.

    Args:
        states: the simulated user's hidden state at each of its turns, turn 0 first.
        shares: the goal shares from :func:`goal_shares` (None: no goal progress).
        judgements: one judge's turn-pair analyses (None or empty: no judge, no Clarify).
        options: the weights, thresholds and methods.

    Raises:
        ValueError: ``shares`` of the wrong length.
    """
    o = options or MetricOptions()
    per_turn = turn_metrics(states, shares=shares, weights=o.weights)
    rated = [(t, v) for t, h in enumerate(states) if (v := h.rated_satisfaction) is not None]
    s = [v for _, v in rated]
    k = len(s)
    first, final = (s[0], s[-1]) if s else (None, None)
    avg = float(np.mean(s)) if s else None
    high_value = final if o.high_on == "final" else avg
    later = s[1:]
    labels = [j.clarity_change for j in sorted(judgements or [], key=lambda j: j.pair)]
    clarify = clarify_score(labels, o.clarify_method)
    self_clarify = clarify_score(
        self_labels([h.rated_clarity for h in states], o.self_tolerance), o.clarify_method
    )
    kw = {"alpha": o.ssa_alpha, "beta": o.ssa_beta, "lam": o.ssa_lambda}
    return DialogueMetrics(
        turns=len(states),
        satisfaction_rated=k,
        final_satisfaction=final,
        average_satisfaction=avg,
        trend=slope(s, [t for t, _ in rated]),
        high_turn_share=sum(1 for v in s if v >= o.high_threshold) / k if k else None,
        high=None if high_value is None else high_value >= o.high_threshold,
        improved_turn_share=(
            sum(1 for v in later if first is not None and v > first) / len(later) if later else None
        ),
        improved=None if k < 2 or first is None or final is None else final > first,
        missing_satisfaction=len(states) - k,
        missing_clarity=sum(1 for h in states if h.clarity_missing),
        mean_c=_mean([t.score for t in per_turn]),
        clarify=clarify,
        judged_pairs=len(labels),
        self_clarify=self_clarify,
        ssa=ssa(avg, clarify, **kw),
        self_ssa=ssa(avg, self_clarify, **kw),
        per_turn=per_turn,
    )


def group_metrics(
    dialogues: Sequence[DialogueMetrics], options: MetricOptions | None = None
) -> GroupMetrics:
    """A group's figures: means over its dialogues; rates as shares of dialogues (or the mean
    per-dialogue share of turns with ``rates="turns"``); Clarify over the judged dialogues only;
    SSA from the group's Average Satisfaction and Clarify. Every figure is over the dialogues
    that have it (a rate's denominator: ``n_rated`` for High, ``n_compared`` for Improved)."""
    o = options or MetricOptions()
    ds = [d for d in dialogues if d.turns]
    if o.rates == "dialogues":
        high = _mean([None if d.high is None else float(d.high) for d in ds])
        improved = _mean([None if d.improved is None else float(d.improved) for d in ds])
    else:
        high = _mean([d.high_turn_share for d in ds])
        improved = _mean([d.improved_turn_share for d in ds])
    avg = _mean([d.average_satisfaction for d in ds])
    clarify = _mean([d.clarify for d in ds])
    self_clarify = _mean([d.self_clarify for d in ds])
    kw = {"alpha": o.ssa_alpha, "beta": o.ssa_beta, "lam": o.ssa_lambda}
    return GroupMetrics(
        n=len(ds),
        judged=sum(1 for d in ds if d.clarify is not None),
        n_rated=sum(1 for d in ds if d.average_satisfaction is not None),
        n_compared=sum(1 for d in ds if d.improved is not None),
        n_scored=sum(1 for d in ds if d.mean_c is not None),
        n_self_rated=sum(1 for d in ds if d.self_clarify is not None),
        turns=sum(d.turns for d in ds),
        missing_satisfaction=sum(d.missing_satisfaction for d in ds),
        missing_clarity=sum(d.missing_clarity for d in ds),
        average_satisfaction=avg,
        final_satisfaction=_mean([d.final_satisfaction for d in ds]),
        trend=_mean([d.trend for d in ds]),
        high_rate=high,
        improved_rate=improved,
        mean_c=_mean([d.mean_c for d in ds]),
        clarify=clarify,
        self_clarify=self_clarify,
        ssa=ssa(avg, clarify, **kw),
        self_ssa=ssa(avg, self_clarify, **kw),
    )
