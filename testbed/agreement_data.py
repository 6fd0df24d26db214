"""A fixed small agreement data set, inserted row by row (sessions, raters, ratings, judge
scores, preferences, session features), with the values the tests compute by hand.

Five sessions r1..r5 rated on coherence by two humans and a judge (rho = 0.9 by hand ranks);
twelve sessions p00..p11 whose geometry features and judge scores all rise with the index, and
22 session pairs where the humans prefer the higher index (one more pair tied 1-1).
"""

from __future__ import annotations

import json
from typing import Any

from playground.rating.store import CONVERSATION_METRICS

NOW = "2025-01-01T00:00:00+00:00"
JUDGE = "judge:model-x"
FALLBACK_JUDGE = "judge:ratings-only"
MODEL = "all-MiniLM-L6-v2"

RHO_SESSIONS = ["r1", "r2", "r3", "r4", "r5"]
JUDGE_SCORE = [2.2, 3.9, 5.1, 4.4, 6.8]  # ranks 1 2 4 3 5
JUDGE_RATING = [2, 4, 5, 4, 7]
HUMAN_1 = [2, 3, 5, 6, 7]
HUMAN_2 = [1, 4, 4, 5, 6]  # means 1.5 3.5 4.5 5.5 6.5: ranks 1..5, so sum d^2 = 2, rho = 0.9

PAIR_SESSIONS = [f"p{i:02d}" for i in range(12)]
PAIRS = [(i, i + 1) for i in range(11)] + [(i, i + 2) for i in range(10)] + [(0, 11)]
TIED = (0, 5)
JUDGE_WRONG = [(0, 1), (1, 2)]  # the judge's stored preferences pick the lower index here


def session(db: Any, sid: str, condition: str = "a") -> None:
    db.execute(
        "INSERT INTO sessions (id, created_at, status, engine, model, config, condition)"
        " VALUES (?, ?, 'finished', 'offline', 'offline', '{}', ?)",
        [sid, NOW, condition],
    )


def rater(db: Any, rid: str) -> None:
    db.execute("INSERT OR IGNORE INTO raters (id, created_at) VALUES (?, ?)", [rid, NOW])


def rate(db: Any, sid: str, rid: str, metric: str, value: int) -> None:
    rater(db, rid)
    db.execute(
        "INSERT INTO ratings (session_id, rater, instrument, metric, value, created_at,"
        " updated_at) VALUES (?, ?, 'conversation', ?, ?, ?, ?)",
        [sid, rid, metric, value, NOW, NOW],
    )


def judge_score(db: Any, sid: str, rid: str, metric: str, score: float, rating: int) -> None:
    """A judge's score as the judge stores it: a judge_scores row and a ratings row."""
    rate(db, sid, rid, metric, rating)
    db.execute(
        "INSERT INTO judge_scores (session_id, rater, metric, score, rating, reason, method,"
        " model, created_at) VALUES (?, ?, ?, ?, ?, 'because', 'logprobs', 'model-x', ?)",
        [sid, rid, metric, score, rating, NOW],
    )


def prefer(db: Any, rid: str, first: str, second: str, chosen: str) -> None:
    rater(db, rid)
    db.execute(
        "INSERT INTO preferences (rater, first_id, second_id, chosen_id, reason, created_at)"
        " VALUES (?, ?, ?, ?, '', ?)",
        [rid, first, second, chosen, NOW],
    )


def features(db: Any, sid: str, values: dict[str, float | None], model: str = MODEL) -> None:
    db.execute(
        "INSERT INTO session_features (session_id, model, version, computed_at, message_count,"
        " goal, features, per_speaker) VALUES (?, ?, 1, ?, 10, NULL, ?, '{}')",
        [sid, model, NOW, json.dumps(values)],
    )


def rho_data(db: Any) -> None:
    """r1..r5: coherence by h1, h2 and the judge; engagement on 2 shared sessions only."""
    for i, sid in enumerate(RHO_SESSIONS):
        session(db, sid, "a" if i % 2 else "b")
        rate(db, sid, "h1", "coherence", HUMAN_1[i])
        rate(db, sid, "h2", "coherence", HUMAN_2[i])
        judge_score(db, sid, JUDGE, "coherence", JUDGE_SCORE[i], JUDGE_RATING[i])
        rate(db, sid, FALLBACK_JUDGE, "coherence", i + 1)
    for sid in RHO_SESSIONS[:2]:
        rate(db, sid, "h1", "engagement", 4)
        judge_score(db, sid, JUDGE, "engagement", 4.5, 5)


def pair_data(db: Any, pairs: list[tuple[int, int]] = PAIRS, *, judge_wrong: bool = True) -> None:
    """p00..p11 with features, judge scores and the human (and judge) preferences."""
    for i, sid in enumerate(PAIR_SESSIONS):
        session(db, sid, "a" if i % 2 else "b")
        # goal_adherence is missing in p03: dropped from the regression under "drop"
        goal = None if i == 3 else 0.1 * i
        values = {"cohesion": 0.05 * i, "volatility": 0.01 * i * i, "goal_adherence": goal}
        features(db, sid, {**values, "late_k": 3})  # late_k is a parameter, not a feature
        for m in CONVERSATION_METRICS:
            judge_score(db, sid, JUDGE, m.key, 1 + 0.5 * i, round(1 + 0.5 * i))
    for n, (i, j) in enumerate(pairs):
        a, b = PAIR_SESSIONS[i], PAIR_SESSIONS[j]
        first, second = (a, b) if n % 2 else (b, a)  # the shown order alternates
        prefer(db, "h1", first, second, b)
        if n % 5 == 0:  # two more raters, split 1-1: the majority still prefers b
            prefer(db, "h2", first, second, b)
            prefer(db, "h3", first, second, a)
        if judge_wrong and (i, j) in JUDGE_WRONG:
            prefer(db, JUDGE, first, second, a)
    a, b = PAIR_SESSIONS[TIED[0]], PAIR_SESSIONS[TIED[1]]
    prefer(db, "h1", a, b, a)
    prefer(db, "h2", b, a, b)
    prefer(db, JUDGE, a, b, b)  # a judge's vote is not a human vote: the pair stays tied
