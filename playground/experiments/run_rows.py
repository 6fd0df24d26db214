"""An experiment's rows in the database: the experiment, its draws and the state of every run.

``experiments`` holds the protocol and settings, ``experiment_draws`` the paired design and
``experiment_runs`` one row per (draw, condition): which session ran it, how it ended and with
what error. :class:`~playground.experiments.runner.Runner` reads and writes them here; every write
is a transaction of its own (:func:`~playground.storage.writes.immediate`).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping, Sequence
from typing import Any

import sqlite_utils

from playground import clock, domain
from playground.experiments.protocol import Draw
from playground.storage.database import alive
from playground.storage.writes import immediate

_CLOCK = clock.SystemClock()

#: A run's row as :func:`run_states` reads it: its status, and the pid, host and status of the
#: session it names (None where there is no row, or no such session).
RunState = tuple[str | None, int | None, str | None, str | None]


def store_plan(
    db: sqlite_utils.Database,
    experiment_id: str,
    name: str | None,
    config: Mapping[str, Any],
    design: Sequence[Draw],
) -> None:
    """Store the experiment (once; a new ``name`` replaces the old) and its draws, in one
    transaction."""
    with immediate(db):
        row = db.execute("SELECT name FROM experiments WHERE id = ?", [experiment_id]).fetchone()
        if row is None:
            db.execute(
                "INSERT INTO experiments (id, name, created_at, config) VALUES (?, ?, ?, ?)",
                [experiment_id, name, _CLOCK.now_iso(), json.dumps(config, ensure_ascii=False)],
            )
        elif name and row[0] != name:
            db.execute("UPDATE experiments SET name = ? WHERE id = ?", [name, experiment_id])
        for d in design:
            db.execute(
                "INSERT OR IGNORE INTO experiment_draws (experiment_id, draw, seed, participants, initiator, icebreaker)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    experiment_id,
                    d.index,
                    d.seed,
                    json.dumps(list(d.participants)),
                    d.initiator,
                    d.icebreaker,
                ],
            )


def run_states(db: sqlite_utils.Database, experiment_id: str) -> dict[tuple[int, str], RunState]:
    """Every run row of the experiment by (draw, condition)."""
    return {
        (r[0], r[1]): (r[2], r[3], r[4], r[5])
        for r in db.execute(
            "SELECT r.draw, r.condition, r.status, s.pid, s.host, s.status"
            " FROM experiment_runs r LEFT JOIN sessions s ON s.id = r.session_id"
            " WHERE r.experiment_id = ?",
            [experiment_id],
        ).fetchall()
    }


def mark(
    db: sqlite_utils.Database,
    experiment_id: str,
    draw: int,
    condition: str,
    status: domain.SessionStatus,
    session_id: str | None,
    error: str | None,
) -> None:
    """Write a run's status and session; an attempt counts when it starts (``running``), and an
    earlier error is kept unless a new one replaces it."""
    with immediate(db):
        db.execute(
            "INSERT INTO experiment_runs (experiment_id, draw, condition, session_id, status, attempts, error, updated_at)"
            " VALUES (?, ?, ?, ?, ?, 1, ?, ?)"
            " ON CONFLICT (experiment_id, draw, condition) DO UPDATE SET session_id = excluded.session_id,"
            " status = excluded.status, updated_at = excluded.updated_at,"
            " error = COALESCE(excluded.error, experiment_runs.error),"
            " attempts = experiment_runs.attempts + (excluded.status = 'running')",
            [experiment_id, draw, condition, session_id, status, error, _CLOCK.now_iso()],
        )


def forget_attempt(
    db: sqlite_utils.Database, experiment_id: str, draw: int, condition: str
) -> None:
    """Delete the session of an earlier attempt (its error stays in the run's row), so a rerun
    leaves one session per draw and condition.

    Its status does not matter: a job is redone only when its run row is not ``finished``,
    and a session can have finished while its run row did not (the process died between the
    two writes). Kept, it would count next to the new one.
    """
    row = db.execute(
        "SELECT session_id FROM experiment_runs WHERE experiment_id = ? AND draw = ? AND condition = ?",
        [experiment_id, draw, condition],
    ).fetchone()
    if row and row[0]:
        with immediate(db):
            db.execute("DELETE FROM sessions WHERE id = ?", [row[0]])


def forget_orphans(db: sqlite_utils.Database, experiment_id: str, k: int, n: int) -> None:
    """Delete the sessions of shard ``k/n``'s draws that no run row names and that no report may
    count: those that did not finish, and any of a draw this database has run rows for (an
    earlier attempt whose run row has since named another session).

    Only a version that wrote a session before its run row leaves such sessions; sessions
    imported from elsewhere (finished, of draws never run here) are left alone.
    """
    with immediate(db):
        db.execute(
            "DELETE FROM sessions WHERE experiment_id = :x AND draw % :n = :k"
            " AND id NOT IN (SELECT session_id FROM experiment_runs"
            "  WHERE experiment_id = :x AND session_id IS NOT NULL)"
            " AND (status != 'finished' OR draw IN"
            "  (SELECT draw FROM experiment_runs WHERE experiment_id = :x))",
            {"x": experiment_id, "n": n, "k": k},
        )


def alive_elsewhere(pid: int | None, host: str | None) -> bool:
    """A run left ``running`` by another process that is still alive on this machine."""
    return bool(pid) and pid != os.getpid() and host == socket.gethostname() and alive(pid or 0)
