"""Export, import and merge of what schema 12 added: retrospective reviews and
user study plans.

The session is a real offline simulation run by ``playground simulate``; the person who reviews
it (Pat, a human participant) is added with SQL matching the schema, and the study rows are
written with the functions the study pages use (``playground.storage.study_rows``).
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from playground.cli import main as cli
from playground.storage import open_database, study_rows
from playground.transfer import export, merge
from playground.transfer.merge_rules import PLAN_ROWS

NOW = "2026-03-04T05:06:07.890+00:00"
LATER = "2026-03-04T05:16:07.890+00:00"
PLAN = "plan-20260304-abc123"
STEPS = [
    {"position": 1, "condition": "non-stop-chatter", "persona": "Ana", "topic": "travel"},
    {"position": 2, "condition": "quiet-observer", "persona": "Ben", "topic": "hobbies"},
]


class Source(NamedTuple):
    path: Path
    session: str


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _copy(src: Path, dst: Path) -> Path:
    with sqlite3.connect(src) as s, sqlite3.connect(dst) as d:
        s.backup(d)
    s.close()
    d.close()
    return dst


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _rows(path: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(r) for r in conn.execute(sql, params or [])]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Source:
    """One offline conversation (3 messages) that Pat and Sam reviewed and rated, run as step 1
    of a study plan whose end answers are in."""
    path = tmp_path_factory.mktemp("study") / "source.db"
    code, out, err = run(
        "simulate",
        "--engine",
        "offline",
        "--turns",
        "3",
        "--agents",
        "2",
        "--db",
        str(path),
        "--quiet",
        "--seed",
        "5",
    )
    assert code == 0, err
    sid = out.split()[-1]
    db = open_database(path)
    try:
        with db.conn:
            for name in ("Pat", "Sam"):  # people, seated to the end (as the app records them)
                db.execute(
                    "INSERT INTO participants (session_id, name, kind, joined_at, remote, online,"
                    " policy, left_at) VALUES (?, ?, 'human', ?, 1, 0, 'human',"
                    " (SELECT finished_at FROM sessions WHERE id = ?))",
                    [sid, name, NOW, sid],
                )
        # Saved out of order: the export orders them by author, then message.
        study_rows.save_retrospective(
            db,
            sid,
            "Sam",
            {
                "message_id": 2,
                "thinking": "",
                "wanted": "no",
                "why": "",
                "timing": "never",
                "after_message_id": None,
            },
            NOW,
        )
        study_rows.save_retrospective(
            db,
            sid,
            "Pat",
            {
                "message_id": 2,
                "thinking": "I had a story",
                "wanted": "yes",
                "why": "it fit",
                "timing": "after",
                "after_message_id": 3,
            },
            LATER,
        )
        study_rows.save_retrospective(
            db,
            sid,
            "Pat",
            {
                "message_id": 1,
                "thinking": "who starts?",
                "wanted": "unsure",
                "why": "",
                "timing": None,
                "after_message_id": None,
            },
            NOW,
        )
        study_rows.save_questionnaire(db, sid, "Pat", {"likeability": 6, "initiative": 2}, NOW)
        study_rows.save_questionnaire(db, sid, "Sam", {"likeability": 3}, LATER)
        plan = {
            "id": PLAN,
            "created_at": NOW,
            "humans": 2,
            "grp": 1,
            "seed": 9,
            "minutes": 5.0,
            "show_thoughts": 1,
            "settings": {"room": {"max_turns": 3}},
        }
        study_rows.create_plan(db, plan, STEPS, ["tok-pat-0123456789", "tok-sam-0123456789"])
        study_rows.name_plan_seat(db, PLAN, 1, "Pat")
        study_rows.set_step(db, PLAN, 1, "done", sid)
        study_rows.save_plan_answers(db, PLAN, "Pat", {"favourite": "Ana"}, LATER)
    finally:
        db.close()
    return Source(path, sid)


def _export(source: Source, tmp_path: Path) -> Path:
    target = tmp_path / "out.jsonl"
    code, _, err = run("export", source.session, "--db", str(source.path), "--output", str(target))
    assert code == 0, err
    return target


def _record(path: Path) -> dict[str, Any]:
    (line,) = path.read_text(encoding="utf-8").splitlines()
    record: dict[str, Any] = json.loads(line)
    return record


# -- export and import ---------------------------------------------------------------------------


def test_the_record_holds_the_reviews_the_answers_and_the_study_step(source, tmp_path):
    rec = _record(_export(source, tmp_path))
    assert [(r["author"], r["message_id"]) for r in rec["retrospective"]] == [
        ("Pat", 1),
        ("Pat", 2),
        ("Sam", 2),
    ]
    assert rec["retrospective"][1] == {
        "author": "Pat",
        "message_id": 2,
        "thinking": "I had a story",
        "wanted": "yes",
        "why": "it fit",
        "timing": "after",
        "after_message_id": 3,
        "updated_at": LATER,
    }
    # The questionnaire is the participant instrument of the ratings, exported with them.
    answers = [
        (r["rater"], r["metric"], r["value"], r["updated_at"])
        for r in rec["ratings"]
        if r["instrument"] == "participant"
    ]
    assert answers == [
        ("Pat", "likeability", 6, NOW),
        ("Pat", "initiative", 2, NOW),
        ("Sam", "likeability", 3, LATER),
    ]
    assert "questionnaire" not in rec
    assert rec["study"] == {
        "plan_id": PLAN,
        "position": 1,
        "condition": "non-stop-chatter",
        "persona": "Ana",
        "topic": "travel",
    }


def test_round_trip_carries_retrospective_and_questionnaire_rows_exactly(source, tmp_path):
    fresh = tmp_path / "fresh.db"
    file = _export(source, tmp_path)
    code, out, err = run("import", str(file), "--db", str(fresh))
    assert code == 0, err
    assert out.splitlines()[0] == f"imported {source.session} as {source.session}"
    # Every column of every review row, and the questionnaire answers (participant ratings).
    sql = "SELECT * FROM retrospective ORDER BY author, message_id"
    assert len(_rows(fresh, sql)) == 3
    assert _rows(fresh, sql) == _rows(source.path, sql)
    sql = (
        "SELECT session_id, rater, metric, value, updated_at FROM ratings"
        " WHERE instrument = 'participant' ORDER BY rater, metric"
    )
    assert len(_rows(fresh, sql)) == 3
    assert _rows(fresh, sql) == _rows(source.path, sql)
    # The plan stays in the database it ran in: the copy is no plan's step.
    for table in PLAN_ROWS:
        assert _rows(fresh, f"SELECT COUNT(*) FROM {table}") == [(0,)], table
    original, copy = _record(file), _record(_export(Source(fresh, source.session), tmp_path))
    assert copy["study"] is None
    assert {**copy, "study": original["study"]} == original
    # Importing it again finds the same conversation there.
    code, out, err = run("import", str(file), "--db", str(fresh))
    assert code == 0, err
    assert out.splitlines()[0] == f"skipped {source.session}: already in the database"


def test_a_file_without_the_new_keys_imports_as_before(source, tmp_path):
    rec = _record(_export(source, tmp_path))
    for key in ("retrospective", "study"):
        del rec[key]
    file = tmp_path / "old.jsonl"
    file.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.db"
    code, _, err = run("import", str(file), "--db", str(fresh))
    assert code == 0, err
    assert _rows(fresh, "SELECT COUNT(*) FROM messages") == [(3,)]
    assert _rows(fresh, "SELECT COUNT(*) FROM retrospective") == [(0,)]


@pytest.mark.parametrize(
    ("key", "index", "field", "value", "message"),
    [
        ("retrospective", 0, "message_id", 99, "retrospective[0].message_id: 99 names no message"),
        (
            "retrospective",
            1,
            "after_message_id",
            42,
            "retrospective[1].after_message_id: 42 names no message",
        ),
        (
            "retrospective",
            2,
            "author",
            "Zed",
            "retrospective[2].author: 'Zed' is not one of the participants",
        ),
        (
            "retrospective",
            0,
            "timing",
            "later",
            "retrospective[0].timing: expected 'immediately', 'pause', 'after' or 'never'",
        ),
    ],
)
def test_a_bad_review_row_is_refused_with_its_line_and_field_and_writes_nothing(
    source, tmp_path, key, index, field, value, message
):
    rec = _record(_export(source, tmp_path))
    rec[key][index][field] = value
    file = tmp_path / "bad.jsonl"
    file.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    target = tmp_path / "target.db"
    open_database(target).close()
    before = _dump(target)
    code, out, err = run("import", str(file), "--db", str(target))
    assert code == 1, out
    assert "Traceback" not in err
    assert err.startswith(f"error: {file}: line 1: {message}")
    assert err.rstrip().endswith("nothing was imported")
    assert _dump(target) == before


def test_a_duplicated_review_is_refused(source, tmp_path):
    rec = _record(_export(source, tmp_path))
    rec["retrospective"].append(dict(rec["retrospective"][0]))
    file = tmp_path / "twice.jsonl"
    file.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    code, _, err = run("import", str(file), "--db", str(tmp_path / "t.db"))
    assert code == 1
    assert "line 1: retrospective[3]: author and message_id 'Pat' and 1 is also" in err


def test_a_session_of_no_plan_exports_study_null(source, tmp_path):
    db = open_database(_copy(source.path, tmp_path / "c.db"))
    try:
        db.execute("UPDATE plan_steps SET session_id = NULL")
        db.conn.commit()
        assert export.export_record(db, source.session)["study"] is None
    finally:
        db.close()


# -- merge ---------------------------------------------------------------------------------------


def test_merge_copies_a_plan_with_its_rows_and_skips_it_the_second_time(source, tmp_path):
    src = _copy(source.path, tmp_path / "shard.db")
    out = tmp_path / "merged.db"
    result = merge.merge(out, [src])
    (summary,) = result.sources
    assert (summary.sessions_added, summary.plans_added, summary.plans_present) == (1, 1, 0)
    for table in (*PLAN_ROWS, "retrospective", "ratings"):
        sql = f"SELECT * FROM {table} ORDER BY rowid"
        assert _rows(out, sql) == _rows(src, sql), table
    assert _rows(out, "SELECT session_id FROM plan_steps WHERE position = 1") == [(source.session,)]
    assert _rows(out, "PRAGMA foreign_key_check") == []
    before = _dump(out)
    code, text, err = run("merge", str(out), str(src))
    assert code == 0, err
    assert text.splitlines()[0] == (
        f"{src}: 0 sessions added, 1 already there; 0 study plans added, 1 already there"
    )
    assert _dump(out) == before


def test_a_plan_already_in_out_is_left_as_it_is_there(source, tmp_path):
    """The same plan id with other rows (here: finished, with other answers) is not compared:
    OUT keeps its own plan, and the source's session still arrives."""
    out = tmp_path / "merged.db"
    db = open_database(out)
    try:
        plan = {
            "id": PLAN,
            "created_at": LATER,
            "humans": 1,
            "grp": 0,
            "seed": 1,
            "minutes": 1.0,
            "show_thoughts": 0,
            "settings": {},
        }
        study_rows.create_plan(db, plan, STEPS[:1], ["tok-other-0123456789"])
        study_rows.finish_plan(db, PLAN)
    finally:
        db.close()
    before = {t: _rows(out, f"SELECT * FROM {t} ORDER BY rowid") for t in PLAN_ROWS}
    (summary,) = merge.merge(out, [_copy(source.path, tmp_path / "shard.db")]).sources
    assert (summary.sessions_added, summary.plans_added, summary.plans_present) == (1, 0, 1)
    assert {t: _rows(out, f"SELECT * FROM {t} ORDER BY rowid") for t in PLAN_ROWS} == before
    assert _rows(out, "SELECT COUNT(*) FROM retrospective") == [(3,)]
