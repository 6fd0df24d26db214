"""The export format (``docs/export-format.md``) as one typed model: what `playground import` accepts.

An export file comes from anywhere: another version of the app, a script, a hand edit, a
damaged disk. Everything in a line is checked here before the importer writes a byte of it, so
a value the database would store but the app could not read back (a count given as text, a
number too large for SQLite, a message pointing at a thought the file does not hold) is refused
with its line and field named, instead of breaking ``show`` or replay later.

The model is the format's single source: the field reference in ``docs/export-format.md`` is
generated from it (``python -m playground.transfer.model --write docs/export-format.md``), and a
test checks that every column of the database has its field here.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
)
from pydantic_core import ErrorDetails

from playground import domain, errors, events
from playground.domain.simulated_user import Change, FieldSource, StateFormat

#: SQLite stores integers as signed 64-bit numbers; a larger one cannot be written.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: How deeply objects and lists may nest in a line. The app's own exports reach about 10 levels;
#: the limit keeps a hostile line from exhausting the parser's stack.
MAX_DEPTH = 64
#: Characters in a name, a kind, a model name, a timestamp...
SHORT_TEXT = 1_000
#: Characters in a message, a thought, a reason, an explanation.
LONG_TEXT = 1_000_000
ID_PATTERN = r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$"
STIMULUS_PATTERN = r"^(memory|message|thought):[0-9]{1,18}$"
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?", re.ASCII
)
_PATTERN_MEANING = {
    ID_PATTERN: "an id: letters, digits, '.', '_' or '-', at most 64 characters",
    STIMULUS_PATTERN: "a stimulus such as 'memory:3', 'message:2' or 'thought:7'",
}


class RecordError(errors.PlaygroundError):
    """A line of an export breaks the format.

    Attributes:
        field: where, dotted with list positions (``messages[3].thought_id``); ``""`` for the line.
        reason: what is wrong there.
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = _one_line(field)
        self.reason = _one_line(reason)
        super().__init__(f"{self.field}: {self.reason}" if field else self.reason)


#: Characters that would break the one line an error is said in.
_LINE_BREAKS = re.compile("[\n\r\t\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _one_line(text: str) -> str:
    """``text`` with its line breaks and tabs written as ``\\u000a``: a value quoted from a
    file stays on the error's line."""
    return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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
    policy: domain.Policy = "inner-thoughts"
    profile: JsonObject | None = None


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
    "events": EventRow,
}
#: Keys of a row that are not columns of its table: nested rows and copies for readers.
NOT_COLUMNS: dict[str, frozenset[str]] = {
    "messages": frozenset({"thought", "annotations", "labels"}),
    "thoughts": frozenset({"evaluations"}),
    "preferences": frozenset({"other_id"}),
}


# -- reading a line ---------------------------------------------------------------------------------

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deeply objects and lists nest in JSON ``text``, counted without parsing it (strings
    are skipped); stops counting once past ``limit``, so a hostile line costs one scan."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number (at most about 1.8e308)")
    return value


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number (only finite numbers are allowed)")


