"""What people say about a conversation after it, and the study plans that run several.

- ``retrospective``: a person's review of a conversation, message by message (the formative
  study's method): what they were thinking at that message, whether they wanted to say it, why,
  and when they would have spoken. One row per person and message, replaced when they edit it.
- a person's ratings of the conversation's agent (1–7) are the participant questionnaire, in
  ``ratings`` (see :func:`save_questionnaire`).
- ``study_plans``, ``plan_seats``, ``plan_steps``, ``plan_answers``: a user study of several
  conversations for the same group — the plan, its invite links (one per person for the whole
  plan), its conversations with the condition and agent each was assigned, and the answers given
  at the end (which agent had which style, the favourite agent).

Everything here is private to its author: the participants' page shows a person their own rows
and nobody else's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import sqlite_utils

from playground.storage.writes import immediate

#: Migration 12 (:data:`playground.storage.schema.MIGRATIONS`).
MIGRATION = """
    CREATE TABLE retrospective (
        session_id TEXT NOT NULL,
        author TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        thinking TEXT NOT NULL DEFAULT '',
        wanted TEXT CHECK (wanted IN ('yes', 'no', 'unsure')),
        why TEXT NOT NULL DEFAULT '',
        timing TEXT CHECK (timing IN ('immediately', 'pause', 'after', 'never')),
        after_message_id INTEGER,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (session_id, author, message_id),
        FOREIGN KEY (session_id, message_id) REFERENCES messages(session_id, id) ON DELETE CASCADE,
        FOREIGN KEY (session_id, author) REFERENCES participants(session_id, name) ON DELETE CASCADE
    );
    CREATE TABLE study_plans (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        humans INTEGER NOT NULL,
        grp INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        minutes REAL NOT NULL,
        show_thoughts INTEGER NOT NULL DEFAULT 0,
        settings TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done'))
    );
    CREATE TABLE plan_seats (
        plan_id TEXT NOT NULL REFERENCES study_plans(id) ON DELETE CASCADE,
        seat INTEGER NOT NULL,
        token TEXT NOT NULL UNIQUE,
        name TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        PRIMARY KEY (plan_id, seat)
    );
    CREATE TABLE plan_steps (
        plan_id TEXT NOT NULL REFERENCES study_plans(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        condition TEXT NOT NULL,
        persona TEXT NOT NULL,
        topic TEXT NOT NULL,
        session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'talking', 'reviewing', 'done')),
        PRIMARY KEY (plan_id, position)
    );
    CREATE TABLE plan_answers (
        plan_id TEXT NOT NULL REFERENCES study_plans(id) ON DELETE CASCADE,
        person TEXT NOT NULL,
        item TEXT NOT NULL,
        value TEXT NOT NULL,
        answered_at TEXT NOT NULL,
        PRIMARY KEY (plan_id, person, item)
    );
"""

#: Migration 13: the runner holding a plan (the lock that gives a plan one runner at a time, see
#: :mod:`playground.study.lock`) and the name each conversation's agent was shown under (NULL:
#: its persona's name).
RUNNER_MIGRATION = """
    ALTER TABLE study_plans ADD COLUMN runner_pid INTEGER;
    ALTER TABLE study_plans ADD COLUMN runner_host TEXT;
    ALTER TABLE study_plans ADD COLUMN runner_boot TEXT;
    ALTER TABLE study_plans ADD COLUMN runner_started TEXT;
    ALTER TABLE study_plans ADD COLUMN runner_address TEXT;
    ALTER TABLE study_plans ADD COLUMN runner_since TEXT;
    ALTER TABLE plan_steps ADD COLUMN agent TEXT;
