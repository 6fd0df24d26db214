"""TRACE's conversational geometry, computed from turn embeddings (pure numpy).

A conversation is a sequence of turns ``T_1 … T_n`` (one per message, in order), each a unit
vector, each with its speaker and the second it was posted. ``d(a, b) = 1 − a·b`` is the cosine
distance. TRACE (appendix A) defines its features for a dyad of a user ``U`` and a model ``M``;
in a room every speaker both prompts and responds, so the roles are taken turn by turn:

* a turn ``T_i`` (``i ≥ 2``) whose speaker differs from ``T_{i-1}``'s is a *response*: its
  *responder* is its speaker, its *prompt* is ``T_{i-1}`` and its *prompter* is the previous
  speaker (a speaker's second message in a row is a continuation, not a response);
* the "previous response" a prompter saw is the latest earlier response *to that prompter*
  (a turn by someone else right after one of theirs). In a strict alternation this is TRACE's
  ``M_{i-1}``.

``docs/geometry.md`` gives every formula, the mapping to TRACE's names and the departures. A value
that is undefined (one turn, no response, no goal, a zero denominator) is ``None``, never NaN.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

#: Bumped whenever a definition changes: stored features of another version are recomputed.
FEATURES_VERSION = 1

#: The features that need a goal (None without one), the last of :data:`FEATURE_NAMES`.
GOAL_FEATURE_NAMES: tuple[str, ...] = (
    "goal_adherence",
    "goal_distance_min",
    "goal_distance_max",
    "final_goal_distance",
    "goal_drift",
    "goal_trend",
    "goal_convergence",
)

#: The session features, in the order tables and CSV files show them.
FEATURE_NAMES: tuple[str, ...] = (
    "turns",
    "self_similarity_mean",
    "self_similarity_max",
    "gap_mean",
    "gap_median",
    "gap_mad",
    "initial_response_distance",
    "responder_distance_mean",
    "responder_distance_max",
    "responder_distance_min",
    "prompter_distance_mean",
    "prompter_distance_max",
    "relevance_trend",
    "cohesion",
    "volatility",
    "late_volatility",
    "max_jump",
    "self_consistency",
    *GOAL_FEATURE_NAMES,
)

#: The per-speaker features (each over that speaker's own turns).
SPEAKER_FEATURE_NAMES: tuple[str, ...] = (
    "turns",
    "self_similarity_mean",
    "self_similarity_max",
    "gap_mean",
    "responder_distance_mean",
    "responder_distance_max",
    "prompter_distance_mean",
    "prompter_distance_max",
    "relevance_trend",
    "cohesion",
    "self_consistency",
    "goal_adherence",
    "goal_drift",
)

_EPS = 1e-12


def _unit(m: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    rows = np.asarray(m, dtype=np.float64)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms: npt.NDArray[np.float64] = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms < _EPS] = 1.0
    return rows / norms


def _d(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine distance of two unit vectors, clipped to [0, 2] against rounding."""
    return float(min(2.0, max(0.0, 1.0 - float(np.dot(a, b)))))


def _mean(xs: Sequence[float]) -> float | None:
    return float(sum(xs) / len(xs)) if len(xs) else None


def _max(xs: Sequence[float]) -> float | None:
    return float(max(xs)) if len(xs) else None