def loads(text: str) -> Any:
    """Parse JSON text with the format's limits: at most :data:`MAX_DEPTH` levels (checked
    before parsing, so no line can exhaust the stack), finite numbers only, and no lone UTF-16
    surrogate (``\\ud800``: no text encoding can store it).

    Raises:
        RecordError: the text breaks a limit or is not JSON (its ``field`` names where, when known).
    """
    if nesting_depth(text) > MAX_DEPTH:
        raise RecordError("", f"nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_constant)
    except ValueError as exc:
        raise RecordError("", f"not JSON ({exc})") from None
    if _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(value, "")
        if where is not None:
            raise RecordError(
                where, "holds a lone UTF-16 surrogate (such as \\ud800), which is not text"
            )
    return value


def _lone_surrogate(value: Any, at: str) -> str | None:
    """The path of the first string (or key) in ``value`` that cannot be encoded as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return at or "(the line)"
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{at}[{i}]")
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{at}.{key}" if at else str(key)
            if _lone_surrogate(key, path) is not None:
                return path
            found = _lone_surrogate(item, path)
            if found is not None:
                return found
    return None


# -- validating a record ----------------------------------------------------------------------------


def validate_record(data: Any) -> ExportRecord:
    """Check one parsed line against the model, its internal references and its event log.

    Raises:
        RecordError: the first problem, with its field (``session.calls``) and what was found.
    """
    try:
        record = ExportRecord.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc.errors(), "") from None
    _check_references(record)
    _check_events(record)
    return record


def _path(loc: Iterable[int | str], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _shown(value: Any) -> str:
    """A value as the user would recognise it from the file, kept short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"'{value[:60]}…'" if len(value) > 60 else f"'{value}'"
    text = str(value)
    return f"{text[:30]}… ({len(text)} digits)" if len(text) > 40 else text


_EXPECTED = {
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number",
    "string_type": "expected a string",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "list_type": "expected a list",
    "string_too_short": "must not be empty",
}


def _problem(err: ErrorDetails) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}"
    if kind == "less_than_equal" and ctx.get("le") == INT64_MAX:
        return f"too large for the database (at most {INT64_MAX})"
    if kind == "greater_than_equal" and ctx.get("ge") == INT64_MIN:
        return f"too small for the database (at least {INT64_MIN})"
    if kind in ("less_than_equal", "greater_than_equal"):
        bound = ctx.get("le", ctx.get("ge"))
        return f"must be {'at most' if kind == 'less_than_equal' else 'at least'} {bound}"
    if kind == "string_too_long":
        return f"longer than {ctx.get('max_length')} characters"
    if kind == "string_pattern_mismatch":
        return "expected " + _PATTERN_MEANING.get(str(ctx.get("pattern")), "another form")
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    return str(err["msg"])


def _first_error(found: list[ErrorDetails], prefix: str, *, tagged: bool = False) -> RecordError:
    """The most general of pydantic's errors (the shortest path: a missing list before a bad
    value inside another), as one line; how many more there are is said after it."""
    err = min(found, key=lambda e: len(e["loc"]))
    loc = list(err["loc"])[1:] if tagged and err["loc"] else list(err["loc"])
    more = len(found) - 1
    tail = f" (and {more} more problem{'s' if more != 1 else ''} in this line)" if more else ""
    if err["type"] == "union_tag_invalid":
        tag = (err.get("ctx") or {}).get("tag")
        return RecordError(
            _path([*loc, "kind"], prefix), f"unknown event kind, found {_shown(tag)}"
        )
    if err["type"] in ("missing", "union_tag_not_found"):
        key = "kind" if err["type"] == "union_tag_not_found" else str(loc.pop())
        return RecordError(_path(loc, prefix), f"missing key {key!r}{tail}")
    return RecordError(_path(loc, prefix), f"{_problem(err)}, found {_shown(err['input'])}{tail}")


def _unique(rows: Iterable[tuple[str, Any]], what: str) -> None:
    seen: dict[Any, str] = {}
    for path, key in rows:
        if key in seen:
            raise RecordError(path, f"{what} {_key_text(key)} is also {seen[key]}'s")
        seen[key] = path


def _key_text(key: Any) -> str:
    return " and ".join(_shown(k) for k in key) if isinstance(key, tuple) else _shown(key)


