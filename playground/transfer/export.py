"""Export saved sessions (everything about them, their ratings included) to JSON Lines, JSON or CSV.

The layout is documented in ``docs/export-format.md``; ``playground.transfer.importer`` reads it back.
"""

from __future__ import annotations

import csv
import json
import os
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, TextIO

import sqlite_utils

from playground import errors
from playground.storage import SessionReader, study_rows
from playground.storage.database import as_read, dead_sessions, snapshot

FORMAT_NAME = "thought-playground"
FORMAT_VERSION = 1
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"

ExportFormat = Literal["jsonl", "json", "csv"]

JSON_COLUMNS: dict[str, frozenset[str]] = {
    "sessions": frozenset({"config"}),
    "experiments": frozenset({"config"}),
    "participants": frozenset({"persona", "proactivity", "profile"}),
    "thoughts": frozenset(
        {"stimuli", "distribution", "reasons_for", "reasons_against", "heuristics"}
    ),
    "evaluations": frozenset({"distribution", "reasons_for", "reasons_against", "heuristics"}),
    "events": frozenset({"data"}),
    "predictions": frozenset({"probabilities"}),
}
# Row ids of these tables are counters of one database: meaningless elsewhere, so never exported.
SURROGATE_ID_TABLES = frozenset(
    {"evaluations", "decisions", "annotations", "labels", "ratings", "turn_marks", "preferences"}
)
# Columns implied by where a row sits in the record (its session, its thought, its message).
IMPLIED_COLUMNS: dict[str, frozenset[str]] = {
    "evaluations": frozenset({"session_id", "thought_id"}),
    "annotations": frozenset({"session_id", "message_id"}),
    "labels": frozenset({"session_id", "message_id"}),
    "preferences": frozenset(),
}

CSV_COLUMNS = (
    "session_id",
    "condition",
    "engine",
    "model",
    "seed",
    "experiment_id",
    "rater",
    "instrument",
    "metric",
    "value",
    "assignment_id",
    "created_at",
)


