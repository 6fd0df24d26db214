"""How the automatic judge and the conversational geometry agree with the human raters (no Qt).

Two questions, over the sessions of a report:

- per metric, does the judge rate like the humans? Spearman's rho between the judge's score and
  the mean human rating of each session, and Krippendorff's alpha (ordinal) over the judge and
  the human raters together (and over the humans alone, for comparison);
- for pairs of sessions, can the human preference be predicted? From the TRACE geometry
  features (logistic regression on the feature difference, leave-one-out), from the judge, and
  from both. This is TRACE's Table 1 on our own data.

Raters whose id starts with ``judge:`` are judges; every other rater is a human. Methods are
stated in :data:`METHODS` and in the report.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections import defaultdict
from collections.abc import Collection
from typing import Any

import sqlite_utils

from playground import errors
from playground.rating.store import CONVERSATION_METRICS
from playground.report.agreement_data import (
    JUDGE_PREFIX,
    Pair,
    ensure_features,
    human_majority,
    human_ratings,
    is_judge,
    judge_preferences,
    judge_scores,
    session_feature_rows,
)
from playground.report.agreement_model import (
    PAPER_ACCURACY,
    AgreementWithHumans,
    MetricAgreement,
    PairwiseAccuracy,
)

__all__ = [
    "JUDGE_PREFIX",
    "MIN_PAIRS",
    "MIN_SESSIONS",
    "build_agreement",
    "is_judge",
    "loo_correct",
    "metric_agreement",
    "pairwise_accuracy",
    "wilson",
]
MIN_PAIRS = 20
"""Fewer rated pairs than this: "not enough pairs" instead of an accuracy."""
MIN_SESSIONS = 3
"""Fewer sessions rated by both the judge and a human: "not enough sessions" instead of rho."""
MISSING_FEATURES = ("drop", "impute")
Z95 = 1.959963984540054
NOT_ENOUGH_SESSIONS = "not enough sessions"
NOT_ENOUGH_PAIRS = "not enough pairs"

METHODS = [
    "judges: raters whose id starts with 'judge:'; everyone else is a human",
    "rho: Spearman (scipy.stats.spearmanr) between the judge's score (judge_scores.score, else its"
    " 1-7 rating) and the mean human rating per session",
    "alpha: Krippendorff's alpha (ordinal) over the judge's 1-7 rating and the human ratings on"
    " the sessions both rated; alpha_humans: the same without the judge",
    "human preference per session pair: the majority of human raters' choices, ties left out",
    "geometry: L2 logistic regression (C=1, no intercept) on the feature difference B - A,"
    " trained on both orders of each pair, features scaled to unit variance, leave-one-out over"
    " pairs",
    "judge: its stored preference for the pair, else the sign of its mean-score difference"
    " (equal means count as a miss)",
    "combined: the geometry regression with the judge's mean-score difference as one more feature",
    "accuracy: Wilson 95% interval",
]


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (95 % with the default z).

    Raises:
        PlaygroundError: n is not positive or k is outside 0..n.
    """
    if n <= 0 or not 0 <= k <= n:
        raise errors.PlaygroundError(
            f"a Wilson interval needs 0 <= k <= n and n > 0 (k={k}, n={n})"
        )
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# -- statistics -------------------------------------------------------------------------------
def spearman(x: list[float], y: list[float]) -> tuple[float | None, float | None]:
    """Spearman's rho and its two-sided p; (None, None) when undefined (a constant side)."""
    from scipy import stats

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    res = stats.spearmanr(x, y)
    rho, p = float(res.statistic), float(res.pvalue)
    return (None if math.isnan(rho) else rho), (None if math.isnan(p) else p)


def ordinal_alpha(rows: list[list[int | None]]) -> float | None:
    """Krippendorff's alpha (ordinal) of raters × units (None = not rated); None if undefined."""
    import krippendorff
    import numpy as np

    if len(rows) < 2:
        return None
    data = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    except ValueError:  # a single value in all the data: alpha is 0/0
        return None
    return None if math.isnan(alpha) else alpha