"""
#: The columns of a plan's runner, as :func:`take_runner` writes them.
RUNNER_COLUMNS = ("pid", "host", "boot", "started", "address", "since")

RETRO_COLUMNS = ("message_id", "thinking", "wanted", "why", "timing", "after_message_id")


def _dicts(cursor: Any) -> list[dict[str, Any]]:
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _select(
    db: sqlite_utils.Database, select: str, filters: dict[str, object], order: str
) -> list[dict[str, Any]]:
    """``select`` (``SELECT … FROM table``) of the rows matching every filter that is not None."""
    given = {column: value for column, value in filters.items() if value is not None}
    where = " AND ".join(f"{column} = ?" for column in given)
    return _dicts(db.execute(f"{select} WHERE {where} ORDER BY {order}", list(given.values())))


# -- retrospective review ----------------------------------------------------------------------


def save_retrospective(
    db: sqlite_utils.Database, session_id: str, author: str, entry: dict[str, Any], at: str
) -> None:
    """Save (or replace) ``author``'s review of one message: ``entry`` has :data:`RETRO_COLUMNS`."""
    with immediate(db):
        db.execute(
            "INSERT INTO retrospective (session_id, author, message_id, thinking, wanted, why,"
            " timing, after_message_id, updated_at) VALUES (:sid, :author, :message_id,"
            " :thinking, :wanted, :why, :timing, :after_message_id, :at)"
            " ON CONFLICT (session_id, author, message_id) DO UPDATE SET thinking = excluded.thinking,"
            " wanted = excluded.wanted, why = excluded.why, timing = excluded.timing,"
            " after_message_id = excluded.after_message_id, updated_at = excluded.updated_at",
            {"sid": session_id, "author": author, "at": at, **{k: entry[k] for k in RETRO_COLUMNS}},
        )


def retrospective(
    db: sqlite_utils.Database, session_id: str, author: str | None = None
) -> list[dict[str, Any]]:
    """The session's retrospective rows (one author's, or everyone's), by author and message."""
    return _select(
        db,
        "SELECT author, message_id, thinking, wanted, why, timing, after_message_id, updated_at"
        " FROM retrospective",
        {"session_id": session_id, "author": author},
        "author, message_id",
    )


def reviewed_messages(db: sqlite_utils.Database, session_id: str) -> list[dict[str, Any]]:
    """The session's retrospective rows by message, then author, each with its message's
    ``speaker``, ``text`` and the agents' ``interpretation`` of it (None when there is none)."""
    return _dicts(
        db.execute(
            "SELECT r.message_id, m.speaker, m.text, m.interpretation, r.author, r.thinking,"
            " r.wanted, r.why, r.timing, r.after_message_id, r.updated_at"
            " FROM retrospective r JOIN messages m"
            " ON m.session_id = r.session_id AND m.id = r.message_id"
            " WHERE r.session_id = ? ORDER BY r.message_id, r.author",
            [session_id],
        )
    )


def study_reviews(db: sqlite_utils.Database, session_id: str) -> dict[str, Any]:
    """What people said about a session after it (``show``, ``show --json``): ``plan`` (the plan
    step it was run for, with ``of`` and the ``agent`` name shown, or None), ``retrospective``, ``questionnaire`` and, for a
    plan's last conversation, the plan's ``final_answers``."""
    step = step_of_session(db, session_id)
    final: list[dict[str, Any]] = []
    if step is not None:
        steps = plan_steps(db, step["plan_id"])
        step["of"] = len(steps)
        step["agent"] = next(s["agent"] for s in steps if s["position"] == step["position"])
        if step["position"] == steps[-1]["position"]:
            final = plan_answers(db, step["plan_id"])
    return {
        "plan": step,
        "retrospective": retrospective(db, session_id),
        "questionnaire": questionnaire(db, session_id),
        "final_answers": final,
    }


def review_count(db: sqlite_utils.Database, session_id: str) -> int:
    [(n,)] = db.execute(
        "SELECT COUNT(*) FROM retrospective WHERE session_id = ?", [session_id]
    ).fetchall()
    return int(n)


# -- questionnaire -----------------------------------------------------------------------------
# A person's ratings of a study conversation's agent are the participant questionnaire the window
# gives its own human (``ratings`` rows of instrument ``participant``, the person as ``rater``):
# one instrument, one table, whichever way a person took part.


def save_questionnaire(
    db: sqlite_utils.Database, session_id: str, author: str, answers: dict[str, int], at: str
) -> None:
    """Save ``author``'s ratings (item key → 1–7), replacing earlier answers to the same."""
    with immediate(db):
        db.execute("INSERT OR IGNORE INTO raters (id, created_at) VALUES (?, ?)", [author, at])
        db.conn.executemany(
            "INSERT INTO ratings (session_id, rater, instrument, metric, value, created_at,"
            " updated_at) VALUES (?, ?, 'participant', ?, ?, ?, ?)"
            " ON CONFLICT (session_id, rater, instrument, metric) DO UPDATE SET"
            " value = excluded.value, updated_at = excluded.updated_at",
            [(session_id, author, item, value, at, at) for item, value in answers.items()],
        )


