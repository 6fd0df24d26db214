"""Import a JSON Lines export (``docs/export-format.md``) into a session database.

Each conversation is written in one transaction. Ids never overwrite: a session id already in the
database gets a new one, and every reference to it is rewritten.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlite_utils

from playground import clock, errors, export
from playground.storage.schema import legacy_best_score

log = logging.getLogger(__name__)

REQUIRED_KEYS = ("session", "participants", "messages")
LIST_KEYS = (
    "participants",
    "memories",
    "messages",
    "thoughts",
    "decisions",
    "predictions",
    "hidden_states",
    "storm_dialogues",
    "storm_judgements",
    "ratings",
    "judge_scores",
    "turn_marks",
    "preferences",
    "events",
)
_STAMPED_ID = re.compile(r"\d{8}-\d{6}-[0-9A-Za-z]+")
_CLOCK = clock.SystemClock()


class LineError(errors.PlaygroundError):
    """One line of the file is unusable (the message names what is wrong)."""


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their numbers (1-based)."""
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise LineError(f"line {number}: not UTF-8 text ({exc.reason})") from exc
                if text.strip():
                    yield number, text
    except OSError as exc:
        raise errors.PlaygroundError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _parse(number: int, text: str) -> dict[str, Any]:
    if number == 1 and text.strip() == "[":
        raise LineError(
            "line 1: this looks like a --format json export (one JSON array); import reads"
            " JSON Lines: export with --format jsonl"
        )
    try:
        record = json.loads(text)
    except ValueError as exc:
        raise LineError(f"line {number}: not JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise LineError(f"line {number}: expected a JSON object, found {type(record).__name__}")
    if "format" not in record:
        raise LineError(f"line {number}: missing key 'format'")
    name, _, version = str(record["format"]).partition("/")
    if name != export.FORMAT_NAME or not version.isdigit():
        raise LineError(
            f"line {number}: not a Thought Playground export (format {record['format']!r}, "
            f"expected {export.FORMAT!r})"
        )
    if int(version) > export.FORMAT_VERSION:
        raise LineError(
            f"line {number}: written by a newer version of the app (format {record['format']!r};"
            f" this one reads up to {export.FORMAT!r})"
        )
    for key in REQUIRED_KEYS:
        if key not in record:
            raise LineError(f"line {number}: missing key {key!r}")
    if not isinstance(record["session"], dict):
        raise LineError(f"line {number}: 'session' must be an object")
    sid = record["session"].get("id")
    if not isinstance(sid, str) or not sid.strip():
        raise LineError(f"line {number}: missing key 'session.id'")
    for key in LIST_KEYS:
        value = record.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise LineError(f"line {number}: {key!r} must be a list of objects")
    return record


class Importer:
    """Imports export files into one database, mapping clashing session ids.

    Args:
        db: an open session database (see :func:`playground.storage.open_database`).
    """

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self.id_map: dict[str, str] = {}
        self.skipped_preferences = 0
        self.dropped_parents = 0
        self._columns: dict[str, dict[str, bool]] = {}
        self._file_ids: set[str] = set()
        self._pending_children: dict[str, list[str]] = {}

    def warnings(self) -> list[str]:
        """Lines worth telling the user once the import is over."""
        out = []
        if self.skipped_preferences:
            out.append(
                f"skipped {self.skipped_preferences} pairwise preference(s) whose other session is"
                " neither in the file nor in the database"
            )
        if self.dropped_parents:
            out.append(
                f"{self.dropped_parents} fork(s) lost the link to their parent session, which is"
                " neither in the file nor in the database"
            )
        return out

    # -- the file --------------------------------------------------------------------------------
    def import_lines(self, path: str | Path) -> Iterator[tuple[str, str]]:
        """Import a file, yielding ``(id in file, id in db)`` after each conversation is committed.

        Raises:
            PlaygroundError: missing or empty file, or a bad line (named); the conversations
                before it stay imported and the message says how many.
        """
        path = Path(path)
        if not path.is_file():
            raise errors.PlaygroundError(f"no file {path}")
        if not self._prescan(path):
            raise errors.PlaygroundError(f"{path}: the file is empty; nothing to import")
        done = 0
        try:
            for number, text in _lines(path):
                record = _parse(number, text)
                file_id = record["session"]["id"]
                try:
                    db_id = self._import_record(number, record)
                except sqlite3.Error as exc:
                    raise LineError(
                        f"line {number}: session {file_id}: cannot be stored ({exc});"
                        " nothing of it was written"
                    ) from exc
                self.id_map[file_id] = db_id
                done += 1
                yield file_id, db_id
        except errors.PlaygroundError as exc:
            kept = (
                f"; the {done} conversation{'s' if done != 1 else ''} before it"
                f" {'were' if done != 1 else 'was'} imported and kept"
                if done
                else "; nothing was imported"
            )
            raise errors.PlaygroundError(f"{path}: {exc}{kept}") from exc
        for warning in self.warnings():
            log.warning("%s: %s", path, warning)

    def _prescan(self, path: Path) -> bool:
        """Collect every session id the file holds, so references to later lines can be mapped.

        Returns:
            Whether the file has any non-blank line.
        """
        seen = False
        try:
            for _, text in _lines(path):
                seen = True
                try:
                    sid = json.loads(text).get("session", {}).get("id")
                except (ValueError, AttributeError):
                    continue  # reported, with its line number, when the import reaches it
                if isinstance(sid, str):
                    self._file_ids.add(sid)
        except LineError:
            return True  # reported, with its line number, when the import reaches it
        return seen

    # -- one conversation ------------------------------------------------------------------------
    def _exists(self, session_id: str) -> bool:
        row = self.db.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id]).fetchone()
        return row is not None

    def _new_id(self, file_id: str) -> str:
        stamp = file_id[:15] if _STAMPED_ID.fullmatch(file_id) else None
        if stamp is None:
            now = _CLOCK.now_iso()
            stamp = f"{now[0:4]}{now[5:7]}{now[8:10]}-{now[11:13]}{now[14:16]}{now[17:19]}"
        for _ in range(1000):
            candidate = f"{stamp}-{secrets.token_hex(2)}"
            if candidate not in self._file_ids and not self._exists(candidate):
                return candidate
        raise errors.PlaygroundError(f"no free session id near {file_id}")

    def _map_session(self, session_id: str) -> str | None:
        """Where a reference to another session points in this database; None when nowhere yet."""
        if session_id in self.id_map:
            return self.id_map[session_id]
        if session_id in self._file_ids:
            return None  # imported later from this file; linked then
        return session_id if self._exists(session_id) else None

    def _import_record(self, number: int, record: dict[str, Any]) -> str:
        session = dict(record["session"])
        file_id = session["id"]
        db_id = self._new_id(file_id) if self._exists(file_id) else file_id
        renames = {k: v for k, v in {**self.id_map, file_id: db_id}.items() if k != v}
        where = f"line {number}"
        # sqlite-utils commits each execute() on its own unless a transaction is open: open one.
        with self.db.atomic():
            session["id"] = db_id
            if session.get("status") == "running":
                # The process that ran it is on another machine or gone: it can never continue.
                session["status"] = "interrupted"
                session["end_reason"] = session.get("end_reason") or "imported while still running"
            parent = session.get("parent_id")
            if parent is not None:
                session["parent_id"] = self._map_session(parent)
                if session["parent_id"] is None:
                    if parent in self._file_ids and parent not in self.id_map:
                        self._pending_children.setdefault(parent, []).append(db_id)
                    else:
                        self.dropped_parents += 1
            self._ensure_experiment(session, record.get("experiment"), where)
            self._insert("sessions", session, {}, f"{where}: session")
            for child in self._pending_children.pop(file_id, []):
                self.db.execute("UPDATE sessions SET parent_id = ? WHERE id = ?", [db_id, child])
            own = {"session_id": db_id}
            for i, row in enumerate(record["participants"]):
                self._insert("participants", row, own, f"{where}: participants[{i}]")
            for i, row in enumerate(record.get("memories", [])):
                self._insert("memories", row, own, f"{where}: memories[{i}]")
            for i, row in enumerate(record["messages"]):
                ctx = f"{where}: messages[{i}]"
                self._insert("messages", row, own, ctx)
                for key in ("annotations", "labels"):
                    for j, note in enumerate(_list(row.get(key, []), f"{ctx}.{key}")):
                        extra = {**own, "message_id": row.get("id")}
                        self._insert(key, note, extra, f"{ctx}.{key}[{j}]")
            for i, row in enumerate(record.get("thoughts", [])):
                ctx = f"{where}: thoughts[{i}]"
                self._insert("thoughts", row, own, ctx)
                for j, ev in enumerate(_list(row.get("evaluations", []), f"{ctx}.evaluations")):
                    extra = {**own, "thought_id": row.get("id")}
                    self._insert("evaluations", ev, extra, f"{ctx}.evaluations[{j}]")
            for i, row in enumerate(record.get("decisions", [])):
                if isinstance(row, dict) and "best_score" not in row:  # exported before it was kept
                    best = legacy_best_score(
                        row.get("score"), row.get("reason", ""), row.get("policy")
                    )
                    row = {**row, "best_score": best}
                self._insert("decisions", row, own, f"{where}: decisions[{i}]")
            for i, row in enumerate(record.get("predictions", [])):
                self._insert("predictions", row, own, f"{where}: predictions[{i}]")
            for i, row in enumerate(record.get("hidden_states", [])):
                self._insert("hidden_states", row, own, f"{where}: hidden_states[{i}]")
            for key in ("storm_dialogues", "storm_judgements"):
                for i, row in enumerate(record.get(key, [])):
                    self._insert(key, row, own, f"{where}: {key}[{i}]")
            for i, row in enumerate(record.get("events", [])):
                row = dict(row)
                if renames and "data" in row:
                    row["data"] = _rename(row["data"], renames)
                self._insert("events", row, own, f"{where}: events[{i}]")
            self._import_ratings(record, own, where, file_id, db_id)
        return db_id

    def _import_ratings(
        self, record: dict[str, Any], own: dict[str, Any], where: str, file_id: str, db_id: str
    ) -> None:
        # Assignments belong to the database they were planned in, so they are never imported.
        unplanned = {**own, "assignment_id": None}
        for i, row in enumerate(record.get("ratings", [])):
            self._ensure_rater(row, f"{where}: ratings[{i}]")
            self._insert("ratings", row, unplanned, f"{where}: ratings[{i}]")
        for i, row in enumerate(record.get("judge_scores", [])):
            self._ensure_rater(row, f"{where}: judge_scores[{i}]")
            self._insert("judge_scores", row, own, f"{where}: judge_scores[{i}]")
        for i, row in enumerate(record.get("turn_marks", [])):
            self._ensure_rater(row, f"{where}: turn_marks[{i}]")
            self._insert("turn_marks", row, own, f"{where}: turn_marks[{i}]")
        for i, row in enumerate(record.get("preferences", [])):
            ctx = f"{where}: preferences[{i}]"
            ids = {}
            for key in ("first_id", "second_id", "chosen_id"):
                value = row.get(key)
                if not isinstance(value, str):
                    raise LineError(f"{ctx}: missing key {key!r}")
                ids[key] = value
            others = {v for v in ids.values() if v != file_id}
            if file_id not in (ids["first_id"], ids["second_id"]) or len(others) != 1:
                raise LineError(f"{ctx}: does not involve this session and exactly one other")
            other = others.pop()
            if other in self._file_ids and other not in self.id_map:
                continue  # the same preference is in the other session's line: inserted there
            target = self._map_session(other)
            if target is None:
                self.skipped_preferences += 1
                continue
            both = {file_id: db_id, other: target}
            self._ensure_rater(row, ctx)
            values = {k: both[v] for k, v in ids.items()}
            self._insert("preferences", row, {**values, "assignment_id": None}, ctx)

    def _ensure_rater(self, row: dict[str, Any], ctx: str) -> None:
        rater = row.get("rater")
        if not isinstance(rater, str) or not rater.strip():
            raise LineError(f"{ctx}: missing key 'rater'")
        self.db.execute(
            "INSERT OR IGNORE INTO raters (id, created_at) VALUES (?, ?)", [rater, _CLOCK.now_iso()]
        )

    def _ensure_experiment(self, session: dict[str, Any], experiment: Any, where: str) -> None:
        exp_id = session.get("experiment_id")
        if exp_id is None:
            return
        if self.db.execute("SELECT 1 FROM experiments WHERE id = ?", [exp_id]).fetchone():
            return  # shared by id, like raters
        row = experiment if isinstance(experiment, dict) and experiment.get("id") == exp_id else {}
        fallback = {"id": exp_id, "created_at": session.get("created_at")}
        self._insert("experiments", {**fallback, **row}, {}, f"{where}: experiment")

    # -- rows --------------------------------------------------------------------------------------
    def _table_columns(self, table: str) -> dict[str, bool]:
        """Column name → required (NOT NULL, no default, not an automatic row id)."""
        if table not in self._columns:
            info = self.db.execute(f"PRAGMA table_info({table})").fetchall()
            automatic = table in export.SURROGATE_ID_TABLES
            self._columns[table] = {
                name: bool(notnull) and default is None and not (pk and automatic)
                for _, name, _, notnull, default, pk in info
            }
        return self._columns[table]

    def _insert(self, table: str, row: dict[str, Any], forced: dict[str, Any], ctx: str) -> None:
        columns = self._table_columns(table)
        skip = {"id"} if table in export.SURROGATE_ID_TABLES else set()
        values = {k: v for k, v in row.items() if k in columns and k not in skip}
        values.update(forced)
        for name, required in columns.items():
            if required and values.get(name) is None:
                raise LineError(f"{ctx}: missing key {name!r}")
        json_cols = export.JSON_COLUMNS.get(table, frozenset())
        for name, value in values.items():
            if name in json_cols:
                if value is not None:
                    # the event log is compact, as the recorder writes it (pydantic's JSON)
                    compact = (",", ":") if table == "events" else None
                    values[name] = json.dumps(value, ensure_ascii=False, separators=compact)
            elif isinstance(value, dict | list):
                raise LineError(f"{ctx}: {name!r} must be a single value, not a list or object")
        names = list(values)
        try:
            self.db.execute(
                f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                [values[n] for n in names],
            )
        except sqlite3.IntegrityError as exc:
            # Constraints are checked per statement, so this row is the one at fault.
            raise LineError(f"{ctx}: rejected by the database ({exc})") from exc


def _list(value: Any, ctx: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise LineError(f"{ctx} must be a list of objects")
    return value


def _rename(value: Any, renames: dict[str, str]) -> Any:
    """Every string equal to a renamed session id, anywhere in an event's data, gets the new id."""
    if isinstance(value, str):
        return renames.get(value, value)
    if isinstance(value, list):
        return [_rename(v, renames) for v in value]
    if isinstance(value, dict):
        return {k: _rename(v, renames) for k, v in value.items()}
    return value


def import_file(db: sqlite_utils.Database, path: str | Path) -> list[tuple[str, str]]:
    """Read a JSON Lines export into ``db``, one transaction per conversation.

    Args:
        db: an open session database.
        path: the export file.

    Returns:
        ``(id in the file, id in the database)`` per conversation; they differ when the id was taken.

    Raises:
        PlaygroundError: missing or empty file, a line that is not JSON, a wrong format marker or
            version, a missing key (line and key named). Conversations before it stay imported.
    """
    return list(Importer(db).import_lines(path))
