"""The session library: list, search, filter and delete saved sessions; blueprints for "new like this".

Everything here works on an open database (see :func:`playground.storage.open_database`) and
never imports Qt: the GUI's library dialog and the command line share it. What reads several
statements reads them in one snapshot, and a run whose process is gone shows as interrupted
(see :mod:`playground.storage.database`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlite_utils
from pydantic import ValidationError

from playground import domain, errors
from playground.settings import ProactivitySettings, Settings
from playground.storage.database import DEAD_REASON, dead_sessions, snapshot


@dataclass(frozen=True)
class Participant:
    """Someone in a saved session, in join order."""

    name: str
    kind: str  # "ai" | "human" | "simulated"


@dataclass(frozen=True)
class SessionSummary:
    """One row of the library: what a saved session was, how long and how big it got."""

    id: str
    created_at: str
    status: domain.SessionStatus
    end_reason: str | None
    condition: str | None
    engine: str
    model: str
    seed: int | None
    preset: str | None
    participants: list[Participant]
    turns: int
    duration: float | None  # seconds
    calls: int
    tokens: int  # prompt + completion
    ratings: int
    parent_id: str | None
    fork_seq: int | None
    fork_message: int | None
    experiment_id: str | None

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.participants]


@dataclass(frozen=True)
class BlueprintParticipant:
    """A participant as it was when the session started."""

    name: str
    kind: str
    persona: domain.Persona | None  # the snapshot; None for people
    proactivity: ProactivitySettings | None
    #: Turn-taking policy (its latest value: a change during the session is kept).
    policy: domain.Policy = "inner-thoughts"


@dataclass(frozen=True)
class Blueprint:
    """What "a new session with the same settings" needs. The API key is never stored."""

    session_id: str
    settings: Settings
    preset: str
    seed: int
    condition: str | None
    participants: list[BlueprintParticipant] = field(default_factory=list)
    icebreaker: str | None = None

    @property
    def personas(self) -> list[domain.Persona]:
        """The AI participants' persona snapshots, in join order."""
        return [p.persona for p in self.participants if p.persona is not None and p.kind == "ai"]

    @property
    def policies(self) -> dict[str, domain.Policy]:
        """Each AI participant's turn-taking policy, by name."""
        return {p.name: p.policy for p in self.participants if p.kind == "ai"}


_SUMMARY_SQL = """
SELECT s.id, s.created_at, s.updated_at, s.finished_at, s.status, s.end_reason, s.condition,
       s.engine, s.model, s.seed, s.preset, s.calls, s.prompt_tokens + s.completion_tokens,
       s.parent_id, s.fork_seq, s.fork_message, s.experiment_id,
       COALESCE(m.n, 0), m.last_at, p.people,
       COALESCE(rc.n, 0) + COALESCE(rq.n, 0) + COALESCE(pf.n, 0)
FROM sessions s
LEFT JOIN (SELECT session_id, COUNT(*) AS n, MAX(posted_at) AS last_at
           FROM messages GROUP BY session_id) m ON m.session_id = s.id
LEFT JOIN (SELECT session_id, json_group_array(json_array(name, kind)) AS people
           FROM (SELECT session_id, name, kind FROM participants ORDER BY session_id, joined_at, rowid)
           GROUP BY session_id) p ON p.session_id = s.id
LEFT JOIN (SELECT session_id, COUNT(DISTINCT rater) AS n FROM ratings
           WHERE instrument = 'conversation' GROUP BY session_id) rc ON rc.session_id = s.id
LEFT JOIN (SELECT session_id, COUNT(DISTINCT rater) AS n FROM ratings
           WHERE instrument = 'participant' GROUP BY session_id) rq ON rq.session_id = s.id
LEFT JOIN (SELECT sid, COUNT(*) AS n
           FROM (SELECT first_id AS sid FROM preferences UNION ALL SELECT second_id FROM preferences)
           GROUP BY sid) pf ON pf.sid = s.id
"""


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return max(
            0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
        )
    except ValueError:
        return None


def list_sessions(
    db: sqlite_utils.Database,
    *,
    search: str | None = None,
    status: str | None = None,
    condition: str | None = None,
    engine: str | None = None,
    limit: int | None = None,
) -> list[SessionSummary]:
    """Saved sessions, newest first, with their sizes, usage and number of ratings.

    One query for the whole list, whatever the number of sessions.

    Args:
        db: an open session database.
        search: matches a participant's name or the text of any message (case-insensitive).
        status: only sessions with exactly this status.
        condition: only sessions with exactly this condition.
        engine: only sessions with exactly this ``sessions.engine`` value.
        limit: at most this many sessions.
    """
    where: list[str] = []
    params: list[Any] = []
    if search and search.strip():
        pattern = _like(search.strip())
        where.append(
            "s.id IN (SELECT session_id FROM participants WHERE name LIKE ? ESCAPE '\\'"
            " UNION SELECT session_id FROM messages WHERE text LIKE ? ESCAPE '\\')"
        )
        params += [pattern, pattern]
    if status in ("running", "interrupted"):
        # A run whose process is gone shows as interrupted: filter it as it shows.
        dead = sorted(dead_sessions(db))
        marks = ", ".join("?" * len(dead))
        if status == "running":
            where.append(f"s.status = 'running' AND s.id NOT IN ({marks})")
        else:
            where.append(f"(s.status = 'interrupted' OR s.id IN ({marks}))")
        params += dead
        status = None
    for column, value in (("status", status), ("condition", condition), ("engine", engine)):
        if value is not None:
            where.append(f"s.{column} = ?")
            params.append(value)
    return _summaries(db, where, params, limit)