def _check_references(rec: ExportRecord) -> None:
    """Ids and names that point inside the record must find their row: the database would
    store a message whose thought is not in the file, and every reader would then miss it."""
    _unique(((f"participants[{i}].name", p.name) for i, p in enumerate(rec.participants)), "name")
    _unique(((f"memories[{i}].id", m.id) for i, m in enumerate(rec.memories)), "id")
    _unique(((f"messages[{i}].id", m.id) for i, m in enumerate(rec.messages)), "id")
    _unique(((f"thoughts[{i}].id", t.id) for i, t in enumerate(rec.thoughts)), "id")
    _unique(((f"events[{i}].seq", e.seq) for i, e in enumerate(rec.events)), "seq")
    _unique(
        ((f"predictions[{i}]", (p.message_id, p.step)) for i, p in enumerate(rec.predictions)),
        "message_id and step",
    )
    _unique(
        ((f"hidden_states[{i}].message_id", h.message_id) for i, h in enumerate(rec.hidden_states)),
        "message_id",
    )
    _unique(
        ((f"storm_judgements[{i}]", (j.judge, j.pair)) for i, j in enumerate(rec.storm_judgements)),
        "judge and pair",
    )
    _unique(
        ((f"ratings[{i}]", (r.rater, r.instrument, r.metric)) for i, r in enumerate(rec.ratings)),
        "rater, instrument and metric",
    )
    _unique(
        ((f"judge_scores[{i}]", (s.rater, s.metric)) for i, s in enumerate(rec.judge_scores)),
        "rater and metric",
    )
    _unique(
        ((f"turn_marks[{i}]", (t.message_id, t.rater)) for i, t in enumerate(rec.turn_marks)),
        "message_id and rater",
    )
    if len(rec.storm_dialogues) > 1:
        raise RecordError("storm_dialogues[1]", "a session has at most one STORM dialogue row")

    names = {p.name for p in rec.participants}
    messages = {m.id for m in rec.messages}
    thoughts = {t.id for t in rec.thoughts}

    def person(path: str, name: str) -> None:
        if name not in names:
            raise RecordError(path, f"{_shown(name)} is not one of the participants")

    def points(path: str, value: int | None, ids: set[int], what: str) -> None:
        if value is not None and value not in ids:
            raise RecordError(path, f"{value} names no {what} in this record")

    for i, mem in enumerate(rec.memories):
        person(f"memories[{i}].agent", mem.agent)
    for i, msg in enumerate(rec.messages):
        person(f"messages[{i}].speaker", msg.speaker)
        points(f"messages[{i}].thought_id", msg.thought_id, thoughts, "thought")
        for j, note in enumerate(msg.annotations):
            person(f"messages[{i}].annotations[{j}].author", note.author)
        for j, label in enumerate(msg.labels):
            person(f"messages[{i}].labels[{j}].author", label.author)
    for i, th in enumerate(rec.thoughts):
        person(f"thoughts[{i}].agent", th.agent)
        points(f"thoughts[{i}].expressed_in", th.expressed_in, messages, "message")
    for i, dec in enumerate(rec.decisions):
        person(f"decisions[{i}].agent", dec.agent)
        points(f"decisions[{i}].thought_id", dec.thought_id, thoughts, "thought")
    for i, pred in enumerate(rec.predictions):
        points(f"predictions[{i}].message_id", pred.message_id, messages, "message")
    for i, state in enumerate(rec.hidden_states):
        person(f"hidden_states[{i}].participant", state.participant)
        points(f"hidden_states[{i}].message_id", state.message_id, messages, "message")
    for i, mark in enumerate(rec.turn_marks):
        points(f"turn_marks[{i}].message_id", mark.message_id, messages, "message")
    for i, dialogue in enumerate(rec.storm_dialogues):
        if dialogue.experiment_id not in (None, rec.session.experiment_id):
            raise RecordError(
                f"storm_dialogues[{i}].experiment_id",
                f"{_shown(dialogue.experiment_id)} is not the session's experiment_id",
            )
    sid = rec.session.id
    for i, pref in enumerate(rec.preferences):
        path = f"preferences[{i}]"
        if pref.first_id == pref.second_id:
            raise RecordError(path, "first_id and second_id are the same session")
        if pref.chosen_id not in (pref.first_id, pref.second_id):
            raise RecordError(f"{path}.chosen_id", "is neither first_id nor second_id")
        if sid not in (pref.first_id, pref.second_id):
            raise RecordError(path, f"does not involve this session ({sid})")


def _check_events(rec: ExportRecord) -> None:
    """Each event must parse as replay parses it (``playground.events``), under its row's kind."""
    for i, row in enumerate(rec.events):
        path = f"events[{i}].data"
        if row.data.get("kind") != row.kind:
            raise RecordError(f"{path}.kind", f"{_shown(row.data.get('kind'))} is not {row.kind!r}")
        try:
            events.EVENT_ADAPTER.validate_json(json.dumps(row.data, ensure_ascii=False))
        except ValidationError as exc:
            raise _first_error(exc.errors(), path, tagged=True) from None