def metric_agreement(
    judge: str,
    metric: str,
    scores: dict[str, tuple[float, int]],
    humans: dict[str, dict[str, int]],
    *,
    min_sessions: int = MIN_SESSIONS,
) -> MetricAgreement:
    """rho and alpha between one judge and the human raters on one metric.

    Args:
        scores: session → (judge's score, judge's 1-7 rating).
        humans: human rater → session → rating.
    """
    both = sorted(s for s in scores if any(s in row for row in humans.values()))
    raters = sorted(r for r, row in humans.items() if any(s in row for s in both))
    if len(both) < min_sessions:
        return MetricAgreement(
            judge=judge, metric=metric, n=len(both), humans=len(raters), rho=None, p=None,
            alpha=None, alpha_humans=None, note=NOT_ENOUGH_SESSIONS,
        )  # fmt: skip
    means = [sum(v for row in humans.values() if (v := row.get(s)) is not None) for s in both]
    counts = [sum(1 for row in humans.values() if s in row) for s in both]
    human_mean = [t / c for t, c in zip(means, counts, strict=True)]
    rho, p = spearman([scores[s][0] for s in both], human_mean)
    table = [[humans[r].get(s) for s in both] for r in raters]
    alpha_h = ordinal_alpha(table)
    alpha = ordinal_alpha([*table, [scores[s][1] for s in both]])
    note = None if rho is not None else "rho undefined: a side has one value only"
    return MetricAgreement(
        judge=judge, metric=metric, n=len(both), humans=len(raters), rho=rho, p=p, alpha=alpha,
        alpha_humans=alpha_h, note=note,
    )  # fmt: skip


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise errors.Cancelled("the agreement computation was stopped")


