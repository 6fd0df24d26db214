"""Reading what the agreement needs from a session database: judge scores, human ratings, pairwise
preferences (by majority) and the stored geometry features. Used by :mod:`playground.report.agreement`."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Collection
from typing import Any

import sqlite_utils

JUDGE_PREFIX = "judge:"


def is_judge(rater: str) -> bool:
    """Whether a rater id names an automatic judge (``judge:<model>``)."""
    return rater.startswith(JUDGE_PREFIX)


def _in(db: sqlite_utils.Database, sql: str, sids: Collection[str]) -> list[tuple[Any, ...]]:
    scope = set(sids)
    return [row for row in db.execute(sql).fetchall() if row[0] in scope]


Scores = dict[str, dict[str, dict[str, tuple[float, int]]]]
"""judge → metric → session → (score, 1-7 rating)."""


def judge_scores(db: sqlite_utils.Database, sids: Collection[str]) -> Scores:
    """Every judge's scores on the sessions: ``judge_scores`` first, else its ``ratings`` rows."""
    out: Scores = defaultdict(lambda: defaultdict(dict))
    for sid, rater, metric, score, rating in _in(
        db, "SELECT session_id, rater, metric, score, rating FROM judge_scores", sids
    ):
        if is_judge(rater):
            out[rater][metric][sid] = (float(score), int(rating))
    for sid, rater, metric, value in _in(
        db,
        "SELECT session_id, rater, metric, value FROM ratings WHERE instrument = 'conversation'",
        sids,
    ):
        if is_judge(rater) and sid not in out[rater][metric]:
            out[rater][metric][sid] = (float(value), int(value))
    return out


def human_ratings(
    db: sqlite_utils.Database, sids: Collection[str]
) -> dict[str, dict[str, dict[str, int]]]:
    """metric → human rater → session → 1-7 conversation rating."""
    out: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for sid, rater, metric, value in _in(
        db,
        "SELECT session_id, rater, metric, value FROM ratings WHERE instrument = 'conversation'",
        sids,
    ):
        if not is_judge(rater):
            out[metric][rater][sid] = int(value)
    return out


Pair = tuple[str, str]
"""Two session ids in sorted order: (A, B)."""


def _choices(
    db: sqlite_utils.Database, sids: Collection[str], keep: Any
) -> dict[Pair, Counter[str]]:
    scope = set(sids)
    votes: dict[Pair, Counter[str]] = defaultdict(Counter)
    for rater, first, second, chosen in db.execute(
        "SELECT rater, first_id, second_id, chosen_id FROM preferences ORDER BY id"
    ):
        if first in scope and second in scope and keep(rater):
            a, b = sorted((first, second))
            votes[(a, b)][chosen] += 1
    return votes


def human_majority(db: sqlite_utils.Database, sids: Collection[str]) -> tuple[dict[Pair, int], int]:
    """The human preference of each session pair by majority vote.

    Returns:
        ``{(A, B): 1 if B was preferred else 0}`` and the number of tied pairs (left out).
    """
    votes = _choices(db, sids, lambda r: not is_judge(r))
    out: dict[Pair, int] = {}
    ties = 0
    for (a, b), c in votes.items():
        if c[a] == c[b]:
            ties += 1
        else:
            out[(a, b)] = int(c[b] > c[a])
    return out, ties


def judge_preferences(
    db: sqlite_utils.Database, judge: str, sids: Collection[str]
) -> dict[Pair, int]:
    """A judge's stored pairwise preferences: ``{(A, B): 1 if B else 0}`` (majority, ties left out)."""
    votes = _choices(db, sids, lambda r: r == judge)
    return {(a, b): int(c[b] > c[a]) for (a, b), c in votes.items() if c[a] != c[b]}


def session_feature_rows(
    db: sqlite_utils.Database, sids: Collection[str], model: str | None = None
) -> tuple[str | None, dict[str, dict[str, float]]]:
    """The geometry features of the sessions, for one embedding model.

    Args:
        model: the embedding model; None picks the one with features for the most sessions.

    Returns:
        The model and ``{session: {feature: finite value}}`` (missing and non-finite values left
        out).
    """
    from playground.geometry.features import FEATURE_NAMES  # not the parameters (late_k)

    rows = _in(db, "SELECT session_id, model, features FROM session_features", sids)
    if not rows:
        return model, {}
    if model is None:
        counts = Counter(m for _, m, _ in rows)
        model = min(counts, key=lambda m: (-counts[m], m))
    out: dict[str, dict[str, float]] = {}
    for sid, m, text in rows:
        if m != model:
            continue
        try:
            raw = json.loads(text)
        except ValueError:
            continue
        values: dict[str, float] = {}
        for name, v in raw.items() if isinstance(raw, dict) else ():
            if name not in FEATURE_NAMES or isinstance(v, bool):
                continue
            if isinstance(v, int | float) and math.isfinite(v):
                values[str(name)] = float(v)
        out[sid] = values
    return model, out


def ensure_features(db: sqlite_utils.Database, sids: Collection[str], embedder: Any) -> str | None:
    """Compute and store the geometry features of the sessions whose stored row is missing or
    out of date (message vectors missing from the cache are embedded first).

    Returns:
        The embedding model of the features (None when there are no sessions).

    Raises:
        PlaygroundError: the features cannot be computed or stored (e.g. a read-only database),
            or this is called while an event loop runs in this thread.
    """
    from playground.geometry import store

    rows = store.compute_many_sync(db, sorted(sids), embedder)
    return rows[0].model if rows else None
