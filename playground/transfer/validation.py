"""Checking one parsed line of an export against the model, its internal references and its
event log, with the first problem said in one line that names its field.

:func:`validate_record` is what the importer (and the test of the app's own exports) calls on
what :func:`playground.transfer.record_text.loads` returned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from playground import events
from playground.transfer.model import (
    ID_PATTERN,
    INT64_MAX,
    INT64_MIN,
    STIMULUS_PATTERN,
    ExportRecord,
)
from playground.transfer.record_text import RecordError

_PATTERN_MEANING = {
    ID_PATTERN: "an id: letters, digits, '.', '_' or '-', at most 64 characters",
    STIMULUS_PATTERN: "a stimulus such as 'memory:3', 'message:2' or 'thought:7'",
}


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
    _unique(
        (
            (f"retrospective[{i}]", (r.author, r.message_id))
            for i, r in enumerate(rec.retrospective)
        ),
        "author and message_id",
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
    for i, review in enumerate(rec.retrospective):
        person(f"retrospective[{i}].author", review.author)
        points(f"retrospective[{i}].message_id", review.message_id, messages, "message")
        points(f"retrospective[{i}].after_message_id", review.after_message_id, messages, "message")
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