def _decode(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # a damaged JSON cell is exported as the text it holds, not dropped


def _rows(
    db: sqlite_utils.Database, table: str, where: str, params: list[Any], order: str
) -> list[dict[str, Any]]:
    cur = db.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY {order}", params)
    names = [d[0] for d in cur.description]
    drop = IMPLIED_COLUMNS.get(table, frozenset({"session_id"}))
    if table in SURROGATE_ID_TABLES:
        drop = drop | {"id"}
    json_cols = JSON_COLUMNS.get(table, frozenset())
    out = []
    for values in cur.fetchall():
        row = {}
        for name, value in zip(names, values, strict=True):
            if name not in drop:
                row[name] = _decode(value) if name in json_cols else value
        out.append(row)
    return out


def resolve_ids(db: sqlite_utils.Database, ids: Iterable[str]) -> list[str]:
    """Full session ids for ids or unique prefixes, in the order given, without repeats.

    Raises:
        SessionNotFound: an id matches no session, or a prefix matches several.
    """
    reader = SessionReader(db)
    resolved: list[str] = []
    for raw in ids:
        sid = reader.resolve(raw)
        if sid not in resolved:
            resolved.append(sid)
    return resolved


def experiment_sessions(db: sqlite_utils.Database, experiment: str) -> list[str]:
    """The ids of an experiment's sessions (by experiment id, else by its unique name), oldest first.

    Raises:
        PlaygroundError: no such experiment, or it has no sessions.
    """
    rows = db.execute(
        "SELECT id FROM experiments WHERE id = ? UNION SELECT id FROM experiments WHERE name = ?",
        [experiment, experiment],
    ).fetchall()
    if not rows:
        raise errors.PlaygroundError(f"no experiment {experiment!r} in this database")
    if len(rows) > 1:
        raise errors.PlaygroundError(f"experiment name {experiment!r} is ambiguous; use its id")
    ids = [
        r[0]
        for r in db.execute(
            "SELECT id FROM sessions WHERE experiment_id = ? ORDER BY created_at, id", [rows[0][0]]
        ).fetchall()
    ]
    if not ids:
        raise errors.PlaygroundError(f"experiment {experiment!r} has no sessions")
    return ids


def export_record(db: sqlite_utils.Database, session_id: str) -> dict[str, Any]:
    """Everything about one session as one JSON-ready dict (layout: ``docs/export-format.md``).

    Args:
        db: an open session database.
        session_id: a full session id (see :func:`resolve_ids`).

    The session is read in one snapshot: one still being recorded is exported as it stood at
    that moment, still ``running`` (an import makes it interrupted); one whose process is gone
    is exported interrupted, as every reader shows it.

    Raises:
        SessionNotFound: no such session.
    """
    with snapshot(db):
        return _record(db, session_id)


def _record(db: sqlite_utils.Database, session_id: str) -> dict[str, Any]:
    sessions = _rows(db, "sessions", "id = ?", [session_id], "id")
    if not sessions:
        raise errors.SessionNotFound(f"no session {session_id!r} in this database")
    session = as_read(sessions[0], dead_sessions(db))
    one = [session_id]
    experiment = None
    if session.get("experiment_id") is not None:
        found = _rows(db, "experiments", "id = ?", [session["experiment_id"]], "id")
        experiment = found[0] if found else None

    thoughts = _rows(db, "thoughts", "session_id = ?", one, "id")
    evaluations = _rows(db, "evaluations", "session_id = ?", one, "id")
    # thought_id is dropped from each nested evaluation; read it back separately to group them.
    owners = db.execute(
        "SELECT thought_id FROM evaluations WHERE session_id = ? ORDER BY id", one
    ).fetchall()
    by_thought: dict[int, list[dict[str, Any]]] = {}
    for (thought_id,), ev in zip(owners, evaluations, strict=True):
        by_thought.setdefault(thought_id, []).append(ev)
    thought_by_id = {}
    for t in thoughts:
        thought_by_id[t["id"]] = dict(t)
        t["evaluations"] = by_thought.get(t["id"], [])

    messages = _rows(db, "messages", "session_id = ?", one, "id")
    notes = _grouped(db, "annotations", session_id)
    labels = _grouped(db, "labels", session_id)
    for m in messages:
        m["thought"] = thought_by_id.get(m["thought_id"]) if m["thought_id"] is not None else None
        m["annotations"] = notes.get(m["id"], [])
        m["labels"] = labels.get(m["id"], [])

    preferences = _rows(
        db, "preferences", "first_id = ? OR second_id = ?", [session_id, session_id], "id"
    )
    for p in preferences:
        p["other_id"] = p["second_id"] if p["first_id"] == session_id else p["first_id"]

    return {
        "format": FORMAT,
        "session": session,
        "experiment": experiment,
        "study": study_rows.step_of_session(db, session_id),
        "participants": _rows(db, "participants", "session_id = ?", one, "joined_at, rowid"),
        "memories": _rows(db, "memories", "session_id = ?", one, "id"),
        "messages": messages,
        "thoughts": thoughts,
        "decisions": _rows(db, "decisions", "session_id = ?", one, "id"),
        "predictions": _rows(db, "predictions", "session_id = ?", one, "message_id, step"),
        "hidden_states": _rows(db, "hidden_states", "session_id = ?", one, "message_id"),
        "storm_dialogues": _rows(db, "storm_dialogues", "session_id = ?", one, "session_id"),
        "storm_judgements": _rows(db, "storm_judgements", "session_id = ?", one, "judge, pair"),
        "ratings": _rows(db, "ratings", "session_id = ?", one, "id"),
        "judge_scores": _rows(db, "judge_scores", "session_id = ?", one, "rater, metric"),
        "turn_marks": _rows(db, "turn_marks", "session_id = ?", one, "message_id, id"),
        "preferences": preferences,
        "retrospective": _rows(db, "retrospective", "session_id = ?", one, "author, message_id"),
        "events": _rows(db, "events", "session_id = ?", one, "seq"),
    }


def _grouped(db: sqlite_utils.Database, table: str, session_id: str) -> dict[int, list[Any]]:
    rows = _rows(db, table, "session_id = ?", [session_id], "id")
    owners = db.execute(
        f"SELECT message_id FROM {table} WHERE session_id = ? ORDER BY id", [session_id]
    ).fetchall()
    grouped: dict[int, list[Any]] = {}
    for (message_id,), row in zip(owners, rows, strict=True):
        grouped.setdefault(message_id, []).append(row)
    return grouped


def export_records(db: sqlite_utils.Database, session_ids: list[str]) -> Iterator[dict[str, Any]]:
    """One record per conversation, in the order given (ids or unique prefixes).

    Raises:
        SessionNotFound: an id matches no session (raised before the first record).
    """
    for sid in resolve_ids(db, session_ids):
        yield export_record(db, sid)


def _rating_rows(db: sqlite_utils.Database, session_ids: list[str]) -> Iterator[dict[str, Any]]:
    columns = ", ".join(
        f"s.{c}" if c in {"condition", "engine", "model", "seed", "experiment_id"} else f"r.{c}"
        for c in CSV_COLUMNS
    )
    for sid in session_ids:
        cur = db.execute(
            f"SELECT {columns} FROM ratings r JOIN sessions s ON s.id = r.session_id"
            " WHERE r.session_id = ? ORDER BY r.id",
            [sid],
        )
        for values in cur.fetchall():
            yield dict(zip(CSV_COLUMNS, values, strict=True))


def _dump_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_records(
    db: sqlite_utils.Database, session_ids: list[str], out: TextIO, fmt: ExportFormat
) -> int:
    """Write an export to an open text stream. Returns conversations written (csv: rating rows).

    Raises:
        SessionNotFound: an id matches no session (nothing is written).
        PlaygroundError: unknown format.
    """
    ids = resolve_ids(db, session_ids)
    count = 0
    if fmt == "jsonl":
        for sid in ids:
            out.write(_dump_line(export_record(db, sid)) + "\n")
            count += 1
    elif fmt == "json":
        out.write("[")
        for sid in ids:
            text = json.dumps(export_record(db, sid), ensure_ascii=False, indent=2)
            out.write(("," if count else "") + "\n" + textwrap.indent(text, "  "))
            count += 1
        out.write("\n]\n")
    elif fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        for row in _rating_rows(db, ids):
            writer.writerow(row)
            count += 1
    else:
        raise errors.PlaygroundError(f"unknown export format {fmt!r} (jsonl, json or csv)")
    return count


def write_export(
    db: sqlite_utils.Database, session_ids: list[str], path: str | Path, fmt: ExportFormat
) -> int:
    """Write an export file. An existing file is replaced only once the new one is complete.

    Args:
        db: an open session database.
        session_ids: ids or unique prefixes.
        path: the file to write.
        fmt: ``jsonl`` (one conversation per line), ``json`` (one array) or ``csv`` (one row per rating).

    Returns:
        The number of conversations written (csv: rating rows).

    Raises:
        SessionNotFound: an id matches no session (no file is written).
        PlaygroundError: the file cannot be written.
    """
    path = Path(path)
    ids = resolve_ids(db, session_ids)
    partial = path.with_name(path.name + ".partial")
    try:
        with open(partial, "w", encoding="utf-8", newline="") as fh:
            count = write_records(db, ids, fh, fmt)
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise errors.PlaygroundError(f"cannot write {path}: {exc.strerror or exc}") from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return count
