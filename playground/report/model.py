"""The ratings report's records (pydantic, frozen, JSON-serialisable); built by ``playground.report.stats``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from playground.report.agreement_model import AgreementWithHumans

NO_CONDITION = "(no condition)"
METHODS = [
    "observation = one rater's rating of one session",
    "quartiles: numpy.percentile method='linear' (Hyndman-Fan type 7)",
    "Mann-Whitney U: scipy.stats.mannwhitneyu two-sided, method='auto'; u = U of condition_a",
    "rank-biserial r = 2U/(n_a*n_b) - 1; positive = condition_a rated higher",
    "p_holm: Holm step-down over the 7 metrics of each condition pair",
    "preferences: Wilson 95% interval; two-sided exact binomial test against 0.5",
    "agreement: Krippendorff's alpha (ordinal), raters x sessions, NaN for missing",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class MetricSummary(_Frozen):
    """One metric (or questionnaire item) in one condition."""

    condition: str
    metric: str
    n: int
    median: float | None
    mean: float | None
    q1: float | None
    q3: float | None
    distribution: dict[int, int]
    """Count of each value 1..7."""


class Comparison(_Frozen):
    """Mann-Whitney U between two conditions on one metric."""

    condition_a: str
    condition_b: str
    metric: str
    n_a: int
    n_b: int
    u: float | None
    p: float | None
    r: float | None
    p_holm: float | None


class Share(_Frozen):
    """How often one condition was chosen within a pair of conditions."""

    condition: str
    chosen: int
    share: float
    ci_low: float
    ci_high: float


class PreferenceSummary(_Frozen):
    """Pairwise choices between two conditions."""

    condition_a: str
    condition_b: str
    n: int
    shares: list[Share]
    p: float
    chose_first: int
    """How often the conversation shown first was chosen (a position-bias check)."""


class RaterPreference(_Frozen):
    """One rater's choices between two conditions, counted two ways.

    ``condition_a`` and ``condition_b`` are the pair's conditions in alphabetical order (as in
    :class:`PreferenceSummary`), not the order on screen: the screen's Conversation A is the
    session shown first, whichever condition it belongs to (``chose_shown_a``).
    """

    rater: str
    condition_a: str
    condition_b: str
    chose_condition_a: int
    """Choices of the conversation in ``condition_a``."""
    chose_condition_b: int
    chose_shown_a: int
    """Choices of the conversation shown first (Conversation A on the rater's screen)."""
    chose_shown_b: int
    """Choices of the conversation shown second (Conversation B on the rater's screen)."""


class PreferenceChoice(_Frozen):
    """One pairwise choice as the rater saw and made it, with the conditions behind it."""

    rater: str
    shown_a: str
    """The session shown first: Conversation A on the rater's screen."""
    shown_a_condition: str
    shown_b: str
    """The session shown second: Conversation B."""
    shown_b_condition: str
    chosen: Literal["A", "B"]
    """The conversation chosen, as labelled on the rater's screen."""
    chosen_condition: str
    reason: str


class ConversationMarks(_Frozen):
    """Unnatural-turn marks on one conversation (all raters together)."""

    session_id: str
    condition: str
    messages: int
    marks: int
    per_message: float | None
    rated: bool
    """Has at least one conversation rating."""


class ConditionMarks(_Frozen):
    condition: str
    conversations: int
    rated_conversations: int
    total: int
    mean_per_conversation: float | None
    mean_per_rated_conversation: float | None
    """Marks on rated conversations / rated conversations."""


class Agreement(_Frozen):
    metric: str
    alpha: float | None
    """None when no session has ratings from 2 raters (or alpha is undefined)."""
    raters: int
    shared_sessions: int


class Counts(_Frozen):
    sessions: int
    rated_sessions: int
    """Sessions with at least one conversation rating."""
    raters: int
    """Distinct raters with conversation ratings, preferences or marks."""
    respondents: int
    """Distinct participants who answered the questionnaire."""
    conversation_ratings: int
    questionnaires: int
    preferences: int
    marks: int


class Report(_Frozen):
    """Everything the report shows; JSON with ``model_dump_json()``."""

    experiment: str | None
    conditions: list[str]
    counts: Counts
    metrics: list[MetricSummary]
    comparisons: list[Comparison]
    preferences: list[PreferenceSummary]
    rater_preferences: list[RaterPreference]
    choices: list[PreferenceChoice] = []
    """Every choice between two conditions, as the rater saw it (in the order made)."""
    conversation_marks: list[ConversationMarks]
    condition_marks: list[ConditionMarks]
    agreement: list[Agreement]
    participant: list[MetricSummary]
    methods: list[str]
    agreement_with_humans: AgreementWithHumans | None = None
    """The judge and the geometry against the human raters (None when not computed)."""

    @property
    def empty(self) -> bool:
        """No conversation ratings, questionnaires, preferences or marks at all (preferences
        within one condition count when the judge/geometry agreement is computed)."""
        c = self.counts
        a = self.agreement_with_humans
        pairs = a is not None and bool(a.human_pairs or a.tied_pairs)
        return not (c.conversation_ratings or c.questionnaires or c.preferences or c.marks or pairs)
