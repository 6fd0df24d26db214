"""The export format (``docs/export-format.md``) as one typed model: what `playground import` accepts.

An export file comes from anywhere: another version of the app, a script, a hand edit, a
damaged disk. Everything in a line is checked against it before the importer writes a byte of
it, so a value the database would store but the app could not read back (a count given as text,
a number too large for SQLite, a message pointing at a thought the file does not hold) is
refused with its line and field named, instead of breaking ``show`` or replay later.

The model is the format's single source: the field reference in ``docs/export-format.md`` is
generated from it (``scripts/export_reference.py --write docs/export-format.md``), and
a test checks that every column of the database has its field here. A line is parsed by
:mod:`playground.transfer.record_text` and checked against this model, its references and its
event log by :mod:`playground.transfer.validation`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue

from playground import domain
from playground.domain.refs import REF_KINDS
from playground.domain.simulated_user import Change, FieldSource, StateFormat
from playground.transfer.record_text import RecordError, loads

#: SQLite stores integers as signed 64-bit numbers; a larger one cannot be written.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: Characters in a name, a kind, a model name, a timestamp...
SHORT_TEXT = 1_000
#: Characters in a message, a thought, a reason, an explanation.
LONG_TEXT = 1_000_000
ID_PATTERN = r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$"
STIMULUS_PATTERN = rf"^({'|'.join(REF_KINDS)}):[0-9]{{1,18}}$"
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?", re.ASCII
)


def _timestamp(value: str) -> str:
    if not _TIMESTAMP.fullmatch(value):
        raise ValueError("expected an ISO 8601 timestamp such as 2026-01-02T03:04:05.678+00:00")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("not a real date and time") from None
    return value


def _profile_text(value: str | None) -> str | None:
    """``server_profile`` is JSON text that ``show`` reads: an object whose ``learned`` is a list."""
    if not value:
        return value
    try:
        parsed = loads(value)
    except RecordError as exc:
        raise ValueError(f"not JSON text of an object ({exc.reason})") from None
    if not isinstance(parsed, dict):
        raise ValueError("not JSON text of an object")
    learned = parsed.get("learned")
    if learned is not None and not (
        isinstance(learned, list) and all(isinstance(x, str) for x in learned)
    ):
        raise ValueError("its 'learned' must be a list of strings")
    return value


Int = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]
Count = Annotated[int, Field(ge=0, le=INT64_MAX)]
Real = Annotated[float, Field(allow_inf_nan=False)]
Unit = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Flag = Literal[0, 1]
Id = Annotated[str, Field(pattern=ID_PATTERN)]
Name = Annotated[str, Field(min_length=1, max_length=SHORT_TEXT)]
Short = Annotated[str, Field(max_length=SHORT_TEXT)]
Text = Annotated[str, Field(max_length=LONG_TEXT)]
Timestamp = Annotated[
    str, Field(max_length=40, json_schema_extra={"format": "date-time"}), AfterValidator(_timestamp)
]
Stimulus = Annotated[str, Field(pattern=STIMULUS_PATTERN)]
JsonObject = dict[str, JsonValue]
Rating5 = Annotated[int, Field(ge=1, le=5)]
Rating7 = Annotated[int, Field(ge=1, le=7)]
Status = Literal["running", "finished", "interrupted", "failed"]


class Row(BaseModel):
    """One row of a table, as ``export`` writes it. Values are taken as they are (strict: no
    ``"10"`` for 10); keys the app does not know are ignored."""

    model_config = ConfigDict(strict=True, extra="ignore")


class SessionRow(Row):
    id: Id
    created_at: Timestamp
    updated_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    status: Status
    end_reason: Text | None = None
    engine: Short
    model: Short
    seed: Int | None = None
    condition: Short | None = None
    preset: Short | None = None
    logprobs_supported: Flag | None = None
    config: JsonObject
    pid: Int | None = None
    host: Short | None = None
    calls: Count = 0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    embedding_calls: Count = 0
    parent_id: Id | None = None
    fork_seq: Int | None = None
    fork_message: Int | None = None
    experiment_id: Id | None = None
    retries: Count = 0
    rate_limit_waits: Count = 0
    rate_limit_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    draw: Int | None = None
    server_profile: Annotated[Text | None, AfterValidator(_profile_text)] = None
    dropped: Count = 0
    cut: Count = 0
    fork_messages: Count | None = None


class ExperimentRow(Row):
    id: Id
    name: Short | None = None
    created_at: Timestamp
    config: JsonObject | None = None


class ParticipantRow(Row):
    name: Name
    kind: domain.ParticipantKind
    persona_id: Short | None = None
    persona: JsonObject | None = None
    proactivity: JsonObject | None = None
    color_index: Int | None = None
    joined_at: Timestamp
    left_at: Timestamp | None = None
    policy: domain.SeatPolicy = "inner-thoughts"
    profile: JsonObject | None = None
    remote: Flag = 0
    online: Flag | None = None


class MemoryRow(Row):
    id: Int
    agent: Name
    kind: domain.MemoryKind
    text: Text
    weight: Real
    created_step: Int
    last_access: Int
    deleted: Flag = 0
    updated_at: Timestamp


class AnnotationRow(Row):
    author: Name
    kind: Literal["reason", "reaction"]
    text: Text
    created_at: Timestamp


class LabelRow(Row):
    author: Name
    question: Text
    answer: Text
    created_at: Timestamp


class MessageRow(Row):
    id: Int
    step: Int
    speaker: Name
    speaker_kind: domain.ParticipantKind
    text: Text
    interpretation: Text | None = None
    turn_type: Literal["open", "allocated"] | None = None
    addressee: Short | None = None
    thought_id: Int | None = None
    system: Literal[1, 2] | None = None
    interruption: Flag = 0
    origin: Short | None = None
    posted_at: Timestamp
    forced: Flag = 0
    #: A copy of ``thoughts[…]`` for readers; the importer reads ``thoughts``.
    thought: JsonObject | None = None
    annotations: list[AnnotationRow] = []
    labels: list[LabelRow] = []


class EvaluationRow(Row):
    step: Int
    rating: Rating5
    distribution: dict[str, Real]
    expected: Real
    silence_factor: Real
    score: Real
    method: domain.ScoreMethod
    retained: Flag
    reasons_for: list[Text]
    reasons_against: list[Text]
    heuristics: dict[str, Real] | None = None
    evaluated_at: Timestamp
    samples: Int | None = None


class ThoughtRow(Row):
    id: Int
    agent: Name
    text: Text
    system: Literal[1, 2]
    stimuli: list[Stimulus]
    saliency: Real | None = None
    score: Real | None = None
    rating: Rating5 | None = None
    distribution: dict[str, Real] | None = None
    reasons_for: list[Text] | None = None
    reasons_against: list[Text] | None = None
    heuristics: dict[str, Real] | None = None
    method: domain.ScoreMethod | None = None
    created_step: Int
    evaluated_step: Int | None = None
    expressed_in: Int | None = None
    deleted: Flag = 0
    origin: Short | None = None
    created_at: Timestamp
    samples: Int | None = None
    evaluations: list[EvaluationRow] = []


class DecisionRow(Row):
    step: Int
    trigger: domain.TriggerKind
    agent: Name
    action: Literal["speak", "silent"]
    thought_id: Int | None = None
    score: Real | None = None
    threshold: Real | None = None
    turn_type: Literal["open", "allocated-self", "allocated-other"] | None = None
    reason: Text
    decided_at: Timestamp
    policy: domain.DecisionPolicy = "inner-thoughts"
    probability: Unit | None = None
    #: Absent in exports made before it was kept: the importer derives it as migration 10 does.
    best_score: Real | None = None


class PredictionRow(Row):
    message_id: Int
    step: Int
    predicted: Short
    chosen: Short | None = None
    rule: Text = ""
    probabilities: dict[str, Real]
    method: domain.ScoreMethod
    origin: Short | None = None
    predicted_at: Timestamp


class HiddenStateRow(Row):
    message_id: Int
    participant: Name
    turn: Int
    step: Int
    inner_thoughts: Text = ""
    satisfaction: Unit
    satisfaction_explanation: Text = ""
    satisfaction_missing: Flag = 0
    clarity: Unit
    clarity_explanation: Text = ""
    emotion: Short = ""
    intent: Short = ""
    emotion_source: FieldSource = "model"
    intent_source: FieldSource = "model"
    format: StateFormat
    origin: Short = ""
    recorded_at: Timestamp


class StormDialogueRow(Row):
    experiment_id: Id | None = None
    user_name: Name
    profile_id: Short
    category: Short
    task: Short
    difficulty: Int
    uncertainty: Int
    profile_access: Flag
    assistant: Short
    assistant_model: Short
    user_model: Short


class StormJudgementRow(Row):
    judge: Name
    pair: Int
    clarity_change: Change
    satisfaction_change: Change
    explanation: Text = ""
    created_at: Timestamp


class RatingRow(Row):
    rater: Name
    instrument: Literal["conversation", "participant"]
    metric: Name
    value: Rating7
    #: Never imported (assignments belong to the database they were planned in).
    assignment_id: Int | None = None
    created_at: Timestamp
    updated_at: Timestamp


class JudgeScoreRow(Row):
    rater: Name
    metric: Name
    score: Annotated[float, Field(ge=1, le=7, allow_inf_nan=False)]
    rating: Rating7
    reason: Text = ""
    method: Short
    model: Short
    created_at: Timestamp


class TurnMarkRow(Row):
    message_id: Int
    rater: Name
    comment: Text = ""
    created_at: Timestamp


class PreferenceRow(Row):
    rater: Name
    first_id: Id
    second_id: Id
    chosen_id: Id
    #: The session of the two that is not this record's (for readers; the importer recomputes it).
    other_id: Id | None = None
    reason: Text = ""
    #: Never imported (assignments belong to the database they were planned in).
    assignment_id: Int | None = None
    created_at: Timestamp


class RetrospectiveRow(Row):
    """A person's review of one message after the conversation: what, whether, why, when."""

    author: Name
    message_id: Int
    thinking: Text = ""
    wanted: Literal["yes", "no", "unsure"] | None = None
    why: Text = ""
    timing: Literal["immediately", "pause", "after", "never"] | None = None
    after_message_id: Int | None = None
    updated_at: Timestamp


