"""Migration 15 relabels sessions saved before it: a person's and a simulated user's rows say
what they are instead of ``inner-thoughts``, and everyone still seated when a session ended
left then (a running session's people stay seated)."""

from __future__ import annotations

import sqlite3

from playground.storage import open_database
from playground.storage.schema import MIGRATIONS


def test_migration_15_names_people_and_closes_the_seats_of_ended_sessions(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for number, script in enumerate(MIGRATIONS[:14], start=1):
        conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {number}")
    for sid, status, finished in (("done", "finished", "t9"), ("live", "running", None)):
        conn.execute(
            "INSERT INTO sessions (id, created_at, status, engine, model, config, finished_at)"
            " VALUES (?, 't0', ?, 'offline engine', 'offline', '{}', ?)",
            [sid, status, finished],
        )
        for name, kind, left in (("Ana", "ai", None), ("Zoe", "human", None), ("Sim", "simulated", None), ("Ben", "ai", "t5")):  # fmt: skip
            conn.execute(
                "INSERT INTO participants (session_id, name, kind, joined_at, left_at)"
                " VALUES (?, ?, ?, 't0', ?)",
                [sid, name, kind, left],
            )
    conn.commit()
    conn.close()
    db = open_database(path)
    got = {
        (r[0], r[1]): (r[2], r[3])
        for r in db.execute("SELECT session_id, name, policy, left_at FROM participants")
    }
    db.close()
    assert got == {
        ("done", "Ana"): ("inner-thoughts", "t9"),
        ("done", "Zoe"): ("human", "t9"),
        ("done", "Sim"): ("simulated", "t9"),
        ("done", "Ben"): ("inner-thoughts", "t5"),
        ("live", "Ana"): ("inner-thoughts", None),
        ("live", "Zoe"): ("human", None),
        ("live", "Sim"): ("simulated", None),
        ("live", "Ben"): ("inner-thoughts", "t5"),
    }
