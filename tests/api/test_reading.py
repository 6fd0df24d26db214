"""``pg.open(path)``: typed sessions, experiments, studies and rating plans from a real database,
read-only (the file's bytes and time stay the same; a write fails), with clear errors."""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import playground as pg
from playground.transfer import export
from playground.transfer import model as export_model
from tests.api.conftest import Built, run, show_json
from tests.conftest import REPO

HEAVY = ("pandas", "numpy", "openai", "torch", "sentence_transformers", "PySide6", "matplotlib")


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_sessions_are_typed_oldest_first_as_playground_sessions_lists_them(built: Built) -> None:
    with pg.open(built.path) as db:
        sessions = db.sessions
    assert [s.id for s in sessions] == [built.simulated, *built.experiment, built.storm]
    assert all(isinstance(s, pg.Session) for s in sessions)
    assert all(isinstance(s, export_model.SessionRow) for s in sessions)  # the export's row
    listing = run("sessions", "--db", str(built.path))
    for s in sessions:
        assert s.id in listing
        assert s.status == "finished"
        assert s.engine == "offline engine"
    first = sessions[0]
    assert first.seed == 7
    assert first.condition == "inner-thoughts"
    assert isinstance(first.config, dict)
    room = first.config["room"]
    assert isinstance(room, dict)
    assert room["max_turns"] == 5
    with pytest.raises(ValueError, match="frozen"):
        first.status = "failed"  # type: ignore[misc]


def test_a_session_by_prefix_and_its_typed_record_match_show_json(built: Built) -> None:
    with pg.open(built.path) as db:
        session = db.session(built.simulated[:17])
        record = session.record()
    assert session.id == built.simulated
    shown = show_json(built.path, built.simulated)
    assert isinstance(record, export_model.ExportRecord)
    assert len(record.messages) == len(shown["messages"]) == 5
    assert [t.score for t in record.thoughts] == [t["score"] for t in shown["thoughts"]]
    assert [m.text for m in record.messages] == [m["text"] for m in shown["messages"]]


def test_an_unknown_session_is_refused_by_name(built: Built) -> None:
    with pg.open(built.path) as db, pytest.raises(pg.SessionNotFound, match="nosuch"):
        db.session("nosuch")


def test_experiments_by_name_or_id_know_their_sessions(built: Built) -> None:
    with pg.open(built.path) as db:
        listed = db.experiments
        pilot = db.experiment("pilot")
        again = db.experiment(pilot.id)
        conditions = {s.condition for s in pilot.sessions}
        with pytest.raises(pg.PlaygroundError, match="no experiment 'nope'"):
            db.experiment("nope")
        expected = export.experiment_sessions(db.handle, "pilot")
    assert pilot in listed
    assert again == pilot
    assert isinstance(pilot, export_model.ExperimentRow)
    assert list(pilot.session_ids) == built.experiment == expected
    assert conditions == {"inner-thoughts", "reactive"}
    assert pilot.config is not None
    protocol = pilot.config["protocol"]
    assert isinstance(protocol, dict)
    assert protocol["conditions"] == ["inner-thoughts", "reactive"]


def test_studies_and_rating_plans_are_typed(built: Built) -> None:
    with pg.open(built.path) as db:
        studies = db.studies
        plans = db.rating_plans
    (study,) = studies
    assert isinstance(study, pg.Study)
    assert study.id == built.plan_id
    assert (study.humans, study.grp, study.seed, study.minutes) == (2, 1, 5, 4.0)
    assert study.status == "running"
    assert [s.position for s in study.steps] == [1, 2, 3]
    assert all(s.status == "pending" and s.session_id is None for s in study.steps)
    assert {s.condition for s in study.steps} == {
        "non-stop-chatter",
        "selective-participant",
        "active-contributor",
    }
    (plan,) = plans
    assert isinstance(plan, pg.RatingPlan)
    assert (plan.name, plan.kind, plan.raters) == ("judges", "conversation", ["r2"])


def test_reading_changes_nothing_in_the_file(built: Built) -> None:
    before = fingerprint(built.path)
    with pg.open(built.path) as db:
        read = (db.sessions, db.experiments, db.studies, db.rating_plans)
        assert all(read)
        db.session(built.simulated).record()
        db.to_pandas()
    assert fingerprint(built.path) == before


def test_writing_through_the_view_is_impossible(built: Built) -> None:
    """The connection refuses writes (``query_only``), and the file is open read-only beneath:
    even with ``query_only`` switched off, SQLite refuses to write."""
    before = fingerprint(built.path)
    with pg.open(built.path) as db:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.handle.execute("DELETE FROM sessions")
        db.handle.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.handle.execute("DELETE FROM sessions")
        assert len(db.sessions) == 4
    assert fingerprint(built.path) == before


def test_a_closed_view_says_so(built: Built) -> None:
    db = pg.open(built.path)
    db.close()
    with pytest.raises(pg.PlaygroundError, match="closed"):
        db.session(built.simulated)
    assert "closed" in repr(db)


def _newer(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()


def _other_app(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.close()


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (None, "no database at"),
        (lambda p: p.write_text("hello, not a database\n" * 100), "not a usable session database"),
        (lambda p: p.write_bytes(b""), "not a session database (an empty file)"),
        (_other_app, "a SQLite database of another application"),
        ("newer", "schema (version 999) is newer than this app understands"),
    ],
    ids=["missing", "text-file", "empty", "other-app", "newer-schema"],
)
def test_a_file_that_cannot_be_read_is_named_and_left_as_it_was(
    built: Built, tmp_path: Path, make: object, fragment: str
) -> None:
    path = tmp_path / "x.db"
    if make == "newer":
        shutil.copy(built.path, path)
        _newer(path)
    elif callable(make):
        make(path)
    before = fingerprint(path) if path.exists() else None
    with pytest.raises(pg.PlaygroundError, match=re.escape(fragment)) as caught:
        pg.open(path)
    assert str(path) in str(caught.value)
    assert (fingerprint(path) if path.exists() else None) == before


def test_import_playground_loads_nothing_heavy_and_lists_the_api() -> None:
    code = (
        "import sys, playground as pg\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert 'playground.api' not in sys.modules\n"
        "assert set(pg.__all__) <= set(dir(pg))\n"
        "print(pg.open.__module__)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "playground.api.reading"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        pg.simulat  # noqa: B018


def test_a_repr_leaves_out_the_settings_snapshot_but_the_field_is_there(built: Built) -> None:
    with pg.open(built.path) as db:
        session = db.session(built.simulated)
        pilot = db.experiment("pilot")
    assert "config=" not in repr(session)
    assert "config=" not in repr(pilot)
    assert f"id='{built.simulated}'" in repr(session)
    room = session.config["room"]
    assert isinstance(room, dict)
    assert room["max_turns"] == 5  # still there


def test_a_path_under_the_home_folder_may_be_written_with_a_tilde(
    built: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    shutil.copy(built.path, tmp_path / "mine.db")
    with pg.open("~/mine.db") as db:
        assert db.path == tmp_path / "mine.db"
        assert db.sessions[0].id == built.simulated