def _min(xs: Sequence[float]) -> float | None:
    return float(min(xs)) if len(xs) else None


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Least-squares slope of ys against xs; None with fewer than two distinct xs."""
    if len(xs) < 2 or len(set(xs)) < 2:
        return None
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    x = x - x.mean()
    return float(np.dot(x, y - y.mean()) / np.dot(x, x))


def _check(
    vectors: np.ndarray, speakers: Sequence[str], times: Sequence[float | None] | None
) -> np.ndarray:
    """The vectors as unit float64 rows, after checking the lengths agree.

    Raises:
        ValueError: the vectors are not a 2-D array, or speakers/times differ in length from them.
    """
    v = np.asarray(vectors, dtype=np.float64)
    if v.size == 0:
        return np.zeros((0, v.shape[-1] if v.ndim == 2 else 0))
    if v.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (turns × dimensions), got shape {v.shape}")
    if len(speakers) != len(v):
        raise ValueError(f"{len(speakers)} speakers for {len(v)} vectors")
    if times is not None and len(times) != len(v):
        raise ValueError(f"{len(times)} times for {len(v)} vectors")
    return _unit(v)


class _Turns:
    """The relations between turns that every feature uses, computed once."""

    def __init__(self, v: np.ndarray, speakers: Sequence[str]) -> None:
        n = len(v)
        self.v = v
        self.speakers = list(speakers)
        #: every dot product at once (n × n, small): the features are lookups in it
        self.gram: list[list[float]] = (v @ v.T).tolist()
        g = self.gram
        #: d(T_i, T_{i-1}) at index i (0-based; None at 0)
        self.step: list[float | None] = [None] * min(n, 1) + [self.d(i, i - 1) for i in range(1, n)]
        #: cohesion at index i: T_i · (T_1 + … + T_{i-1}) / |T_1 + … + T_{i-1}|
        self._coh: list[float | None] = [None] * min(n, 1)
        sq = 0.0  # |T_1 + … + T_{i-1}|²
        for i in range(1, n):
            sq += 2.0 * sum(g[i - 1][: i - 1]) + g[i - 1][i - 1]
            if sq < _EPS:
                self._coh.append(None)
            else:
                self._coh.append(min(1.0, max(-1.0, sum(g[i][:i]) / sq**0.5)))
        #: indices of responses (speaker differs from the previous turn's)
        self.responses = [i for i in range(1, n) if speakers[i] != speakers[i - 1]]
        #: turn index j → d(T_j, the latest earlier response to T_j's speaker), for every turn
        #: whose speaker has had a response (TRACE's d(U_i, M_{i-1}) in a dyad)
        self.prompter: dict[int, float] = {}
        last_reply_to: dict[str, int] = {}
        responded = set(self.responses)
        for i in range(n):
            if speakers[i] in last_reply_to:
                self.prompter[i] = self.d(i, last_reply_to[speakers[i]])
            if i in responded:  # T_i answered T_{i-1}: the latest reply its prompter has seen
                last_reply_to[speakers[i - 1]] = i
        #: each speaker's consecutive own turns: d(T_j, T_k) for their k-th and (k+1)-th turns
        self.own: dict[str, list[int]] = {}
        for i, s in enumerate(self.speakers):
            self.own.setdefault(s, []).append(i)

    def d(self, i: int, j: int) -> float:
        """Cosine distance of turns i and j, clipped to [0, 2] against rounding."""
        return min(2.0, max(0.0, 1.0 - self.gram[i][j]))

    def cohesion(self, i: int) -> float | None:
        """cos(T_i, mean of T_1 … T_{i-1}); None for the first turn (or a zero context)."""
        return self._coh[i]

    def self_sims(self, speaker: str) -> list[float]:
        idx = self.own[speaker]
        g = self.gram
        return [g[a][b] for k, a in enumerate(idx) for b in idx[k + 1 :]]

    def consistency(self, speaker: str) -> list[float]:
        idx = self.own[speaker]
        return [self.d(b, a) for a, b in itertools.pairwise(idx)]


def _gaps(times: Sequence[float | None] | None, n: int) -> list[float | None]:
    """gap_i = t_i − t_{i-1} in seconds at index i (None at 0 or where a time is missing)."""
    if times is None:
        return [None] * n
    out: list[float | None] = [None]
    for i in range(1, n):
        a, b = times[i - 1], times[i]
        out.append(None if a is None or b is None else float(b) - float(a))
    return out


def _goal_part(t: _Turns, g: np.ndarray | None, idx: list[int]) -> dict[str, float | None]:
    """Goal features over the turns ``idx``."""
    if g is None or not idx:
        return dict.fromkeys(GOAL_FEATURE_NAMES)
    ds = [min(2.0, max(0.0, 1.0 - x)) for x in (t.v[idx] @ g).tolist()]
    centre = t.v[idx].mean(axis=0)
    norm = float(np.linalg.norm(centre))
    drift = _d(centre / norm, g) if norm >= _EPS else None
    lo = min(ds)
    return {
        "goal_adherence": _mean(ds),
        "goal_distance_min": lo,
        "goal_distance_max": max(ds),
        "final_goal_distance": ds[-1],
        "goal_drift": drift,
        "goal_trend": _slope([i + 1 for i in idx], ds),
        "goal_convergence": ds[-1] / lo if lo > 1e-9 else None,
    }


def _goal_vector(goal: np.ndarray | None) -> np.ndarray | None:
    if goal is None:
        return None
    g = np.asarray(goal, dtype=np.float64).reshape(-1)
    if g.size == 0 or float(np.linalg.norm(g)) < _EPS:
        return None
    unit: np.ndarray = _unit(g)[0]  # numpy types a row of an array as Any
    return unit


def trace_features(
    vectors: np.ndarray,
    speakers: Sequence[str],
    times: Sequence[float | None] | None,
    goal: np.ndarray | None = None,
    *,
    late_k: int = 3,
    goal_is_first_turn: bool = False,
) -> dict[str, float | None]:
    """The session's TRACE features (names in :data:`FEATURE_NAMES`).

    Args:
        vectors: one embedding per turn, in order (n × dim); normalised here.
        speakers: the speaker of each turn.
        times: the second each turn was posted (any origin), or None where unknown.
        goal: the goal's embedding (the icebreaker or a STORM task), or None.
        late_k: late volatility averages the turn-to-turn distances of the last ``late_k`` turns.
        goal_is_first_turn: the goal is the first turn itself (the icebreaker): goal features
            then leave that turn out (its distance to itself is 0 by construction).

    Returns:
        Feature name → value; None where the feature is undefined for this conversation.

    Raises:
        ValueError: mismatched lengths, vectors that are not 2-D, or ``late_k`` below 1.
    """
    if late_k < 1:
        raise ValueError(f"late_k must be at least 1 (got {late_k})")
    v = _check(vectors, speakers, times)
    n = len(v)
    t = _Turns(v, speakers)
    steps = [s for s in t.step if s is not None]
    resp = [t.step[i] for i in t.responses]
    resp_d = [x for x in resp if x is not None]
    gaps = [g for g in _gaps(times, n) if g is not None]
    med = float(np.median(gaps)) if gaps else None
    sims = [s for sp in t.own for s in t.self_sims(sp)]
    cons = [c for sp in t.own for c in t.consistency(sp)]
    coh = [c for c in (t.cohesion(i) for i in range(1, n)) if c is not None]
    late = [x for x in t.step[max(1, n - late_k) :] if x is not None]
    out: dict[str, float | None] = {
        "turns": float(n),
        "self_similarity_mean": _mean(sims),
        "self_similarity_max": _max(sims),
        "gap_mean": _mean(gaps),
        "gap_median": med,
        "gap_mad": float(np.median(np.abs(np.asarray(gaps) - med)))
        if gaps and med is not None
        else None,
        "initial_response_distance": resp_d[0] if resp_d else None,
        "responder_distance_mean": _mean(resp_d),
        "responder_distance_max": _max(resp_d),
        "responder_distance_min": _min(resp_d),
        "prompter_distance_mean": _mean(list(t.prompter.values())),
        "prompter_distance_max": _max(list(t.prompter.values())),
        "relevance_trend": _slope([i + 1 for i in t.responses], resp_d),
        "cohesion": _mean(coh),
        "volatility": _mean(steps),
        "late_volatility": _mean(late),
        "max_jump": _max(steps),
        "self_consistency": _mean(cons),
    }
    g = _goal_vector(goal)
    idx = list(range(1 if goal_is_first_turn else 0, n))
    out.update(_goal_part(t, g, idx))
    return out


def per_speaker_features(
    vectors: np.ndarray,
    speakers: Sequence[str],
    times: Sequence[float | None] | None,
    goal: np.ndarray | None = None,
    *,
    goal_is_first_turn: bool = False,
) -> dict[str, dict[str, float | None]]:
    """Each speaker's variant of the features (names in :data:`SPEAKER_FEATURE_NAMES`).

    A speaker's responder distances are those of the responses they gave; their prompter
    distances those of the prompts they made (see the module docstring); self-similarity and
    self-consistency compare their own turns; cohesion, gaps and goal features are averaged over
    their own turns.

    Args:
        vectors: one embedding per turn, in order.
        speakers: the speaker of each turn.
        times: the second each turn was posted, or None.
        goal: the goal's embedding, or None.
        goal_is_first_turn: the goal is the first turn itself (left out of the goal features).

    Returns:
        Speaker → feature name → value (None where undefined), speakers in order of first turn.

    Raises:
        ValueError: mismatched lengths or vectors that are not 2-D.
    """
    v = _check(vectors, speakers, times)
    n = len(v)
    t = _Turns(v, speakers)
    gaps = _gaps(times, n)
    g = _goal_vector(goal)
    out: dict[str, dict[str, float | None]] = {}
    for sp, idx in t.own.items():
        mine = set(idx)
        sims = t.self_sims(sp)
        resp_i = [i for i in t.responses if i in mine]
        resp = [float(t.step[i]) for i in resp_i]  # type: ignore[arg-type]
        prom = [d for p, d in t.prompter.items() if p in mine]
        coh = [c for c in (t.cohesion(i) for i in idx) if c is not None]
        my_gaps = [x for x in (gaps[i] for i in idx) if x is not None]
        goal_idx = [i for i in idx if not (goal_is_first_turn and i == 0)]
        gp = _goal_part(t, g, goal_idx)
        out[sp] = {
            "turns": float(len(idx)),
            "self_similarity_mean": _mean(sims),
            "self_similarity_max": _max(sims),
            "gap_mean": _mean(my_gaps),
            "responder_distance_mean": _mean(resp),
            "responder_distance_max": _max(resp),
            "prompter_distance_mean": _mean(prom),
            "prompter_distance_max": _max(prom),
            "relevance_trend": _slope([i + 1 for i in resp_i], resp),
            "cohesion": _mean(coh),
            "self_consistency": _mean(t.consistency(sp)),
            "goal_adherence": gp["goal_adherence"],
            "goal_drift": gp["goal_drift"],
        }
    return out


def turn_series(vectors: np.ndarray, speakers: Sequence[str]) -> dict[str, list[float | None]]:
    """Per-turn series for plotting under the timeline.

    Returns:
        ``"cohesion"``: cos(T_i, mean of the turns before it); ``"volatility"``: d(T_i, T_{i-1});
        ``"responder_distance"``: d(T_i, T_{i-1}) where T_i is a response, else None. Each list has
        one entry per turn; the first turn's entries are None.

    Raises:
        ValueError: mismatched lengths or vectors that are not 2-D.
    """
    v = _check(vectors, speakers, None)
    t = _Turns(v, speakers)
    responses = set(t.responses)
    return {
        "cohesion": [t.cohesion(i) for i in range(len(v))],
        "volatility": list(t.step),
        "responder_distance": [t.step[i] if i in responses else None for i in range(len(v))],
    }


def trajectory_2d(vectors: np.ndarray) -> np.ndarray:
    """The turns projected on their first two principal components (n × 2).

    Deterministic: each component's sign is chosen so that the turn farthest along it has a
    positive coordinate (ties: the earliest such turn). Fewer than two turns, or turns spanning
    fewer than two directions, give zeros in the missing columns.
    """
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2 or len(v) == 0:
        return np.zeros((0, 2))
    v = _unit(v)
    centred = v - v.mean(axis=0)
    out = np.zeros((len(v), 2))
    if len(v) < 2:
        return out
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    scores = u * s
    for c in range(min(2, scores.shape[1])):
        col = scores[:, c]
        if float(np.max(np.abs(col))) < 1e-9:
            continue
        k = int(np.argmax(np.abs(col)))
        out[:, c] = col if col[k] > 0 else -col
    return out


def clean(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every NaN or infinity replaced by None (for JSON storage)."""
    out: dict[str, Any] = {}
    for k, x in values.items():
        if isinstance(x, dict):
            out[k] = clean(x)
        elif isinstance(x, float) and not np.isfinite(x):
            out[k] = None
        else:
            out[k] = x
    return out
