"""Invited seats: one per person who takes part in a session from a browser, each with its own
token. Rows of the ``seats`` table; the people who joined through them are participants with
``remote`` set, and their connections come and go in ``presence``."""

from __future__ import annotations

from typing import Any

import sqlite_utils

from playground import events
from playground.storage.writes import immediate

#: Migration 11 (:data:`playground.storage.schema.MIGRATIONS`): the invited seats of a session
#: (one token each), which participants are remote and whether their browser is connected, and
#: when each connection came and went.
MIGRATION = """
    ALTER TABLE participants ADD COLUMN remote INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE participants ADD COLUMN online INTEGER;
    CREATE TABLE seats (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seat INTEGER NOT NULL,
        token TEXT NOT NULL UNIQUE,
        name TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        PRIMARY KEY (session_id, seat)
    );
    CREATE TABLE presence (
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        online INTEGER NOT NULL,
        at TEXT NOT NULL,
        FOREIGN KEY (session_id, name) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    CREATE INDEX presence_participant ON presence(session_id, name, at);
"""


def presence_changed(db: sqlite_utils.Database, e: events.PresenceChanged) -> None:
    """A remote person's browser connected or left: their last state, and the log of changes."""
    db.execute(
        "UPDATE participants SET online = :online WHERE session_id = :sid AND name = :name",
        {"online": int(e.online), "sid": e.session_id, "name": e.name},
    )
    db.execute(
        "INSERT INTO presence (session_id, name, online, at) VALUES (:sid, :name, :online, :at)",
        {"sid": e.session_id, "name": e.name, "online": int(e.online), "at": e.at},
    )


def add_seats(
    db: sqlite_utils.Database, session_id: str, tokens: list[str], created_at: str
) -> list[int]:
    """Add one seat per token to the session, numbered after its existing seats; their numbers."""
    with immediate(db):
        [(last,)] = db.execute(
            "SELECT COALESCE(MAX(seat), 0) FROM seats WHERE session_id = ?", [session_id]
        ).fetchall()
        numbers = list(range(last + 1, last + 1 + len(tokens)))
        db.conn.executemany(
            "INSERT INTO seats (session_id, seat, token, created_at) VALUES (?, ?, ?, ?)",
            [(session_id, n, token, created_at) for n, token in zip(numbers, tokens, strict=True)],
        )
    return numbers


def seats(db: sqlite_utils.Database, session_id: str) -> list[dict[str, Any]]:
    """The session's seats in order: seat, token, name (None until someone joined), revoked_at."""
    cursor = db.execute(
        "SELECT seat, token, name, created_at, revoked_at FROM seats WHERE session_id = ?"
        " ORDER BY seat",
        [session_id],
    )
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def name_seat(db: sqlite_utils.Database, session_id: str, seat: int, name: str) -> None:
    with immediate(db):
        db.execute(
            "UPDATE seats SET name = ? WHERE session_id = ? AND seat = ?", [name, session_id, seat]
        )


def revoke_seat(db: sqlite_utils.Database, session_id: str, seat: int, at: str) -> None:
    with immediate(db):
        db.execute(
            "UPDATE seats SET revoked_at = ? WHERE session_id = ? AND seat = ?",
            [at, session_id, seat],
        )


def private_notes(db: sqlite_utils.Database, session_id: str, author: str) -> dict[str, Any]:
    """What ``author`` noted privately in the session: their reasons and reactions, and their
    answers to the in-the-moment questions, each in the order given."""
    notes = db.execute(
        "SELECT message_id, kind, text FROM annotations WHERE session_id = ? AND author = ?"
        " ORDER BY created_at, rowid",
        [session_id, author],
    ).fetchall()
    labels = db.execute(
        "SELECT message_id, answer FROM labels WHERE session_id = ? AND author = ?"
        " ORDER BY created_at, rowid",
        [session_id, author],
    ).fetchall()
    return {
        "notes": [{"message_id": m, "kind": k, "text": t} for m, k, t in notes],
        "labels": [{"message_id": m, "answer": a} for m, a in labels],
    }
