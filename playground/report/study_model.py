"""The study report's records (pydantic, frozen, JSON-serialisable); built by
``playground.report.study``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

STUDY_METHODS = [
    "observation (questionnaire) = one person's rating of one conversation's agent, 1-7",
    "Friedman test (scipy.stats.friedmanchisquare) per statement across the conditions, within"
    " people: only people (plan, name) who rated every condition; a person's several"
    " conversations in one condition are averaged; 'too few' below 3 such people; chi-square"
    " approximation; Kendall's W = chi2 / (n (k - 1))",
    "style matching: the correct style of agent X is the condition of the plan's conversation"
    " whose agent is X; exact one-sided binomial test (scipy.stats.binomtest,"
    " alternative='greater') against chance 1/3, each match counted as independent",
    "favourite: the condition of the agent each person chose, counted per condition",
    "inference: a person's own reason for a message (their private 'reason' note, else their"
    " retrospective 'why', else 'thinking') against the agents' interpretation of that message;"
    " cosine similarity of MiniLM (all-MiniLM-L6-v2) embeddings; sd with ddof=1",
    "judge (optional): a model rates 1-5 how well the interpretation matches the person's"
    " reason; an answer unreadable after one corrective retry counts as failed, never scored",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class PlanSummary(_Frozen):
    """One plan of the report and how far it got."""

    id: str
    created_at: str
    status: str
    humans: int
    conversations: int
    """Steps of the plan (its planned conversations)."""
    run: int
    """Steps with a session."""
    conditions: list[str]
    """The condition of each step, in order (the plan's counter-balanced order)."""
    people: list[str]
    """Everyone who answered something: a questionnaire, a retrospective or the final questions."""
    questionnaires: int
    """(person, conversation) pairs with at least one rating."""
    final_answers: int
    """People who answered the end-of-study questions."""


class StatementSummary(_Frozen):
    """One questionnaire statement in one condition."""

    metric: str
    condition: str
    n: int
    median: float | None
    mean: float | None


class FriedmanResult(_Frozen):
    """One statement across the conditions, within people."""

    metric: str
    n: int
    """People who rated every condition."""
    k: int
    """Conditions compared."""
    statistic: float | None
    p: float | None
    kendall_w: float | None
    note: str = ""
    """Why there is no test ('too few …'), when there is none."""


class StyleMatch(_Frozen):
    """How often people named an agent's style correctly, for agents of one condition (or all)."""

    condition: str
    """A condition, or ``all``."""
    n: int
    correct: int
    accuracy: float | None
    p: float | None
    """Exact one-sided binomial test of ``correct`` of ``n`` against chance 1/3."""


class FavouriteCount(_Frozen):
    condition: str
    count: int
    share: float | None


class InferenceItem(_Frozen):
    """One human message with its author's own reason and the agents' interpretation of it."""

    plan_id: str
    session_id: str
    message_id: int
    condition: str
    person: str
    message: str
    interpretation: str
    reason: str
    source: str
    """Where the reason came from: ``reason`` (a private note), ``why`` or ``thinking``
    (the retrospective review)."""
    cosine: float | None = None
    judge_rating: int | None = None
    judge_reason: str | None = None
    judge_failed: str | None = None
    """Why the judge gave no rating (unreadable answer), when it was asked and failed."""


#: Why a message with its author's reason has no agent interpretation to compare it with:
#: ``ended`` — the conversation ended (or was stopped) before the agents interpreted it (no later
#: message of it was interpreted either); ``skipped`` — a later message was interpreted, so the
#: agents moved on to a newer message before this one's interpretation was done, or it failed.
LeftOutWhy = Literal["ended", "skipped"]
#: The report's words for each :data:`LeftOutWhy`.
LEFT_OUT_WHY: dict[str, str] = {
    "ended": "the conversation ended before the agents interpreted the message",
    "skipped": "the agents moved on to a later message before interpreting it (or it failed)",
}


class LeftOut(_Frozen):
    """A message with its author's own reason that the inference measure leaves out: the agents
    have no interpretation of it to compare with."""

    plan_id: str
    session_id: str
    message_id: int
    condition: str
    person: str
    why: LeftOutWhy


class InferenceSummary(_Frozen):
    """How well the agents inferred people's reasons in one condition (or ``all``)."""

    condition: str
    human_messages: int
    with_reason: int
    """Human messages with their author's own stated reason."""
    n: int
    """Of those, the ones with an interpretation: the pairs compared."""
    left_out: dict[LeftOutWhy, int] = {}
    """The others (``with_reason - n``), by why they have no interpretation."""
    mean_cosine: float | None
    sd_cosine: float | None
    judged: int
    mean_judge: float | None
    judge_failed: int


class StudyCounts(_Frozen):
    plans: int
    conversations: int
    people: int
    questionnaire_ratings: int
    style_matches: int
    favourites: int
    inference_pairs: int


class StudyReport(_Frozen):
    """Everything ``playground study-report`` shows; JSON with ``model_dump_json()``."""

    plans: list[PlanSummary]
    conditions: list[str]
    counts: StudyCounts
    questionnaire: list[StatementSummary]
    friedman: list[FriedmanResult]
    style_matching: list[StyleMatch]
    """One row per condition, then ``all``."""
    confusion: dict[str, dict[str, int]]
    """Correct style → style chosen → count."""
    favourites: list[FavouriteCount]
    inference: list[InferenceSummary]
    """One row per condition, then ``all``."""
    inference_items: list[InferenceItem]
    inference_left_out: list[LeftOut] = []
    """The messages with a reason left out of the inference measure, and why."""
    similarity: bool
    """Whether cosine similarities were computed (an embedding model was given)."""
    judge: str | None = None
    """The judge model, when one rated the inferences."""
    judge_failures: list[str] = []
    notes: list[str]
    """What is missing or was skipped, in plain words ('plan X has no answers yet')."""
    methods: list[str]
