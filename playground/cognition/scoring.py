"""Pure formulas of the Inner Thoughts framework (docs/spec.md §1.2, §1.4). No I/O, no hidden
randomness.

They sit in the cognition layer because both sides use them: the minds turn a rating into a
distribution here, and the agent (:mod:`playground.inner_thoughts`) scores retrieval and
motivation with them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import numpy as np

RATINGS = (1, 2, 3, 4, 5)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (0 when either is all zeros)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def memory_decay(t: int, tau: int, decay: float = 0.95) -> float:
    """d_x = decay^(t − τx): τx is the timestep the memory was last accessed."""
    return decay ** max(0, t - tau)


def saliency(
    cos_interp: float, cos_utt: float, weight: float, t: int, tau: int, decay: float = 0.95
) -> float:
    """saliency(x, u) = max(cos(x, u_interp), cos(x, u)) · w_x · decay^(t − τx)."""
    return max(cos_interp, cos_utt) * weight * memory_decay(t, tau, decay)


def saliency_matrix(
    vectors: np.ndarray,
    weights: np.ndarray,
    taus: np.ndarray,
    u: np.ndarray,
    u_interp: np.ndarray | None,
    t: int,
    decay: float = 0.95,
) -> np.ndarray:
    """Vectorised :func:`saliency` for unit-length rows of ``vectors`` (one row per memory)."""
    sims = vectors @ u
    if u_interp is not None:
        sims = np.maximum(sims, vectors @ u_interp)
    scores: np.ndarray = sims * weights * np.power(decay, np.maximum(0, t - taus))
    return scores


def silence_factor(t: int, tau_p: int, base: float = 1.02) -> float:
    """d_p = base^(t − τp): τp is the last timestep participant p spoke."""
    return base ** max(0, t - tau_p)


def normalise_distribution(probs: Mapping[int, float]) -> dict[int, float]:
    """Keep ratings 1..5, rescale to sum to 1. An all-zero input raises ValueError.

    Normalising matters when a server's top-5 alternatives include non-digit tokens: their mass
    would otherwise drag every score down.
    """
    kept = {r: max(0.0, float(p)) for r, p in probs.items() if r in RATINGS}
    total = sum(kept.values())
    if total <= 0:
        raise ValueError("no probability mass on ratings 1..5")
    return {r: kept.get(r, 0.0) / total for r in RATINGS}


def distribution_from_logprobs(top: Iterable[tuple[str, float]]) -> dict[int, float] | None:
    """Rating distribution from a rating token's top alternatives (token, logprob).

    Tokens like ``"4"`` and ``" 4"`` are merged. Returns None when no alternative is a rating.
    """
    probs: dict[int, float] = {}
    for token, logprob in top:
        m = re.match(r'\s*"?([1-5])(?![0-9])', token)
        if m:
            r = int(m.group(1))
            probs[r] = probs.get(r, 0.0) + math.exp(logprob)
    if not probs:
        return None
    return normalise_distribution(probs)


def expected_rating(distribution: Mapping[int, float]) -> float:
    """Σ p(s)·s over the rating distribution."""
    return sum(p * s for s, p in distribution.items())


def motivation_score(
    distribution: Mapping[int, float], t: int, tau_p: int, base: float = 1.02
) -> float:
    """score = Σ p(s_i)·s_i · base^(t − τp)  (docs/spec.md §1.4 Evaluation)."""
    return expected_rating(distribution) * silence_factor(t, tau_p, base)


def point_distribution(rating: int) -> dict[int, float]:
    """The distribution used when a server returns no logprobs: the parsed rating with probability 1."""
    if rating not in RATINGS:
        raise ValueError(f"rating {rating} outside 1..5")
    return {r: 1.0 if r == rating else 0.0 for r in RATINGS}
