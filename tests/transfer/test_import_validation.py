"""`playground import` validates every record before writing, and importing again is idempotent.

Each finding of the fault trials is a case here: a value of the wrong type that used to be
imported and then broke `show`, values SQLite cannot store, references to rows the file does not
hold, hostile JSON (3,000 levels deep, a lone surrogate), and a second import that copied every
conversation again. The commands run as real `python -m playground` processes on real SQLite
files; a refused file must leave the database byte for byte as it was.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from playground.cli import main as cli
from playground.storage import open_database
from playground.transfer import export, reference
from playground.transfer import model as export_model
from playground.transfer.validation import validate_record
from tests.support.cli import run_process
from tests.support.exports import cached_source

REPO = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
DOC = REPO / "docs" / "export-format.md"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> dict[str, Any]:
    return cached_source(tmp_path_factory, minilm)


playground = run_process


def lines_of(source: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in source["file"].read_text(encoding="utf-8").splitlines()]


def write(path: Path, *records: dict[str, Any] | str) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")
    return path


def fresh_db(path: Path, like: Path | None = None) -> Path:
    """A session database closed cleanly (empty, or a copy of ``like``), ready to be compared."""
    if like is not None:
        with sqlite3.connect(like) as src, sqlite3.connect(path) as dst:
            src.backup(dst)
    open_database(path).close()
    return path


def fingerprint(path: Path) -> str:
    """The database's bytes, its write-ahead log's too."""
    digest = hashlib.sha256(path.read_bytes())
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        digest.update(wal.read_bytes())
    return digest.hexdigest()


def session_ids(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY id")]


def in_process(*argv: str) -> subprocess.CompletedProcess[str]:
    """``playground *argv`` in this process: quicker, for the cases that are not about the
    process itself (an exception other than PlaygroundError still fails the test)."""
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def refused(file: Path, db: Path, *flags: str, real: bool = True) -> str:
    """Import ``file`` into ``db`` (``real``: in a ``python -m playground`` process), which must
    refuse it in one ``error:`` line and leave the database byte for byte unchanged. Returns the
    line without ``error: FILE: ``."""
    before = fingerprint(db)
    done = (playground if real else in_process)("import", str(file), "--db", str(db), *flags)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {file}: "), lines[0]
    assert fingerprint(db) == before
    return lines[0].removeprefix(f"error: {file}: ")


# -- every record is validated -----------------------------------------------------------------


def _expressed(rec: dict[str, Any]) -> int:
    return next(i for i, t in enumerate(rec["thoughts"]) if t["expressed_in"] is not None)


def _said(rec: dict[str, Any]) -> int:
    return next(i for i, m in enumerate(rec["messages"]) if m["thought_id"] is not None)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], str]:
    def change(rec: dict[str, Any]) -> str:
        *parents, last = path.split(".")
        target: Any = rec
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value
        return json.dumps(rec)

    return change


def _score_as_text(rec: dict[str, Any]) -> str:
    rec["thoughts"][_expressed(rec)]["score"] = "high"
    return json.dumps(rec)


def _dangling_thought(rec: dict[str, Any]) -> str:
    rec["messages"][_said(rec)]["thought_id"] = 9999
    return json.dumps(rec)


def _deep(rec: dict[str, Any]) -> str:
    text = json.dumps(rec)
    mark = '"data": {'
    at = text.index(mark) + len(mark)
    return text[:at] + '"deep": ' + "[" * 3000 + "]" * 3000 + ", " + text[at:]


def _surrogate(rec: dict[str, Any]) -> str:
    rec["messages"][1]["text"] = "broken \ud800 text"
    return json.dumps(rec)  # ensure_ascii: written as the escape \ud800, as a hostile file has it


def _nan(rec: dict[str, Any]) -> str:
    rec["hidden_states"][0]["satisfaction"] = float("nan")
    return json.dumps(rec)


def _unknown_author(rec: dict[str, Any]) -> str:
    note = next(m for m in rec["messages"] if m["annotations"])
    note["annotations"][0]["author"] = "Nobody"
    return json.dumps(rec)


def _event_kind(rec: dict[str, Any]) -> str:
    rec["events"][0]["kind"] = rec["events"][0]["data"]["kind"] = "party"
    return json.dumps(rec)


def _too_long(rec: dict[str, Any]) -> str:
    rec["messages"][0]["text"] = "x" * (export_model.LONG_TEXT + 1)
    return json.dumps(rec)


#: The fault trials' findings, each run as a real process; the other cases cover the model.
FINDINGS = {
    "calls_as_text",
    "thought_score_as_text",
    "seed_too_large",
    "object_for_an_id",
    "deep_nesting",
    "lone_surrogate",
    "dangling_thought",
}
# (case, how the first record of the file is changed, the error after "FILE: ")
CASES: list[tuple[str, Callable[[dict[str, Any]], str], Callable[[dict[str, Any]], str]]] = [
    (
        "calls_as_text",
        _set("session.calls", "ten"),
        lambda r: "line 1: session.calls: expected an integer, found 'ten'",
    ),
    (
        "thought_score_as_text",
        _score_as_text,
        lambda r: f"line 1: thoughts[{_expressed(r)}].score: expected a number, found 'high'",
    ),
    (
        "seed_too_large",
        _set("session.seed", 2**70),
        lambda r: (
            "line 1: session.seed: too large for the database (at most 9223372036854775807),"
            " found 1180591620717411303424"
        ),
    ),
    (
        "object_for_an_id",
        _set("session.parent_id", {"id": "20260101-000000-0000"}),
        lambda r: "line 1: session.parent_id: expected a string, found an object",
    ),
    ("deep_nesting", _deep, lambda r: "line 1: nested deeper than 64 levels"),
    (
        "lone_surrogate",
        _surrogate,
        lambda r: (
            "line 1: messages[1].text: holds a lone UTF-16 surrogate (such as \\ud800),"
            " which is not text"
        ),
    ),
    (
        "dangling_thought",
        _dangling_thought,
        lambda r: f"line 1: messages[{_said(r)}].thought_id: 9999 names no thought in this record",
    ),
    (
        "dangling_decision",
        _set("decisions.0.thought_id", 9999),
        lambda r: "line 1: decisions[0].thought_id: 9999 names no thought in this record",
    ),
    (
        "dangling_turn_mark",
        _set("turn_marks.0.message_id", 77),
        lambda r: "line 1: turn_marks[0].message_id: 77 names no message in this record",
    ),
    (
        "dangling_expressed_in",
        lambda r: _set(f"thoughts.{_expressed(r)}.expressed_in", 77)(r),
        lambda r: (
            f"line 1: thoughts[{_expressed(r)}].expressed_in: 77 names no message in this record"
        ),
    ),
    (
        "unknown_author",
        _unknown_author,
        lambda r: (
            "line 1: messages[{}].annotations[0].author: 'Nobody' is not one of the"
            " participants".format(next(i for i, m in enumerate(r["messages"]) if m["annotations"]))
        ),
    ),
    (
        "unknown_kind",
        _set("participants.0.kind", "robot"),
        lambda r: (
            "line 1: participants[0].kind: expected 'ai', 'human' or 'simulated', found 'robot'"
        ),
    ),
    (
        "bad_timestamp",
        _set("messages.0.posted_at", "yesterday"),
        lambda r: (
            "line 1: messages[0].posted_at: expected an ISO 8601 timestamp such as"
            " 2026-01-02T03:04:05.678+00:00, found 'yesterday'"
        ),
    ),
    (
        "rating_out_of_range",
        _set("ratings.0.value", 9),
        lambda r: "line 1: ratings[0].value: must be at most 7, found 9",
    ),
    (
        "bad_session_id",
        _set("session.id", "../../etc"),
        lambda r: (
            "line 1: session.id: expected an id: letters, digits, '.', '_' or '-', at most"
            " 64 characters, found '../../etc'"
        ),
    ),
    (
        "not_a_number",
        _nan,
        lambda r: "line 1: not JSON (NaN is not a JSON number (only finite numbers are allowed))",
    ),
    (
        "event_data",
        _set("events.1.data.step", "soon"),
        lambda r: "line 1: events[1].data.step: expected an integer, found 'soon'",
    ),
    (
        "unknown_event",
        _event_kind,
        lambda r: "line 1: events[0].data.kind: unknown event kind, found 'party'",
    ),
    (
        "text_too_long",
        _too_long,
        lambda r: f"line 1: messages[0].text: longer than 1000000 characters, found '{'x' * 60}…'",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_bad_value_is_refused_with_its_line_and_field_and_nothing_is_written(
    source, tmp_path, case
):
    name, change, expected = case
    rec = lines_of(source)[0]
    file = write(tmp_path / "bad.jsonl", change(copy.deepcopy(rec)))
    db = fresh_db(tmp_path / "target.db")
    assert refused(file, db, real=name in FINDINGS) == expected(rec) + "; nothing was imported"
    assert session_ids(db) == []


def test_the_conversations_before_a_bad_line_are_kept_and_the_bad_one_leaves_no_row(
    source, tmp_path
):
    a, b = lines_of(source)
    b["session"]["calls"] = "ten"
    file = write(tmp_path / "two.jsonl", a, b)
    db = fresh_db(tmp_path / "target.db")
    done = playground("import", str(file), "--db", str(db))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "[1/2] conversations",  # the progress, then the line at fault
        f"error: {file}: line 2: session.calls: expected an integer, found 'ten';"
        " the 1 conversation before it was imported and kept",
    ]
    assert session_ids(db) == [source["a"]]
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT COUNT(*) FROM events WHERE session_id = ?", [source["b"]]
        ).fetchone() == (0,)


# -- importing again ------------------------------------------------------------------------------


def test_importing_the_same_file_twice_imports_it_once(source, tmp_path):
    db = fresh_db(tmp_path / "target.db")
    first = playground("import", str(source["file"]), "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1] == "2 imported, 0 already in the database"
    before = fingerprint(db)
    again = playground("import", str(source["file"]), "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert again.stderr == "[1/2] conversations\n[2/2] conversations\n"  # the progress only
    assert again.stdout.splitlines() == [
        f"skipped {source['a']}: already in the database",
        f"skipped {source['b']}: already in the database",
        "0 imported, 2 already in the database",
    ]
    assert session_ids(db) == sorted([source["a"], source["b"]])
    assert fingerprint(db) == before
    shown = playground("show", source["a"], "--db", str(db))
    assert shown.returncode == 0
    assert "Traceback" not in shown.stderr


def test_fixing_a_bad_line_and_importing_again_adds_only_that_conversation(source, tmp_path):
    a, b = lines_of(source)
    broken = copy.deepcopy(b)
    broken["messages"][1]["text"] = 42
    file = write(tmp_path / "two.jsonl", a, broken)
    db = fresh_db(tmp_path / "target.db")
    done = playground("import", str(file), "--db", str(db))
    assert done.returncode == 1
    assert "line 2: messages[1].text: expected a string, found 42" in done.stderr
    write(file, a, b)
    done = playground("import", str(file), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"skipped {source['a']}: already in the database",
        f"imported {source['b']} as {source['b']}",
        "1 imported, 1 already in the database",
    ]
    assert session_ids(db) == sorted([source["a"], source["b"]])


def test_a_session_recorded_here_is_recognised_in_its_own_export(source, tmp_path):
    db = fresh_db(tmp_path / "copy.db", like=source["db"])
    before = fingerprint(db)
    done = playground("import", str(source["file"]), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 imported, 2 already in the database"
    assert session_ids(db) == sorted([source["a"], source["b"]])
    assert fingerprint(db) == before


def test_different_content_under_a_taken_id_is_refused_and_imported_as_new_on_request(
    source, tmp_path
):
    a, _ = lines_of(source)
    db = fresh_db(tmp_path / "target.db")
    assert (
        playground("import", str(write(tmp_path / "a.jsonl", a)), "--db", str(db)).returncode == 0
    )
    edited = copy.deepcopy(a)
    edited["ratings"][0]["value"] = 1 + edited["ratings"][0]["value"] % 7
    edited["session"]["end_reason"] = "edited by hand"
    file = write(tmp_path / "edited.jsonl", edited)
    assert refused(file, db) == (
        f"line 1: session {source['a']}: a different conversation with this id is already in"
        " the database (it differs in: session, ratings); to import this one as a copy under a"
        " new id, add --as-new; nothing was imported"
    )
    done = playground("import", str(file), "--db", str(db), "--as-new")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    new = first.split()[3]
    assert first == f"imported {source['a']} as {new} (renamed: the id was taken)"
    assert new != source["a"]
    assert new[:15] == source["a"][:15]
    again = playground("import", str(file), "--db", str(db), "--as-new")
    assert again.returncode == 0, again.stderr
    assert (
        again.stdout.splitlines()[0] == f"skipped {source['a']}: already in the database as {new}"
    )
    assert session_ids(db) == sorted([source["a"], new])
    for sid in (source["a"], new):
        shown = playground("show", sid, "--db", str(db))
        assert shown.returncode == 0
        assert "Traceback" not in shown.stderr


# -- the model is the format ----------------------------------------------------------------------


def test_every_column_of_the_schema_has_its_field_in_the_model(tmp_path):
    db = open_database(tmp_path / "x.db")
    try:
        for table, model in export_model.TABLE_MODELS.items():
            columns = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            columns -= export.IMPLIED_COLUMNS.get(table, frozenset({"session_id"}))
            if table in export.SURROGATE_ID_TABLES:
                columns.discard("id")
            fields = set(model.model_fields) - export_model.NOT_COLUMNS.get(table, frozenset())
            assert fields == columns, table
    finally:
        db.close()


def test_the_documented_field_reference_is_the_model():
    text = DOC.read_text(encoding="utf-8")
    start = text.index(reference.BEGIN_MARK)
    end = text.index(reference.END_MARK) + len(reference.END_MARK)
    assert text[start:end] == reference.reference_markdown(), (
        "regenerate it: .venv/bin/python scripts/export_reference.py --write docs/export-format.md"
    )


def test_the_apps_own_exports_pass_the_model(source):
    for rec in lines_of(source):
        validate_record(rec)
