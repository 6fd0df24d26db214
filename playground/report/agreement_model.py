"""Records of the judge/geometry-against-humans agreement (pydantic, frozen, JSON-serialisable).

Built by :mod:`playground.report.agreement`; part of the ratings report as
``Report.agreement_with_humans``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

#: TRACE's Table 1 (mean pairwise accuracy, leave-one-user-out over 76 users, 5,423 pairs), %.
PAPER_ACCURACY: dict[str, float] = {"geometry": 68.2, "judge": 70.0, "combined": 80.2}
PREDICTORS: tuple[str, ...] = ("geometry", "judge", "combined")
PREDICTOR_LABELS: dict[str, str] = {
    "geometry": "Geometry (TRACE features)",
    "judge": "Judge",
    "combined": "Geometry + judge",
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class MetricAgreement(_Frozen):
    """How one judge's scores on one metric agree with the human raters."""

    judge: str
    """The judge's rater id (``judge:<model>``)."""
    metric: str
    n: int
    """Sessions in scope rated by this judge and by at least one human on this metric."""
    humans: int
    """Human raters who rated at least one of those sessions on this metric."""
    rho: float | None
    """Spearman's rho between the judge's score and the mean human rating per session."""
    p: float | None
    """Two-sided p-value of rho (scipy's t approximation)."""
    alpha: float | None
    """Krippendorff's alpha (ordinal) over the judge and the human raters on those sessions."""
    alpha_humans: float | None
    """The same alpha without the judge (how much the humans agree among themselves)."""
    note: str | None = None
    """Why a number is missing ("not enough sessions", ...); None when all are there."""


class PairwiseAccuracy(_Frozen):
    """How often a predictor picks the conversation the humans preferred."""

    predictor: str
    """``geometry``, ``judge`` or ``combined``."""
    n: int
    """Rated pairs the predictor could be evaluated on."""
    correct: int | None
    accuracy: float | None
    """correct / n (0..1); None below the minimum number of pairs or without inputs."""
    ci_low: float | None
    ci_high: float | None
    """Wilson 95 % interval of the accuracy."""
    paper: float
    """TRACE's Table 1 accuracy for the same kind of predictor, in %."""
    note: str | None = None


class AgreementWithHumans(_Frozen):
    """The judge and the conversational geometry measured against the human raters."""

    judges: list[str]
    """Judge raters (ids starting with ``judge:``) with scores on sessions in scope."""
    pairwise_judge: str | None
    """The judge whose scores and preferences the pairwise predictions use."""
    features_model: str | None
    """The embedding model of the ``session_features`` rows used; None when there are none."""
    features: list[str]
    """The geometry features in the logistic regression (after dropping incomplete ones)."""
    metrics: list[MetricAgreement]
    human_pairs: int
    """Session pairs with a human majority preference (ties dropped)."""
    tied_pairs: int
    """Session pairs whose human votes were split evenly (left out)."""
    min_pairs: int
    min_sessions: int
    pairwise: list[PairwiseAccuracy]
    methods: list[str]
