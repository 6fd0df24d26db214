"""SessionReader: read saved sessions back (for `playground sessions`, `show`, replay and the GUI).

A session is read inside one snapshot (a recorder may be writing it), and a run whose process is
gone is shown as interrupted, without writing (see :mod:`playground.storage.database`).
"""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils
from pydantic import ValidationError

from playground import errors, events
from playground.storage.database import as_read, dead_sessions, snapshot

#: How many candidates an ambiguous id prefix lists.
AMBIGUOUS_SHOWN = 4
JSON_COLUMNS = {
    "config",
    "persona",
    "proactivity",
    "stimuli",
    "distribution",
    "reasons_for",
    "reasons_against",
    "heuristics",
    "profile",
}


def _row(cursor_row: tuple[Any, ...], names: list[str]) -> dict[str, Any]:
    out = {}
    for name, value in zip(names, cursor_row, strict=True):
        if name in JSON_COLUMNS and isinstance(value, str):
            value = json.loads(value)
        out[name] = value
    return out


class SessionReader:
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [_row(r, names) for r in cur.fetchall()]

    def list_sessions(self, *, limit: int = 200) -> list[dict[str, Any]]:
        with snapshot(self.db):
            dead = dead_sessions(self.db)
            rows = self._query(
                "SELECT s.id, s.created_at, s.status, s.engine, s.model, s.seed, s.condition, s.calls,"
                " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS messages,"
                " (SELECT group_concat(name, ', ') FROM participants p WHERE p.session_id = s.id) AS participants"
                " FROM sessions s ORDER BY s.created_at DESC LIMIT ?",
                [limit],
            )
        return [as_read(r, dead) for r in rows]

    def resolve(self, session_id: str) -> str:
        """The full id of a session given its id or a unique prefix of it.

        The prefix is matched literally (``%`` and ``_`` are characters like any other).

        Raises:
            SessionNotFound: no such id, or a prefix shared by several sessions (the message lists
                a few of them, newest first, with their date and participants).
        """
        sid = session_id.strip()
        if sid and self.db.execute("SELECT 1 FROM sessions WHERE id = ?", [sid]).fetchone():
            return sid
        matches = (
            self._query(
                "SELECT s.id, s.created_at,"
                " (SELECT group_concat(name, ', ') FROM participants p WHERE p.session_id = s.id)"
                " AS participants"
                " FROM sessions s WHERE substr(s.id, 1, ?) = ? ORDER BY s.created_at DESC",
                [len(sid), sid],
            )
            if sid
            else []
        )
        if len(matches) == 1:
            return str(matches[0]["id"])
        if not matches:
            raise errors.SessionNotFound(f"no session {session_id!r} in this database")
        shown = "; ".join(
            f"{m['id']} ({str(m['created_at'])[:16].replace('T', ' ')}, {m['participants'] or 'nobody'})"
            for m in matches[:AMBIGUOUS_SHOWN]
        )
        more = len(matches) - AMBIGUOUS_SHOWN
        raise errors.SessionNotFound(
            f"ambiguous prefix {session_id!r}: {len(matches)} session ids start with it;"
            f" give more of the id: {shown}" + (f"; and {more} more" if more > 0 else "")
        )

    def session_row(self, session_id: str) -> dict[str, Any]:
        """One row of ``sessions``; a unique prefix of an id is accepted.

        A run whose process is gone reads as interrupted (:func:`as_read`).

        Raises:
            SessionNotFound: no such id, or an ambiguous prefix.
        """
        with snapshot(self.db):
            row = self._query("SELECT * FROM sessions WHERE id = ?", [self.resolve(session_id)])[0]
            return as_read(row, dead_sessions(self.db))

    def participants(self, session_id: str) -> list[dict[str, Any]]:
        return self._query(
            "SELECT * FROM participants WHERE session_id = ? ORDER BY joined_at, rowid",
            [session_id],
        )

    def hidden_states(
        self, session_id: str, participant: str | None = None
    ) -> list[dict[str, Any]]:
        """The simulated users' hidden states (one row per message of theirs), in message order;
        only ``participant``'s when given."""
        sql = "SELECT * FROM hidden_states WHERE session_id = ?"
        params: list[Any] = [session_id]
        if participant is not None:
            sql += " AND participant = ?"
            params.append(participant)
        return self._query(sql + " ORDER BY message_id", params)

    def trigger_timings(self, session_id: str) -> list[events.TriggerTimed]:
        """Where each trigger's time went (its ``trigger_timed`` event from the event log), by
        step; empty for a session recorded without an event log or before triggers were timed.
        A unique prefix of an id is accepted.

        Raises:
            SessionNotFound: no such id, or an ambiguous prefix.
            PlaygroundError: a timing event cannot be read.
        """
        with snapshot(self.db):
            sid = self.resolve(session_id)
            rows = self.db.execute(
                "SELECT seq, data FROM events WHERE session_id = ? AND kind = 'trigger_timed'"
                " ORDER BY step, seq",
                [sid],
            ).fetchall()
        out = []
        for seq, data in rows:
            try:
                out.append(events.TriggerTimed.model_validate_json(data))
            except ValidationError as exc:
                raise errors.PlaygroundError(
                    f"event {seq} (trigger_timed) of session {sid} cannot be read: {exc}"
                ) from exc
        return out

    def load(self, session_id: str) -> dict[str, Any]:
        """Everything about one session; keys ``session``, ``participants``, ``memories``, ``messages``,
        ``thoughts`` (each with its ``evaluations``), ``annotations``, ``labels``, ``decisions``,
        ``predictions`` (next-speaker), ``hidden_states`` (simulated users') and
        ``condition_changes`` (how the condition followed the seats).

        All of it is read in one snapshot: a session still being recorded comes back as it
        stood at one moment, every message with its thought.

        Raises:
            SessionNotFound: no such id (a unique prefix of an id is accepted).
        """
        with snapshot(self.db):
            return self._load(session_id)

    def _load(self, session_id: str) -> dict[str, Any]:
        session = self.session_row(session_id)
        sid = session["id"]
        thoughts = self._query("SELECT * FROM thoughts WHERE session_id = ? ORDER BY id", [sid])
        evaluations = self._query(
            "SELECT * FROM evaluations WHERE session_id = ? ORDER BY id", [sid]
        )
        by_thought: dict[int, list[dict[str, Any]]] = {}
        for ev in evaluations:
            by_thought.setdefault(ev["thought_id"], []).append(ev)
        for t in thoughts:
            t["evaluations"] = by_thought.get(t["id"], [])
        return {
            "session": session,
            "participants": self.participants(sid),
            "memories": self._query(
                "SELECT * FROM memories WHERE session_id = ? ORDER BY id", [sid]
            ),
            "messages": self._query(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id", [sid]
            ),
            "thoughts": thoughts,
            "annotations": self._query(
                "SELECT * FROM annotations WHERE session_id = ? ORDER BY id", [sid]
            ),
            "labels": self._query("SELECT * FROM labels WHERE session_id = ? ORDER BY id", [sid]),
            "decisions": self._query(
                "SELECT * FROM decisions WHERE session_id = ? ORDER BY id", [sid]
            ),
            "predictions": [
                {**p, "probabilities": json.loads(p["probabilities"] or "{}")}
                for p in self._query(
                    "SELECT * FROM predictions WHERE session_id = ? ORDER BY message_id, step",
                    [sid],
                )
            ],
            "hidden_states": self.hidden_states(sid),
            "condition_changes": self.condition_changes(sid),
        }

    def condition_changes(self, session_id: str) -> list[dict[str, Any]]:
        """How the session's condition followed its seats: each change's ``step``, ``at``,
        ``old``, ``new`` and ``why``, in order (from the event log; none without one)."""
        rows = self.db.execute(
            "SELECT step, at, json_extract(data, '$.old'),"
            " json_extract(data, '$.new'), json_extract(data, '$.why') FROM events"
            " WHERE session_id = ? AND kind = 'condition_changed' ORDER BY seq",
            [session_id],
        ).fetchall()
        return [dict(zip(("step", "at", "old", "new", "why"), r, strict=True)) for r in rows]