class StudyStep(Row):
    """The step of a user study plan the conversation was run for. For readers: never imported
    (plans stay in the database they ran in)."""

    plan_id: Short
    position: Int
    condition: Short
    persona: Short
    topic: Text


class EventRow(Row):
    seq: Int
    kind: Short
    step: Int
    at: Timestamp
    #: The event as the recorder wrote it; checked against ``playground.events`` as replay reads it.
    data: JsonObject


class ExportRecord(Row):
    """One line of a JSON Lines export: one conversation with everything about it."""

    format: Short
    session: SessionRow
    experiment: ExperimentRow | None = None
    study: StudyStep | None = None
    participants: list[ParticipantRow]
    memories: list[MemoryRow] = []
    messages: list[MessageRow]
    thoughts: list[ThoughtRow] = []
    decisions: list[DecisionRow] = []
    predictions: list[PredictionRow] = []
    hidden_states: list[HiddenStateRow] = []
    storm_dialogues: list[StormDialogueRow] = []
    storm_judgements: list[StormJudgementRow] = []
    ratings: list[RatingRow] = []
    judge_scores: list[JudgeScoreRow] = []
    turn_marks: list[TurnMarkRow] = []
    preferences: list[PreferenceRow] = []
    retrospective: list[RetrospectiveRow] = []
    events: list[EventRow] = []


#: The database table behind each list of a record (and the top-level rows), for the reference
#: and for the test that every column of the schema has its field.
TABLE_MODELS: dict[str, type[Row]] = {
    "sessions": SessionRow,
    "experiments": ExperimentRow,
    "participants": ParticipantRow,
    "memories": MemoryRow,
    "messages": MessageRow,
    "annotations": AnnotationRow,
    "labels": LabelRow,
    "thoughts": ThoughtRow,
    "evaluations": EvaluationRow,
    "decisions": DecisionRow,
    "predictions": PredictionRow,
    "hidden_states": HiddenStateRow,
    "storm_dialogues": StormDialogueRow,
    "storm_judgements": StormJudgementRow,
    "ratings": RatingRow,
    "judge_scores": JudgeScoreRow,
    "turn_marks": TurnMarkRow,
    "preferences": PreferenceRow,
    "retrospective": RetrospectiveRow,
    "events": EventRow,
}
#: Keys of a row that are not columns of its table: nested rows and copies for readers.
NOT_COLUMNS: dict[str, frozenset[str]] = {
    "messages": frozenset({"thought", "annotations", "labels"}),
    "thoughts": frozenset({"evaluations"}),
    "preferences": frozenset({"other_id"}),
}
