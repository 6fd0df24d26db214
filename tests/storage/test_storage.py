"""Sessions in SQLite: schema, writes as events occur, reading back, bad files."""

import sqlite3

import pytest

from playground import errors, events
from playground.room import loops
from playground.storage import SessionReader, open_database
from playground.storage.schema import MIGRATIONS
from tests.conftest import offline_settings
from tests.support.rooms import build, library


def test_opening_twice_applies_the_schema_once(db_path):
    open_database(db_path).close()
    db = open_database(db_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 15
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert {
        "sessions",
        "participants",
        "memories",
        "messages",
        "thoughts",
        "evaluations",
        "decisions",
        "events",
        "annotations",
        "labels",
    } <= set(db.table_names())
    db.close()


def test_foreign_keys_are_enforced(db):
    with pytest.raises(sqlite3.IntegrityError):
        db.execute(
            "INSERT INTO messages (session_id, id, step, speaker, speaker_kind, text, posted_at) VALUES ('nope', 1, 0, 'x', 'ai', 'hi', 'now')"
        )


def test_a_file_that_is_not_a_database_gets_a_clear_error(tmp_path):
    bad = tmp_path / "notes.db"
    bad.write_text("this is not sqlite " * 200)
    with pytest.raises(errors.PlaygroundError, match=r"notes\.db: not a usable session database"):
        open_database(bad)
    assert bad.read_text().startswith("this is not sqlite")  # nothing overwritten


@pytest.mark.asyncio
async def test_rows_are_written_as_events_occur(embedder, db):
    bus = events.EventBus(strict=True)
    room, _, _ = await build(
        offline_settings(max_turns=5, seed=2), embedder, library(3), db=db, bus=bus
    )
    seen_in_db: list[int] = []

    def check(e):  # subscribed after the recorder: the row must already be there
        if isinstance(e, events.MessagePosted):
            n = db.execute(
                "SELECT COUNT(*) FROM messages WHERE session_id = ?", [room.session_id]
            ).fetchone()[0]
            seen_in_db.append(n)
        if isinstance(e, events.ThoughtEvaluated):
            row = db.execute(
                "SELECT score FROM thoughts WHERE session_id = ? AND id = ?",
                [room.session_id, e.evaluation.thought_id],
            ).fetchone()
            assert row[0] == e.evaluation.score

    bus.subscribe(check)
    assert (
        db.execute("SELECT status FROM sessions WHERE id = ?", [room.session_id]).fetchone()[0]
        == "running"
    )
    await loops.run_simulation(room, icebreaker="Hey!")
    assert seen_in_db == [1, 2, 3, 4, 5]


@pytest.mark.asyncio
async def test_a_saved_session_reads_back_with_everything(embedder, db):
    room, _, _ = await build(offline_settings(max_turns=5, seed=2), embedder, library(3), db=db)
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    data = SessionReader(db).load(room.session_id[:17])  # a unique prefix works too
    assert data["session"]["status"] == "finished"
    assert data["session"]["engine"] == "offline engine"
    assert [p["name"] for p in data["participants"]] == [a.name for a in room.agents]
    assert all(p["persona"]["facts"] for p in data["participants"])
    assert len(data["messages"]) == 5
    assert len(data["memories"]) == sum(len(a.memory) for a in room.agents)
    spoken = [m for m in data["messages"] if m["thought_id"]]
    by_id = {t["id"]: t for t in data["thoughts"]}
    for m in spoken:
        t = by_id[m["thought_id"]]
        assert t["expressed_in"] == m["id"]
        assert t["evaluations"]
        assert t["distribution"]
        assert len(t["reasons_for"]) == 2
    assert {d["action"] for d in data["decisions"]} <= {"speak", "silent"}
    assert all(d["reason"] for d in data["decisions"])
    assert SessionReader(db).list_sessions()[0]["id"] == room.session_id


def test_unknown_session_is_reported(db):
    with pytest.raises(errors.SessionNotFound, match="no session 'zzz'"):
        SessionReader(db).load("zzz")


def _open_and_close(path: str) -> str:
    try:
        open_database(path).close()
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the child hands any failure back to the test
        return repr(exc)


def test_processes_opening_a_new_database_at_once_each_migrate_it_safely(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        for i in range(15):
            path = str(tmp_path / f"race{i}.db")
            results = pool.map(_open_and_close, [path] * 4)
            assert results == ["ok"] * 4, results
            db = open_database(path)
            assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
            db.close()


def test_migration_10_keeps_old_databases_opening_and_fills_in_the_best_score(tmp_path):
    """Decisions recorded before migration 10 kept only ``score``: the best score, except for a
    drawn System-1 reply, whose own (lower) score it was; that row's best score is read back
    from its reason (2 decimals, as it was shown)."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for number, script in enumerate(MIGRATIONS[:9], start=1):
        conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute(
        "INSERT INTO sessions (id, created_at, status, engine, model, config)"
        " VALUES ('s', 'now', 'finished', 'offline engine', 'offline', '{}')"
    )
    conn.execute(
        "INSERT INTO participants (session_id, name, kind, joined_at) VALUES ('s', 'Ana', 'ai', 'now')"
    )
    rows = [  # action, thought, score, policy, reason
        ("speak", 2, 1.8, "inner-thoughts",
         "best score 3.62 < imThreshold 3.95; System-1 reply drawn (p=0.1)"),
        ("silent", 2, 1.8, "inner-thoughts",
         "best score 3.62 < imThreshold 3.95; System-1 reply drawn (p=0.1); lost the floor to"
         " Ben, who scored higher (4.31)"),
        ("silent", None, 3.62, "inner-thoughts",
         "best score 3.62 < imThreshold 3.95; no System-1 reply drawn (p=0.1)"),
        ("speak", 1, 4.2, "inner-thoughts", "best score 4.20 ≥ imThreshold 3.95"),
        ("silent", None, None, "reactive", "reactive: not addressed by name; silent"),
    ]  # fmt: skip
    for action, thought, score, policy, reason in rows:
        conn.execute(
            "INSERT INTO decisions (session_id, step, trigger, agent, action, thought_id, score,"
            " threshold, reason, decided_at, policy) VALUES ('s', 1, 'pause', 'Ana', ?, ?, ?,"
            " 3.95, ?, 'now', ?)",
            [action, thought, score, reason, policy],
        )
    conn.commit()
    conn.close()
    db = open_database(path)
    got = db.execute("SELECT score, best_score FROM decisions ORDER BY id").fetchall()
    db.close()
    assert got == [(1.8, 3.62), (1.8, 3.62), (3.62, 3.62), (4.2, 4.2), (None, None)]


@pytest.mark.asyncio
async def test_a_drawn_system1_reply_is_recorded_with_the_best_score_and_its_own(embedder, db):
    from playground.settings import PRESETS

    drawing = PRESETS["simulation"].model_copy(
        update={"im_threshold": 5.0, "interrupt_threshold": 5.0, "system1_prob": 1.0}
    )
    room, _, _ = await build(offline_settings(max_turns=6, seed=3), embedder, library(3), db=db)
    for a in room.agents:
        a.proactivity = drawing  # nothing reaches imThreshold 5: every reply is a System-1 draw
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    rows = db.execute(
        "SELECT score, best_score, reason FROM decisions WHERE session_id = ?"
        " AND reason LIKE '%; System-1 reply drawn%'",
        [room.session_id],
    ).fetchall()
    assert rows, "System-1 replies were drawn"
    assert all(best is not None and best >= score for score, best, _ in rows)
    assert any(best > score for score, best, _ in rows), "a System-1 thought below the best"
    for score, best, reason in rows:
        assert reason.startswith(f"best score {best:.2f} <")
        assert f"score {score:.2f}" in reason
    others = db.execute(
        "SELECT COUNT(*) FROM decisions WHERE session_id = ? AND score IS NOT NULL"
        " AND best_score IS NULL",
        [room.session_id],
    ).fetchone()[0]
    assert others == 0