def loo_correct(x: Any, y: Any, *, c: float = 1.0, stop: threading.Event | None = None) -> int:
    """Leave-one-out hits of a preference model on pair differences.

    Each fold fits an L2 logistic regression without intercept on the training pairs in both
    orders ((d, y) and (-d, 1 - y)), so that swapping A and B swaps the prediction; features are
    scaled to unit variance on that training set. A decision value of exactly 0 is a miss.

    Args:
        x: n × d array of differences (B - A).
        y: n labels, 1 when B was preferred.
        stop: when set (from another thread), the folds stop: this is the slow part of a report
            (about 20 s for 200 pairs on two cores).

    Raises:
        PlaygroundError: fewer than 2 pairs.
        Cancelled: ``stop`` was set.
    """
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import LeaveOneOut
    from sklearn.preprocessing import StandardScaler

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=int)
    if len(y) < 2:
        raise errors.PlaygroundError(f"leave-one-out needs at least 2 pairs, got {len(y)}")
    hits = 0
    for train, test in LeaveOneOut().split(x):
        _check(stop)
        xa = np.vstack([x[train], -x[train]])
        ya = np.concatenate([y[train], 1 - y[train]])
        scaler = StandardScaler(with_mean=False).fit(xa)
        model = LogisticRegression(C=c, fit_intercept=False, max_iter=1000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter on separable folds
            model.fit(scaler.transform(xa), ya)
        score = float(model.decision_function(scaler.transform(x[test]))[0])
        hits += int(score != 0 and (score > 0) == bool(y[test][0]))
    return hits


def _accuracy(
    predictor: str, n: int, correct: int | None, min_pairs: int, note: str | None = None
) -> PairwiseAccuracy:
    paper = PAPER_ACCURACY[predictor]
    if correct is None or n < min_pairs:
        if note is None:
            note = f"{NOT_ENOUGH_PAIRS} ({n} < {min_pairs})"
        return PairwiseAccuracy(
            predictor=predictor, n=n, correct=None, accuracy=None, ci_low=None, ci_high=None,
            paper=paper, note=note,
        )  # fmt: skip
    lo, hi = wilson(correct, n)
    return PairwiseAccuracy(
        predictor=predictor, n=n, correct=correct, accuracy=correct / n, ci_low=lo, ci_high=hi,
        paper=paper, note=note,
    )  # fmt: skip


def feature_matrix(
    pairs: list[Pair], feats: dict[str, dict[str, float]], missing: str = "drop"
) -> tuple[list[Pair], list[str], list[list[float]]]:
    """Differences B - A of the features of the pairs whose two sessions have features.

    Args:
        missing: ``drop`` keeps only the features every such session has; ``impute`` fills a
            missing value with the median of that feature over the sessions that have it.

    Returns:
        The pairs kept, the feature names and one row of differences per kept pair.

    Raises:
        PlaygroundError: an unknown ``missing`` rule.
    """
    import numpy as np

    if missing not in MISSING_FEATURES:
        raise errors.PlaygroundError(
            f"unknown missing-feature rule {missing!r} (expected one of: {', '.join(MISSING_FEATURES)})"
        )
    kept = [(a, b) for a, b in pairs if a in feats and b in feats]
    sessions = sorted({s for p in kept for s in p})
    if not sessions:
        return kept, [], [[] for _ in kept]
    if missing == "drop":
        names = sorted(set.intersection(*(set(feats[s]) for s in sessions)))
        fill: dict[str, float] = {}
    else:
        names = sorted(set.union(*(set(feats[s]) for s in sessions)))
        fill = {
            n: float(np.median([v for f in feats.values() if (v := f.get(n)) is not None]))
            for n in names
        }
    rows = [
        [feats[b].get(n, fill.get(n, 0.0)) - feats[a].get(n, fill.get(n, 0.0)) for n in names]
        for a, b in kept
    ]
    return kept, names, rows


def _mean_score(scores: dict[str, dict[str, tuple[float, int]]]) -> dict[str, float]:
    per: dict[str, list[float]] = defaultdict(list)
    for by_session in scores.values():
        for sid, (score, _) in by_session.items():
            per[sid].append(score)
    return {sid: sum(v) / len(v) for sid, v in per.items()}


def pairwise_accuracy(
    human: dict[Pair, int],
    feats: dict[str, dict[str, float]],
    judge_mean: dict[str, float],
    judge_prefs: dict[Pair, int],
    *,
    has_judge: bool,
    min_pairs: int = MIN_PAIRS,
    missing: str = "drop",
    stop: threading.Event | None = None,
) -> tuple[list[PairwiseAccuracy], list[str]]:
    """The three predictors' accuracy on the human majority preferences.

    Args:
        stop: see :func:`loo_correct`.

    Returns:
        geometry, judge and combined accuracies, and the feature names used.

    Raises:
        PlaygroundError: an unknown ``missing`` rule.
        Cancelled: ``stop`` was set.
    """
    pairs = sorted(human)
    kept, names, rows = feature_matrix(pairs, feats, missing)
    geometry_note = None
    if not feats:
        geometry_note = "no geometry features (run `playground features`)"
    elif kept and not names:
        geometry_note = "no feature is present in every session (try impute)"
    geometry = None
    if len(kept) >= min_pairs and names:
        geometry = loo_correct(rows, [human[p] for p in kept], stop=stop)
    out = [_accuracy("geometry", len(kept), geometry, min_pairs, geometry_note)]

    judged = 0
    hits = 0
    for a, b in pairs:
        if (a, b) in judge_prefs:
            guess: int | None = judge_prefs[(a, b)]
        elif a in judge_mean and b in judge_mean:
            diff = judge_mean[b] - judge_mean[a]
            guess = None if diff == 0 else int(diff > 0)
        else:
            continue
        judged += 1
        hits += int(guess == human[(a, b)])
    judge_note = None if has_judge else "no judge ratings (run `playground judge`)"
    out.append(_accuracy("judge", judged, hits if has_judge else None, min_pairs, judge_note))

    both = [
        (p, r) for p, r in zip(kept, rows, strict=True) if p[0] in judge_mean and p[1] in judge_mean
    ]
    combined = None
    if names and len(both) >= min_pairs:
        x = [[*r, judge_mean[b] - judge_mean[a]] for (a, b), r in both]
        combined = loo_correct(x, [human[p] for p, _ in both], stop=stop)
    combined_note = geometry_note or judge_note
    out.append(_accuracy("combined", len(both), combined, min_pairs, combined_note))
    return out, names


def build_agreement(
    db: sqlite_utils.Database,
    session_ids: Collection[str],
    *,
    judge: str | None = None,
    features_model: str | None = None,
    min_pairs: int = MIN_PAIRS,
    min_sessions: int = MIN_SESSIONS,
    missing: str = "drop",
    embedder: Any = None,
    stop: threading.Event | None = None,
) -> AgreementWithHumans:
    """Judge and geometry against the humans over these sessions.

    Args:
        db: an open session database (written only when an embedder is given).
        session_ids: the sessions in scope (full ids).
        judge: the judge for the pairwise predictions; None picks the one that scored most
            sessions.
        features_model: the embedding model of the features; None picks the most common one.
        min_pairs: below this many rated pairs an accuracy is "not enough pairs".
        min_sessions: below this many sessions rho and alpha are "not enough sessions".
        missing: ``drop`` or ``impute`` features missing in some sessions.
        embedder: when given, features missing for a session are computed and stored first.
        stop: when set (from another thread), the computation stops with :class:`Cancelled`.

    Raises:
        PlaygroundError: an unknown judge or missing-feature rule, or a minimum below 1.
        Cancelled: ``stop`` was set.
    """
    if min_pairs < 1 or min_sessions < 1:
        raise errors.PlaygroundError(
            f"the minimum numbers of pairs and sessions must be at least 1 ({min_pairs}, {min_sessions})"
        )
    if missing not in MISSING_FEATURES:
        raise errors.PlaygroundError(
            f"unknown missing-feature rule {missing!r} (expected one of: {', '.join(MISSING_FEATURES)})"
        )
    sids = set(session_ids)
    if embedder is not None and sids:
        features_model = ensure_features(db, sids, embedder) or features_model
    scores = judge_scores(db, sids)
    judge_pref_raters = {
        r
        for r, first, second in db.execute("SELECT rater, first_id, second_id FROM preferences")
        if is_judge(r) and first in sids and second in sids
    }
    judges = sorted({j for j, m in scores.items() if any(m.values())} | judge_pref_raters)
    if judge is not None and judge not in judges:
        raise errors.PlaygroundError(
            f"no judge {judge!r} in these sessions (judges: {', '.join(judges) or 'none'})"
        )
    if judge is None and judges:
        covered = {j: len({s for m in scores.get(j, {}).values() for s in m}) for j in judges}
        judge = min(judges, key=lambda j: (-covered[j], j))
    humans = human_ratings(db, sids)
    metrics = [
        metric_agreement(j, m.key, scores[j][m.key], humans[m.key], min_sessions=min_sessions)
        for j in judges
        if j in scores
        for m in CONVERSATION_METRICS
        if scores[j].get(m.key) and humans[m.key]
    ]
    human, ties = human_majority(db, sids)
    features_model, feats = session_feature_rows(db, sids, features_model)
    judge_mean = _mean_score(scores.get(judge, {})) if judge else {}
    prefs = judge_preferences(db, judge, sids) if judge else {}
    pairwise, names = pairwise_accuracy(
        human, feats, judge_mean, prefs, has_judge=judge is not None, min_pairs=min_pairs,
        missing=missing, stop=stop,
    )  # fmt: skip
    return AgreementWithHumans(
        judges=judges, pairwise_judge=judge, features_model=features_model if feats else None,
        features=names, metrics=metrics, human_pairs=len(human), tied_pairs=ties,
        min_pairs=min_pairs, min_sessions=min_sessions, pairwise=pairwise,
        methods=[*METHODS, missing_note(sorted(human), feats, names, missing)],
    )  # fmt: skip


def missing_note(
    pairs: list[Pair], feats: dict[str, dict[str, float]], names: list[str], missing: str
) -> str:
    """The methods line on missing features, with how many there were: the features dropped
    (``drop``) or the values filled with a median (``impute``) over the pairs' sessions."""
    sessions = sorted({s for a, b in pairs if a in feats and b in feats for s in (a, b)})
    if not sessions:
        return f"missing features: {missing}"
    if missing == "drop":
        every = set.union(*(set(feats[s]) for s in sessions))
        dropped = len(every) - len(names)
        return (
            f"missing features: drop ({dropped} of {len(every)} features left out: missing in"
            f" some of the {len(sessions)} sessions)"
        )
    filled = sum(1 for s in sessions for n in names if feats[s].get(n) is None)
    return (
        f"missing features: impute ({filled} of {len(sessions) * len(names)} values filled with"
        " the feature's median)"
    )
