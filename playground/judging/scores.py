"""How a judge's answer becomes a score: the rating token's distribution, its mean, the rounding.

Where the server returns logprobs, the score is the probability-weighted mean Σ p(s)·s over the
digits 1–7 among the rating token's top alternatives (renormalised over those digits); a sampled
distribution is read the same way; otherwise the score is the parsed integer. The stored rating
is the score rounded half up (:func:`round_half_up`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from playground.llm.responses import TokenLogprob
from playground.rating.store import LIKERT_MAX, LIKERT_MIN

_RATING_KEY = re.compile(r'"rating"\s*:\s*"?\s*$')
_DIGIT = re.compile(r'\s*"?([0-9])(?![0-9])')
_METRIC_KEY = re.compile(r'"([a-z_]+)"\s*:\s*\{')


@dataclass(frozen=True)
class Answer:
    """One statement as the judge answered it, with the distribution read for its rating."""

    reason: str
    rating: int
    distribution: dict[int, float] | None
    #: How the distribution was read (``logprobs`` or ``sampled``); ``parsed`` without one.
    method: str = "logprobs"
    samples: int | None = None


def rating_distributions(
    tokens: Sequence[TokenLogprob] | None,
) -> list[tuple[str | None, int, dict[int, float]]]:
    """Each ``"rating": N`` value token of an answer: the metric key it belongs to (the last
    ``"key": {`` before it, None if there is none), the digit written and the distribution over
    1–7 from its top alternatives (``"4"`` and ``" 4"`` merged; other tokens dropped and the rest
    renormalised). A rating token without a digit among its alternatives is left out."""
    found: list[tuple[str | None, int, dict[int, float]]] = []
    text = ""
    for tok in tokens or []:
        lead = tok.token[: len(tok.token) - len(tok.token.lstrip())]
        written = _DIGIT.match(tok.token)
        if written and _RATING_KEY.search((text + lead)[-40:]):
            probs: dict[int, float] = {}
            for alt, logprob in tok.top or [(tok.token, tok.logprob)]:
                m = _DIGIT.match(alt)
                if m and LIKERT_MIN <= int(m.group(1)) <= LIKERT_MAX:
                    s = int(m.group(1))
                    probs[s] = probs.get(s, 0.0) + math.exp(logprob)
            total = sum(probs.values())
            if total > 0:
                keys = _METRIC_KEY.findall(text)
                dist = {s: p / total for s, p in sorted(probs.items())}
                found.append((keys[-1] if keys else None, int(written.group(1)), dist))
        text += tok.token
    return found


def expected_score(distribution: dict[int, float]) -> float:
    """Σ p(s)·s over a rating distribution."""
    return sum(s * p for s, p in distribution.items())


def round_half_up(score: float) -> int:
    """The whole rating nearest to ``score`` (4.5 → 5, not Python's 4), kept within 1–7."""
    return min(LIKERT_MAX, max(LIKERT_MIN, math.floor(score + 0.5)))


def score_of(answer: Answer) -> tuple[float, str]:
    """The unrounded score and the method stored with it (``sampled:N`` with the sample count)."""
    if answer.distribution:
        method = answer.method
        if method == "sampled" and answer.samples:
            method = f"sampled:{answer.samples}"  # the sample count travels with the method
        return round(expected_score(answer.distribution), 6), method
    return float(answer.rating), "parsed"


def matching(written: int, parsed: int, dist: dict[int, float]) -> dict[int, float] | None:
    """``dist`` when the token it was read from is the rating the JSON says; otherwise None (the
    parsed integer alone is trusted)."""
    return dist if written == parsed else None