def _summaries(
    db: sqlite_utils.Database, where: list[str], params: list[Any], limit: int | None
) -> list[SessionSummary]:
    sql = _SUMMARY_SQL
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY s.created_at DESC, s.id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params = [*params, int(limit)]
    with snapshot(db):
        dead = dead_sessions(db)
        rows = db.execute(sql, params).fetchall()
    return [_summary(row, dead) for row in rows]


def _summary(row: tuple[Any, ...], dead: set[str]) -> SessionSummary:
    (sid, created, updated, finished, status, reason, condition, engine, model, seed) = row[:10]
    if status == "running" and sid in dead:
        status, reason = "interrupted", DEAD_REASON
    (preset, calls, tokens, parent, fork_seq, fork_msg, experiment, turns, last_at) = row[10:19]
    people, ratings = row[19:21]
    return SessionSummary(
        id=sid,
        created_at=created,
        status=status,
        end_reason=reason,
        condition=condition,
        engine=engine,
        model=model,
        seed=seed,
        preset=preset,
        participants=[Participant(n, k) for n, k in json.loads(people or "[]")],
        turns=int(turns),
        duration=_seconds(created, finished or last_at or updated),
        calls=int(calls or 0),
        tokens=int(tokens or 0),
        ratings=int(ratings),
        parent_id=parent,
        fork_seq=fork_seq,
        fork_message=fork_msg,
        experiment_id=experiment,
    )


def count_sessions(db: sqlite_utils.Database) -> int:
    """How many sessions the database holds."""
    return int(db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])


def facets(db: sqlite_utils.Database) -> dict[str, list[str]]:
    """The distinct statuses, conditions and engines present (for filter menus), sorted."""
    out: dict[str, list[str]] = {}
    with snapshot(db):
        for column in ("status", "condition", "engine"):
            rows = db.execute(
                f"SELECT DISTINCT {column} FROM sessions WHERE {column} IS NOT NULL ORDER BY {column}"
            ).fetchall()
            out[column] = [r[0] for r in rows]
        dead = dead_sessions(db)
        if dead:  # shown as interrupted (see list_sessions)
            running = {r[0] for r in db.execute("SELECT id FROM sessions WHERE status = 'running'")}
            statuses = set(out["status"]) | {"interrupted"}
            if running <= dead:
                statuses.discard("running")
            out["status"] = sorted(statuses)
    return out


def summary(db: sqlite_utils.Database, session_id: str) -> SessionSummary:
    """The library row of one session (exact id).

    Raises:
        SessionNotFound: no session with exactly this id.
    """
    rows = _summaries(db, ["s.id = ?"], [session_id], None)
    if not rows:
        raise errors.SessionNotFound(f"no session {session_id!r} in this database")
    return rows[0]