def questionnaire(
    db: sqlite_utils.Database, session_id: str, author: str | None = None
) -> list[dict[str, Any]]:
    """The session's participant-questionnaire answers: author, item, value, answered_at."""
    return _select(
        db,
        "SELECT rater AS author, metric AS item, value, updated_at AS answered_at FROM ratings",
        {"session_id": session_id, "instrument": "participant", "rater": author},
        "rater, id",
    )


# -- study plans -------------------------------------------------------------------------------


def create_plan(
    db: sqlite_utils.Database,
    plan: dict[str, Any],
    steps: list[dict[str, Any]],
    tokens: list[str],
) -> None:
    """Save a new plan with its steps and one seat per token, in one transaction."""
    with immediate(db):
        db.execute(
            "INSERT INTO study_plans (id, created_at, humans, grp, seed, minutes, show_thoughts,"
            " settings, status) VALUES (:id, :created_at, :humans, :grp, :seed, :minutes,"
            " :show_thoughts, :settings, 'running')",
            {**plan, "settings": json.dumps(plan["settings"])},
        )
        db.conn.executemany(
            "INSERT INTO plan_steps (plan_id, position, condition, persona, topic, status)"
            " VALUES (?, ?, ?, ?, ?, 'pending')",
            [(plan["id"], s["position"], s["condition"], s["persona"], s["topic"]) for s in steps],
        )
        db.conn.executemany(
            "INSERT INTO plan_seats (plan_id, seat, token, created_at) VALUES (?, ?, ?, ?)",
            [(plan["id"], n, t, plan["created_at"]) for n, t in enumerate(tokens, 1)],
        )


def plan(db: sqlite_utils.Database, plan_id: str) -> dict[str, Any] | None:
    rows = _dicts(db.execute("SELECT * FROM study_plans WHERE id = ?", [plan_id]))
    if not rows:
        return None
    row = rows[0]
    row["settings"] = json.loads(row["settings"])
    row["show_thoughts"] = bool(row["show_thoughts"])
    return row