# -- the reference in docs/export-format.md ---------------------------------------------------------

BEGIN_MARK = "<!-- field reference: generated from playground/transfer/model.py; do not edit -->"
END_MARK = "<!-- end of the field reference -->"


def _type_text(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        table = next((t for t, m in TABLE_MODELS.items() if m.__name__ == name), name)
        return f"`{table}` row"
    if "anyOf" in schema:
        parts = [s for s in schema["anyOf"] if s.get("type") != "null"]
        text = " or ".join(_type_text(s, defs) for s in parts)
        return text + " or null" if len(parts) < len(schema["anyOf"]) else text
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type")
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo, hi) == (INT64_MIN, INT64_MAX):
            return "integer (64-bit)"
        if (lo, hi) == (0, INT64_MAX):
            return "integer ≥ 0 (64-bit)"
        return f"integer {lo}–{hi}"
    if kind == "number":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is None and hi is None:
            return "finite number"
        return f"number ≥ {lo}" if hi is None else f"number {lo}–{hi}"
    if kind == "string":
        if schema.get("format") == "date-time":
            return "timestamp"
        if schema.get("pattern") == ID_PATTERN:
            return "id"
        if schema.get("pattern") == STIMULUS_PATTERN:
            return "`memory:N`, `message:N` or `thought:N`"
        longest = schema.get("maxLength")
        least = "non-empty " if schema.get("minLength") else ""
        return f"{least}string" + (f" (≤ {longest:,} chars)" if longest else "")
    if kind == "array":
        item = _type_text(schema.get("items", {}), defs)
        if item.endswith(" row"):
            return f"list of {item}s"
        return "list of " + (
            "strings" + item.removeprefix("string") if item.startswith("string") else item
        )
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict) and values.get("type") in ("number", "integer"):
            return "object of numbers"
        return "object"
    return "any JSON value"


def _table(model: type[Row]) -> Iterator[str]:
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    yield "| key | type | required |"
    yield "|---|---|---|"
    for name, field in schema["properties"].items():
        if name in required:
            need = "yes"
        elif "default" in field:
            need = f"no (`{json.dumps(field['default'], ensure_ascii=False)}`)"
        else:
            need = "no"
        yield f"| `{name}` | {_type_text(field, defs)} | {need} |"


def reference_markdown() -> str:
    """The field reference of ``docs/export-format.md``, between its two marks."""
    lines = [
        BEGIN_MARK,
        "",
        "Every line is checked against these tables before anything of it is written:",
        f"- integers are SQLite's, from {INT64_MIN} to {INT64_MAX}, and numbers are finite;",
        "- an id is letters, digits, `.`, `_` or `-`, at most 64 characters;",
        "- a timestamp is ISO 8601, such as `2026-01-02T03:04:05.678+00:00`;",
        f"- objects and lists nest at most {MAX_DEPTH} levels deep;",
        "- text holds no lone UTF-16 surrogate (`\\ud800`);",
        "- a key not listed is ignored; one that is not required may be left out, and its",
        "  default is stored;",
        "- an event's `data` must read as the event of its `kind` (`playground/events.py`).",
        "",
    ]
    sections: list[tuple[str, type[Row]]] = [
        ("the record (one line)", ExportRecord),
        *((f"`{table}`", model) for table, model in TABLE_MODELS.items()),
    ]
    for title, model in sections:
        lines += [f"#### {title}", "", *_table(model), ""]
    lines.append(END_MARK)
    return "\n".join(lines)


def _write_reference(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN_MARK), text.index(END_MARK) + len(END_MARK)
    path.write_text(text[:start] + reference_markdown() + text[end:], encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Print the field reference, or write it into the document given with ``--write``."""
    parser = argparse.ArgumentParser(prog="python -m playground.transfer.model")
    parser.add_argument("--write", metavar="FILE", help="replace the reference in this file")
    args = parser.parse_args(argv)
    if args.write:
        _write_reference(Path(args.write))
    else:
        print(reference_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