def message_lines(db: sqlite_utils.Database, session_id: str) -> list[tuple[int, str, str]]:
    """Each message of one session (exact id) as ``(id, speaker, text)``, in order; nothing else
    of it is read."""
    rows = db.execute(
        "SELECT id, speaker, text FROM messages WHERE session_id = ? ORDER BY id", [session_id]
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def sessions_with_messages(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Sessions holding at least one message, newest first (for a researcher to choose from):
    ``{id, created_at, condition, status, experiment, messages, participants}``."""
    rows = db.execute(
        "SELECT s.id, s.created_at, s.condition, s.status, s.experiment_id,"
        " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS n,"
        " (SELECT group_concat(name, ', ') FROM participants p WHERE p.session_id = s.id)"
        " FROM sessions s ORDER BY s.created_at DESC"
    ).fetchall()
    keys = ("id", "created_at", "condition", "status", "experiment", "messages", "participants")
    return [dict(zip(keys, r, strict=True)) for r in rows if r[5]]


def human_sessions(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Sessions a person joined, newest first, one row per person in it:
    ``{id, created_at, human, others}`` (``others``: the other participants' names)."""
    rows = db.execute(
        "SELECT s.id, s.created_at, p.name,"
        " (SELECT group_concat(o.name, ', ') FROM participants o"
        "   WHERE o.session_id = s.id AND o.kind <> 'human') AS others"
        " FROM sessions s JOIN participants p ON p.session_id = s.id AND p.kind = 'human'"
        " ORDER BY s.created_at DESC, p.name"
    ).fetchall()
    return [{"id": r[0], "created_at": r[1], "human": r[2], "others": r[3] or ""} for r in rows]


# Children first, so that no statement ever leaves a row pointing at a deleted one (thoughts
# reference messages through `expressed_in` without a cascade).
_DELETE_ORDER = (
    "evaluations",
    "decisions",
    "annotations",
    "labels",
    "turn_marks",
    "thoughts",
    "memories",
    "messages",
    "events",
    "ratings",
    "participants",
)


@dataclass(frozen=True)
class ExperimentSeat:
    """Where a session sits in an experiment: which one, and which of its conversations."""

    experiment_id: str
    name: str | None
    draw: int | None  # None: the session names the experiment but no run row names it
    condition: str | None
    conversations: int  # the experiment's run rows (its conversations started)


def experiment_seat(db: sqlite_utils.Database, session_id: str) -> ExperimentSeat | None:
    """The experiment ``session_id`` belongs to (None: none), as the Delete question says it."""
    row = db.execute(
        "SELECT s.experiment_id, e.name FROM sessions s LEFT JOIN experiments e"
        " ON e.id = s.experiment_id WHERE s.id = ? AND s.experiment_id IS NOT NULL",
        [session_id],
    ).fetchone()
    if row is None:
        return None
    xid, name = row
    run = db.execute(
        "SELECT draw, condition FROM experiment_runs WHERE experiment_id = ? AND session_id = ?",
        [xid, session_id],
    ).fetchone()
    (count,) = db.execute(
        "SELECT COUNT(*) FROM experiment_runs WHERE experiment_id = ?", [xid]
    ).fetchone()
    return ExperimentSeat(xid, name, run[0] if run else None, run[1] if run else None, int(count))


def delete_session(db: sqlite_utils.Database, session_id: str) -> None:
    """Delete a session and everything of it, in one transaction.

    Its ratings, turn marks, preferences and rating assignments go too; its forks stay, with no
    parent. A session still running (in this or another live process) is refused.

    Raises:
        SessionNotFound: no session with exactly this id.
        PlaygroundError: the session is still running.
    """
    row = db.execute("SELECT status FROM sessions WHERE id = ?", [session_id]).fetchone()
    if row is None:
        raise errors.SessionNotFound(f"no session {session_id!r} in this database")
    if row[0] == "running":
        raise errors.PlaygroundError(
            f"session {session_id} is still running; stop it before deleting it"
        )
    with db.conn:
        for table in _DELETE_ORDER:
            db.execute(f"DELETE FROM {table} WHERE session_id = ?", [session_id])
        db.execute(
            "DELETE FROM preferences WHERE first_id = ? OR second_id = ? OR chosen_id = ?",
            [session_id] * 3,
        )
        db.execute("DELETE FROM assignments WHERE session_a = ? OR session_b = ?", [session_id] * 2)
        db.execute("UPDATE sessions SET parent_id = NULL WHERE parent_id = ?", [session_id])
        db.execute("DELETE FROM sessions WHERE id = ?", [session_id])


def session_blueprint(db: sqlite_utils.Database, session_id: str) -> Blueprint:
    """The settings, participants and icebreaker of a saved session, to start a new one like it.

    Raises:
        SessionNotFound: no session with exactly this id.
        PlaygroundError: a stored snapshot no longer validates (names the session and the field).
    """
    with snapshot(db):
        return _blueprint(db, session_id)


def _blueprint(db: sqlite_utils.Database, session_id: str) -> Blueprint:
    row = db.execute(
        "SELECT config, preset, seed, condition FROM sessions WHERE id = ?", [session_id]
    ).fetchone()
    if row is None:
        raise errors.SessionNotFound(f"no session {session_id!r} in this database")
    config, preset, seed, condition = row
    try:
        settings = Settings.model_validate(json.loads(config or "{}"))
    except (ValidationError, ValueError) as exc:
        raise errors.PlaygroundError(
            f"session {session_id}: its saved settings are unreadable ({_first(exc)})"
        ) from exc
    people = []
    for name, kind, persona, proactivity, policy in db.execute(
        "SELECT name, kind, persona, proactivity, policy FROM participants WHERE session_id = ?"
        " ORDER BY joined_at, rowid",
        [session_id],
    ).fetchall():
        try:
            people.append(
                BlueprintParticipant(
                    name=name,
                    kind=kind,
                    persona=domain.Persona.model_validate_json(persona) if persona else None,
                    proactivity=ProactivitySettings.model_validate_json(proactivity)
                    if proactivity and proactivity != "null"
                    else None,
                    policy=policy if policy in domain.POLICIES else "inner-thoughts",
                )
            )
        except ValidationError as exc:
            raise errors.PlaygroundError(
                f"session {session_id}: the snapshot of participant {name} is unreadable ({_first(exc)})"
            ) from exc
    first = db.execute(
        "SELECT text FROM messages WHERE session_id = ? AND id = 1 AND origin = 'icebreaker'",
        [session_id],
    ).fetchone()
    return Blueprint(
        session_id=session_id,
        settings=settings,
        preset=preset or settings.preset,
        seed=settings.engine.seed if seed is None else int(seed),
        condition=condition,
        participants=people,
        icebreaker=first[0] if first else None,
    )


def _first(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        e = exc.errors()[0]
        return f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
    return str(exc)
