"""The session library: listing, search, filters, deletion, blueprints, and safe opening of files."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from playground import errors
from playground.cli import main as cli
from playground.embedding.cache import CachingEmbedder
from playground.room import loops
from playground.settings import PRESETS, Settings
from playground.storage import library, open_database
from tests.conftest import offline_settings
from tests.support.rooms import SESSION_TABLES, build

ICEBREAKER_B = "Who here has tried making marmalade at home?"
ICEBREAKER_C = "Is 100% certainty ever possible?"


async def _make_sessions(path: Path, minilm: Any) -> dict[str, str]:
    """Four real offline sessions beside the CLI one: two finished, one interrupted, one running."""
    from playground import personas

    people = personas.load_personas()
    db = open_database(path)
    ids: dict[str, str] = {}
    for key, settings, who, icebreaker in (
        ("B", offline_settings(max_turns=4, seed=2), people[:3], ICEBREAKER_B),
        ("C", offline_settings(max_turns=3, seed=3), people[3:5], ICEBREAKER_C),
    ):
        room, engine, _ = await build(settings, CachingEmbedder(minilm), who, db=db)
        await loops.run_simulation(room, icebreaker=icebreaker)
        await engine.close()
        ids[key] = room.session_id
    for key, status, reply in (
        ("D", "interrupted", "Tea for me."),
        ("E", "running", "Coffee first."),
    ):
        room, engine, _ = await build(
            offline_settings(seed=4), CachingEmbedder(minilm), people[5:7], db=db
        )
        await room.post(people[5].name, "Good morning, everyone.", origin="icebreaker")
        await room.post(people[6].name, f"Morning! {reply}", origin="offline engine")
        if status != "running":
            room.finish(status, "stopped by the user")
        await engine.close()
        ids[key] = room.session_id
    db.close()
    return ids


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("library") / "library.db"
    out, err = io.StringIO(), io.StringIO()
    argv = ["simulate", "--agents", "3", "--turns", "5", "--seed", "7", "--db", str(path)]
    assert cli.main([*argv, "--quiet"], out=out, err=err) == 0, err.getvalue()
    ids = {"A": out.getvalue().strip().splitlines()[-1]}
    ids.update(asyncio.run(_make_sessions(path, minilm)))
    db = open_database(path)
    with db.conn:
        db.execute("UPDATE sessions SET condition = 'baseline' WHERE id = ?", [ids["C"]])
        db.execute(
            "UPDATE sessions SET calls = 12, prompt_tokens = 3000, completion_tokens = 456 WHERE id = ?",
            [ids["B"]],
        )
    db.close()
    return path, ids


def copy_of(path: Path, to: Path) -> Path:
    """A consistent copy of a database in WAL mode (the sqlite3 backup API)."""
    src, dst = sqlite3.connect(path), sqlite3.connect(to)
    src.backup(dst)
    src.close()
    dst.close()
    return to


@pytest.fixture
def db(saved: tuple[Path, dict[str, str]]):
    database = open_database(saved[0], create=False)
    yield database
    database.close()


@pytest.fixture
def scratch(saved: tuple[Path, dict[str, str]], tmp_path: Path):
    database = open_database(copy_of(saved[0], tmp_path / "copy.db"), create=False)
    yield database
    database.close()


def _seconds(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def test_listing_has_every_column_right(db, saved):
    _, ids = saved
    rows = {s.id: s for s in library.list_sessions(db)}
    assert set(rows) == set(ids.values())
    created = [s.created_at for s in library.list_sessions(db)]
    assert created == sorted(created, reverse=True)  # newest first
    for s in rows.values():
        turns = db.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", [s.id]).fetchone()
        people = db.execute(
            "SELECT name, kind FROM participants WHERE session_id = ? ORDER BY joined_at, rowid",
            [s.id],
        ).fetchall()
        assert s.turns == turns[0]
        assert [(p.name, p.kind) for p in s.participants] == people
        assert s.engine == "offline engine"
        assert s.model == "offline"
        assert s.ratings == 0
        assert s.parent_id is None
        assert s.experiment_id is None
    b, c, d, e = (rows[ids[k]] for k in "BCDE")
    assert (rows[ids["A"]].turns, b.turns, c.turns, d.turns) == (5, 4, 3, 2)
    assert [s.status for s in (b, c, d, e)] == ["finished", "finished", "interrupted", "running"]
    assert (b.calls, b.tokens) == (12, 3456)
    assert (c.calls, c.tokens) == (0, 0)
    assert (b.condition, c.condition) == ("inner-thoughts", "baseline")
    start, end = db.execute(
        "SELECT created_at, finished_at FROM sessions WHERE id = ?", [b.id]
    ).fetchone()
    assert b.duration == pytest.approx(_seconds(start, end))
    last = db.execute(
        "SELECT MAX(posted_at) FROM messages WHERE session_id = ?", [e.id]
    ).fetchone()[0]
    assert e.duration == pytest.approx(_seconds(e.created_at, last))  # still running: last message


def test_rating_records_are_counted_per_session(scratch, saved):
    _, ids = saved
    b, c = ids["B"], ids["C"]
    now = "2026-01-01T00:00:00.000+00:00"
    with scratch.conn:
        for rater in ("ann", "bob"):
            scratch.execute("INSERT INTO raters (id, created_at) VALUES (?, ?)", [rater, now])
        rows = [
            (b, "ann", "conversation", "coherence"),
            (b, "ann", "conversation", "engagement"),  # the same rater: one record
            (b, "bob", "conversation", "coherence"),
            (b, "ann", "participant", "likeability"),
        ]
        for sid, rater, instrument, metric in rows:
            scratch.execute(
                "INSERT INTO ratings (session_id, rater, instrument, metric, value, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, 5, ?, ?)",
                [sid, rater, instrument, metric, now, now],
            )
        scratch.execute(
            "INSERT INTO preferences (rater, first_id, second_id, chosen_id, created_at)"
            " VALUES ('bob', ?, ?, ?, ?)",
            [b, c, c, now],
        )
    counts = {s.id: s.ratings for s in library.list_sessions(scratch)}
    assert counts[b] == 4
    assert counts[c] == 1
    assert counts[ids["A"]] == 0


def test_search_matches_participants_and_message_text_case_insensitively(db, saved):
    _, ids = saved
    names = db.execute(
        "SELECT name FROM participants WHERE session_id = ? ORDER BY joined_at", [ids["C"]]
    ).fetchall()
    name = names[0][0]
    texts = db.execute(
        "SELECT session_id, name FROM participants UNION ALL SELECT session_id, text FROM messages"
    ).fetchall()
    expected = {sid for sid, text in texts if name.lower() in text.lower()}
    assert ids["C"] in expected
    assert {s.id for s in library.list_sessions(db, search=name.swapcase())} == expected
    assert [s.id for s in library.list_sessions(db, search="MARMALADE")] == [ids["B"]]
    assert [s.id for s in library.list_sessions(db, search="coffee first")] == [ids["E"]]
    # % and _ are literal characters, not wildcards
    assert [s.id for s in library.list_sessions(db, search="100%")] == [ids["C"]]
    assert library.list_sessions(db, search="%") == library.list_sessions(db, search="100%")
    assert library.list_sessions(db, search="no such words anywhere") == []


def test_filters_are_exact_and_combine_with_search(db, saved):
    _, ids = saved
    assert [s.id for s in library.list_sessions(db, status="interrupted")] == [ids["D"]]
    assert [s.id for s in library.list_sessions(db, condition="baseline")] == [ids["C"]]
    assert len(library.list_sessions(db, engine="offline engine")) == 5
    assert library.list_sessions(db, engine="offline") == []  # exact, not a prefix
    # D alone says it, and D was interrupted
    assert library.list_sessions(db, status="finished", search="Tea for me") == []
    assert len(library.list_sessions(db, limit=2)) == 2
    assert library.facets(db) == {
        "status": ["finished", "interrupted", "running"],
        "condition": ["baseline", "inner-thoughts"],
        "engine": ["offline engine"],
    }


def test_sessions_made_from_the_command_line_appear(db, saved):
    _, ids = saved
    cli_session = library.summary(db, ids["A"])
    assert cli_session.status == "finished"
    assert cli_session.seed == 7
    assert len(cli_session.participants) == 3
    with pytest.raises(errors.SessionNotFound):
        library.summary(db, "nope")


def _counts(db: Any, sid: str) -> dict[str, int]:
    out = {
        t: db.execute(f"SELECT COUNT(*) FROM {t} WHERE session_id = ?", [sid]).fetchone()[0]
        for t in SESSION_TABLES
    }
    out["sessions"] = db.execute("SELECT COUNT(*) FROM sessions WHERE id = ?", [sid]).fetchone()[0]
    out["preferences"] = db.execute(
        "SELECT COUNT(*) FROM preferences WHERE ? IN (first_id, second_id)", [sid]
    ).fetchone()[0]
    out["assignments"] = db.execute(
        "SELECT COUNT(*) FROM assignments WHERE ? IN (session_a, session_b)", [sid]
    ).fetchone()[0]
    return out


def _add_human_evaluation(db: Any, victim: str, other: str) -> None:
    """A note, a label, ratings, a turn mark, a preference and assignments: one of every kind."""
    now = "2026-01-01T00:00:00.000+00:00"
    speaker = db.execute(
        "SELECT speaker FROM messages WHERE session_id = ? AND id = 2", [victim]
    ).fetchone()[0]
    with db.conn:
        db.execute("INSERT INTO raters (id, created_at) VALUES ('ann', ?)", [now])
        for table, extra in (("annotations", "'reaction', 'nice'"), ("labels", "'q', 'a'")):
            cols = "kind, text" if table == "annotations" else "question, answer"
            db.execute(
                f"INSERT INTO {table} (session_id, message_id, author, {cols}, created_at)"
                f" VALUES (?, 2, ?, {extra}, ?)",
                [victim, speaker, now],
            )
        db.execute(
            "INSERT INTO rating_plans (name, kind, seed, per_rater, raters, source, created_at)"
            " VALUES ('p', 'pairwise', 0, 1, '[\"ann\"]', '{}', ?)",
            [now],
        )
        db.execute(
            "INSERT INTO assignments (plan_id, rater, position, session_a, session_b)"
            " VALUES (1, 'ann', 0, ?, ?)",
            [victim, other],
        )
        db.execute(
            "INSERT INTO ratings (session_id, rater, instrument, metric, value, assignment_id, created_at, updated_at)"
            " VALUES (?, 'ann', 'conversation', 'coherence', 6, 1, ?, ?)",
            [victim, now, now],
        )
        db.execute(
            "INSERT INTO turn_marks (session_id, message_id, rater, created_at) VALUES (?, 2, 'ann', ?)",
            [victim, now],
        )
        db.execute(  # a next-speaker prediction (baseline agents)
            "INSERT INTO predictions (session_id, message_id, step, predicted, probabilities, method, predicted_at)"
            " VALUES (?, 2, 2, 'anyone', '{\"anyone\": 1.0}', 'parsed', ?)",
            [victim, now],
        )
        db.execute(
            "INSERT INTO preferences (rater, first_id, second_id, chosen_id, created_at)"
            " VALUES ('ann', ?, ?, ?, ?)",
            [other, victim, victim, now],
        )


def _add_storm_rows(db: Any, victim: str) -> None:
    """A simulated user's hidden state of message 2, the dyad's design row and a judged pair."""
    now = "2026-01-01T00:00:00.000+00:00"
    with db.conn:
        db.execute(
            "INSERT INTO hidden_states (session_id, message_id, participant, turn, step,"
            " satisfaction, clarity, format, recorded_at) VALUES (?, 2, 'Mara', 0, 2, 0.5, 0.4,"
            " 'offline', ?)",
            [victim, now],
        )
        db.execute(
            "INSERT INTO storm_dialogues (session_id, user_name, profile_id, category, task,"
            " difficulty, uncertainty, profile_access, assistant, assistant_model, user_model)"
            " VALUES (?, 'Mara', 'p1', 'Shopping', 'Buy a smartphone', 3, 40, 0, 'plain',"
            " 'offline', 'offline')",
            [victim],
        )
        db.execute(
            "INSERT INTO storm_judgements (session_id, judge, pair, clarity_change,"
            " satisfaction_change, created_at) VALUES (?, 'judge:m', 0, 'improve', 'not change', ?)",
            [victim, now],
        )


def test_delete_removes_every_row_of_the_session_and_nothing_else(scratch, saved):
    _, ids = saved
    victim, other = ids["B"], ids["C"]
    _add_human_evaluation(scratch, victim, other)
    _add_storm_rows(scratch, victim)
    assert scratch.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    before = _counts(scratch, victim)
    assert all(n > 0 for n in before.values()), before  # every table holds rows of it
    assert (
        scratch.execute(
            "SELECT COUNT(*) FROM thoughts WHERE session_id = ? AND expressed_in IS NOT NULL",
            [victim],
        ).fetchone()[0]
        > 0
    )
    others = {sid: _counts(scratch, sid) for sid in ids.values() if sid != victim}
    library.delete_session(scratch, victim)
    assert set(_counts(scratch, victim).values()) == {0}
    for sid, counts in others.items():
        after = _counts(scratch, sid)
        if sid == other:  # the pair it shared with the victim goes with the victim
            counts = {**counts, "preferences": 0, "assignments": 0}
        assert after == counts
    assert scratch.execute("PRAGMA foreign_key_check").fetchall() == []
    assert scratch.execute("SELECT COUNT(*) FROM raters").fetchone()[0] == 1  # raters stay
    with pytest.raises(errors.SessionNotFound):
        library.delete_session(scratch, victim)


def test_forks_outlive_their_parent(scratch, saved):
    _, ids = saved
    parent, fork = ids["B"], ids["C"]
    with scratch.conn:
        scratch.execute(
            "UPDATE sessions SET parent_id = ?, fork_seq = 9, fork_message = 2 WHERE id = ?",
            [parent, fork],
        )
    summary = library.summary(scratch, fork)
    assert (summary.parent_id, summary.fork_seq, summary.fork_message) == (parent, 9, 2)
    library.delete_session(scratch, parent)
    summary = library.summary(scratch, fork)
    assert summary.parent_id is None
    assert summary.turns == 3


def test_a_running_session_is_not_deleted(scratch, saved):
    _, ids = saved
    with pytest.raises(errors.PlaygroundError, match="still running"):
        library.delete_session(scratch, ids["E"])
    assert library.summary(scratch, ids["E"]).turns == 2


def test_blueprint_round_trip(db, saved, minilm, tmp_path):
    _, ids = saved
    bp = library.session_blueprint(db, ids["B"])
    config = json.loads(
        db.execute("SELECT config FROM sessions WHERE id = ?", [ids["B"]]).fetchone()[0]
    )
    assert bp.settings.snapshot() == config
    assert bp.settings.llm.api_key is None
    assert (bp.seed, bp.preset, bp.condition) == (2, "simulation", "inner-thoughts")
    assert bp.icebreaker == ICEBREAKER_B
    from playground import personas

    assert bp.personas == personas.load_personas()[:3]
    assert all(p.proactivity == PRESETS["simulation"] for p in bp.participants)
    assert library.session_blueprint(db, ids["D"]).icebreaker == "Good morning, everyone."

    async def again() -> list[str]:
        target = open_database(tmp_path / "again.db")
        room, engine, _ = await build(
            Settings.model_validate(bp.settings.snapshot()),
            CachingEmbedder(minilm),
            bp.personas,
            db=target,
        )
        await loops.run_simulation(room, icebreaker=bp.icebreaker)
        await engine.close()
        target.close()
        return [f"{m.speaker}: {m.text}" for m in room.messages]

    # The offline engine is deterministic: the same blueprint gives the same conversation.
    original = [
        f"{speaker}: {text}"
        for speaker, text in db.execute(
            "SELECT speaker, text FROM messages WHERE session_id = ? ORDER BY id", [ids["B"]]
        ).fetchall()
    ]
    assert asyncio.run(again()) == original


def test_a_missing_database_is_not_created_when_create_is_false(tmp_path):
    target = tmp_path / "missing" / "deeper" / "x.db"
    with pytest.raises(errors.PlaygroundError, match=r"no database at .*x\.db"):
        open_database(target, create=False)
    assert not (tmp_path / "missing").exists()


def _foreign(path: Path, version: int = 0) -> bytes:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('shopping list')")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("version", [0, 2])
def test_a_sqlite_file_of_another_application_is_refused_and_left_as_it_was(tmp_path, version):
    other = tmp_path / "other.sqlite"
    before = _foreign(other, version)
    for create in (True, False):
        with pytest.raises(errors.PlaygroundError, match="another application") as info:
            open_database(other, create=create)
        assert str(other) in str(info.value)
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]


def test_a_corrupt_file_gives_a_clear_error(saved, tmp_path):
    bad = copy_of(saved[0], tmp_path / "bad.db")
    data = bytearray(bad.read_bytes())
    data[:16] = b"not a database!!"  # the header is gone
    bad.write_bytes(bytes(data))
    with pytest.raises(errors.PlaygroundError, match=r"bad\.db: not a usable session database"):
        open_database(bad, create=False)
    assert bad.read_bytes()[:16] == b"not a database!!"


def test_an_empty_file_of_ours_is_still_opened(tmp_path):
    fresh = tmp_path / "fresh.db"
    open_database(fresh).close()
    db = open_database(fresh, create=False)
    assert library.list_sessions(db) == []
    assert library.count_sessions(db) == 0
    db.close()


@pytest.mark.parametrize("command", [["sessions"], ["show", "abc"]])
def test_cli_reading_commands_do_not_create_a_database(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*command, "--db", "missing/path.db"], out=out, err=err)
    assert code == 1
    assert err.getvalue().strip() == "error: no database at missing/path.db"
    assert list(tmp_path.iterdir()) == []