def plans(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    return _dicts(
        db.execute(
            "SELECT id, created_at, humans, grp, status FROM study_plans ORDER BY created_at"
        )
    )


def plan_steps(db: sqlite_utils.Database, plan_id: str) -> list[dict[str, Any]]:
    return _dicts(
        db.execute(
            "SELECT position, condition, persona, COALESCE(agent, persona) AS agent, topic,"
            " session_id, status FROM plan_steps"
            " WHERE plan_id = ? ORDER BY position",
            [plan_id],
        )
    )


def step_of_session(db: sqlite_utils.Database, session_id: str) -> dict[str, Any] | None:
    """The plan step a session was run for (plan_id, position, condition, persona, topic)."""
    rows = _dicts(
        db.execute(
            "SELECT plan_id, position, condition, persona, topic FROM plan_steps"
            " WHERE session_id = ?",
            [session_id],
        )
    )
    return rows[0] if rows else None


def set_step(
    db: sqlite_utils.Database,
    plan_id: str,
    position: int,
    status: str,
    session_id: str | None = None,
) -> None:
    with immediate(db):
        if session_id is None:
            db.execute(
                "UPDATE plan_steps SET status = ? WHERE plan_id = ? AND position = ?",
                [status, plan_id, position],
            )
        else:
            db.execute(
                "UPDATE plan_steps SET status = ?, session_id = ? WHERE plan_id = ? AND position = ?",
                [status, session_id, plan_id, position],
            )


def name_step_agent(db: sqlite_utils.Database, plan_id: str, position: int, agent: str) -> None:
    """Record the name a conversation's agent is shown under (when not its persona's)."""
    with immediate(db):
        db.execute(
            "UPDATE plan_steps SET agent = ? WHERE plan_id = ? AND position = ?",
            [agent, plan_id, position],
        )


def restore_step(
    db: sqlite_utils.Database, plan_id: str, position: int, status: str, session_id: str | None
) -> None:
    """Put a step back as it was (a start that failed leaves nothing behind)."""
    with immediate(db):
        db.execute(
            "UPDATE plan_steps SET status = ?, session_id = ? WHERE plan_id = ? AND position = ?",
            [status, session_id, plan_id, position],
        )


def delete_plan(db: sqlite_utils.Database, plan_id: str) -> None:
    """Delete a plan and its seats, steps and answers (not its sessions)."""
    with immediate(db):
        db.execute("DELETE FROM study_plans WHERE id = ?", [plan_id])


# -- the runner holding a plan -------------------------------------------------------------------


def runner(db: sqlite_utils.Database, plan_id: str) -> dict[str, Any] | None:
    """The runner recorded as holding the plan (``RUNNER_COLUMNS``), or None."""
    rows = _dicts(
        db.execute(
            "SELECT "
            + ", ".join(f"runner_{c} AS {c}" for c in RUNNER_COLUMNS)
            + " FROM study_plans WHERE id = ? AND runner_pid IS NOT NULL",
            [plan_id],
        )
    )
    return rows[0] if rows else None


def take_runner(
    db: sqlite_utils.Database,
    plan_id: str,
    me: dict[str, Any],
    holds: Callable[[dict[str, Any]], bool],
) -> dict[str, Any] | None:
    """Record ``me`` as the plan's runner unless ``holds(runner)`` says the runner recorded now
    still holds it; in one write transaction, so two runners starting at once cannot both win.
    Returns None when taken, else the runner that holds the plan."""
    with immediate(db):
        held = runner(db, plan_id)
        if held is not None and holds(held):
            return held
        db.execute(
            "UPDATE study_plans SET "
            + ", ".join(f"runner_{c} = :{c}" for c in RUNNER_COLUMNS)
            + " WHERE id = :plan_id",
            {**me, "plan_id": plan_id},
        )
    return None


def set_runner_address(
    db: sqlite_utils.Database, plan_id: str, pid: int, started: str | None, address: str
) -> None:
    with immediate(db):
        db.execute(
            "UPDATE study_plans SET runner_address = ? WHERE id = ? AND runner_pid = ?"
            " AND runner_started IS ?",
            [address, plan_id, pid, started],
        )


def release_runner(db: sqlite_utils.Database, plan_id: str, pid: int, started: str | None) -> None:
    """Clear the plan's runner if it is still the one given (never another's lock)."""
    with immediate(db):
        db.execute(
            "UPDATE study_plans SET "
            + ", ".join(f"runner_{c} = NULL" for c in RUNNER_COLUMNS)
            + " WHERE id = ? AND runner_pid = ? AND runner_started IS ?",
            [plan_id, pid, started],
        )


def finish_plan(db: sqlite_utils.Database, plan_id: str) -> None:
    with immediate(db):
        db.execute("UPDATE study_plans SET status = 'done' WHERE id = ?", [plan_id])


def plan_seats(db: sqlite_utils.Database, plan_id: str) -> list[dict[str, Any]]:
    return _dicts(
        db.execute(
            "SELECT seat, token, name, created_at, revoked_at FROM plan_seats WHERE plan_id = ?"
            " ORDER BY seat",
            [plan_id],
        )
    )


def _set_plan_seat(
    db: sqlite_utils.Database, plan_id: str, seat: int, column: str, value: str
) -> None:
    with immediate(db):
        db.execute(
            f"UPDATE plan_seats SET {column} = ? WHERE plan_id = ? AND seat = ?",
            [value, plan_id, seat],
        )


def name_plan_seat(db: sqlite_utils.Database, plan_id: str, seat: int, name: str) -> None:
    _set_plan_seat(db, plan_id, seat, "name", name)


def revoke_plan_seat(db: sqlite_utils.Database, plan_id: str, seat: int, at: str) -> None:
    _set_plan_seat(db, plan_id, seat, "revoked_at", at)


def save_plan_answers(
    db: sqlite_utils.Database, plan_id: str, person: str, answers: dict[str, str], at: str
) -> None:
    """Save a person's end-of-study answers (``match:<agent>`` → condition, ``favourite`` →
    agent), replacing earlier answers to the same items."""
    with immediate(db):
        db.conn.executemany(
            "INSERT INTO plan_answers (plan_id, person, item, value, answered_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (plan_id, person, item) DO UPDATE SET"
            " value = excluded.value, answered_at = excluded.answered_at",
            [(plan_id, person, item, value, at) for item, value in answers.items()],
        )


def plan_answers(
    db: sqlite_utils.Database, plan_id: str, person: str | None = None
) -> list[dict[str, Any]]:
    """The plan's end-of-study answers (one person's, or everyone's), by person as given."""
    return _select(
        db,
        "SELECT person, item, value, answered_at FROM plan_answers",
        {"plan_id": plan_id, "person": person},
        "person, rowid",
    )
