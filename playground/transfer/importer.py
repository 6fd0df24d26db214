"""Import a JSON Lines export (``docs/export-format.md``) into a session database.

Every line is checked against :mod:`playground.transfer.model` before anything of it is written
(:mod:`playground.transfer.lines`), and each conversation is written in one transaction, so a
refused line leaves no row.

Importing is idempotent. A conversation whose content is already in the database (imported
before, or recorded here and exported) is skipped: its content is compared with what ``export``
would write for the session of the same id, or for a copy made under a new id. A different
conversation under a taken id is refused unless ``as_new``, which imports it under a new id;
every reference to it is then rewritten.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import sqlite_utils

from playground import clock, errors
from playground.transfer import export
from playground.transfer.lines import LineError, parse_line, read_lines
from playground.transfer.model import ExportRecord
from playground.transfer.record_rows import TABLE_ORDER, content, rename_sessions, stored_rows
from playground.transfer.record_text import RecordError, loads
from playground.transfer.validation import validate_record

log = logging.getLogger(__name__)

_STAMPED_ID = re.compile(r"\d{8}-\d{6}-[0-9A-Za-z]+")
_CLOCK = clock.SystemClock()


class Outcome(NamedTuple):
    """What became of one conversation of the file."""

    file_id: str
    #: Its id in the database: the file's, a new one, or that of the copy already there.
    db_id: str
    #: False when the same conversation was already in the database (nothing was written).
    imported: bool


def _differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    return [key for key in mine if mine[key] != theirs.get(key)]


class Importer:
    """Imports export files into one database, mapping clashing session ids.

    Args:
        db: an open session database (see :func:`playground.storage.open_database`).
        as_new: a different conversation under an id the database already has is imported
            under a new id (without it, the import stops there and says so).
    """

    def __init__(self, db: sqlite_utils.Database, *, as_new: bool = False) -> None:
        self.db = db
        self.as_new = as_new
        self.id_map: dict[str, str] = {}
        self.skipped_preferences = 0
        self.dropped_parents = 0
        self._file_ids: set[str] = set()
        self._pending_children: dict[str, list[str]] = {}

    @property
    def conversations(self) -> int:
        """How many conversations the file holds (known once :meth:`import_lines` has begun)."""
        return len(self._file_ids)

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
    def import_lines(self, path: str | Path) -> Iterator[Outcome]:
        """Import a file, yielding what became of each conversation once it is committed.

        Raises:
            PlaygroundError: missing or empty file, a bad line (named with its field), or a
                different conversation under a taken id without ``as_new``; the conversations
                before it stay imported and the message says how many.
        """
        path = Path(path)
        if not path.is_file():
            raise errors.PlaygroundError(f"no file {path}")
        if not self._prescan(path):
            raise errors.PlaygroundError(f"{path}: the file is empty; nothing to import")
        imported = skipped = 0
        try:
            for number, text in read_lines(path):
                record = parse_line(number, text)
                try:
                    outcome = self._import_record(number, record)
                except sqlite3.Error as exc:
                    raise LineError(
                        f"line {number}: session {record.session.id}: cannot be stored ({exc});"
                        " nothing of it was written"
                    ) from exc
                self.id_map[outcome.file_id] = outcome.db_id
                imported += outcome.imported
                skipped += not outcome.imported
                yield outcome
        except errors.PlaygroundError as exc:
            raise errors.PlaygroundError(f"{path}: {exc}{_kept(imported, skipped)}") from exc
        for warning in self.warnings():
            log.warning("%s: %s", path, warning)

    def _prescan(self, path: Path) -> bool:
        """Collect every session id the file holds, so references to later lines can be mapped.

        Returns:
            Whether the file has any non-blank line.
        """
        seen = False
        try:
            for _, text in read_lines(path):
                seen = True
                try:
                    record = loads(text)
                except RecordError:
                    continue  # reported, with its line number, when the import reaches it
                session = record.get("session") if isinstance(record, dict) else None
                sid = session.get("id") if isinstance(session, dict) else None
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

    def _content_of(self, session_id: str) -> dict[str, Any] | None:
        """The content of a session of this database as its export gives it; None when it does
        not pass the export model (it cannot then be the same as a record that does)."""
        try:
            record = validate_record(export.export_record(self.db, session_id))
        except RecordError:
            return None
        return content(stored_rows(record))

    def _already_here(self, record: ExportRecord, mine: dict[str, Any]) -> str | None:
        """The session holding this very conversation: the one with its id, or a copy imported
        under a new id (same creation time), checked in that order."""
        file_id = record.session.id
        candidates = [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM sessions WHERE id = ? OR created_at = ? ORDER BY id <> ?, id",
                [file_id, record.session.created_at, file_id],
            ).fetchall()
        ]
        return next((c for c in candidates if self._content_of(c) == mine), None)

    def _import_record(self, number: int, record: ExportRecord) -> Outcome:
        tables = stored_rows(record)
        mine = content(tables)
        file_id = record.session.id
        where = f"line {number}"
        found = self._already_here(record, mine)
        if found is not None:
            with self.db.atomic():
                self._link_children(file_id, found)
                self._import_preferences(record, found, where)
            return Outcome(file_id, found, imported=False)
        db_id = file_id
        if self._exists(file_id):
            if not self.as_new:
                theirs = self._content_of(file_id)
                parts = ", ".join(_differences(mine, theirs)) if theirs else "what it holds"
                raise LineError(
                    f"{where}: session {file_id}: a different conversation with this id is already"
                    f" in the database (it differs in: {parts}); to import this one as a copy"
                    " under a new id, add --as-new"
                )
            db_id = self._new_id(file_id)
        renames = {k: v for k, v in {**self.id_map, file_id: db_id}.items() if k != v}
        session = tables["sessions"][0]
        # sqlite-utils commits each execute() on its own unless a transaction is open: open one.
        with self.db.atomic():
            session["id"] = db_id
            parent = session["parent_id"]
            if parent is not None:
                session["parent_id"] = self._map_session(parent)
                if session["parent_id"] is None:
                    if parent in self._file_ids and parent not in self.id_map:
                        self._pending_children.setdefault(parent, []).append(db_id)
                    else:
                        self.dropped_parents += 1
            self._ensure_experiment(session, record, where)
            self._insert("sessions", session, f"{where}: session")
            self._link_children(file_id, db_id)
            for table in TABLE_ORDER:
                for i, row in enumerate(tables[table]):
                    if "rater" in row:
                        self._ensure_rater(row["rater"])
                    if table == "events" and renames:
                        row = {**row, "data": rename_sessions(row["data"], renames)}
                    self._insert(table, {**row, "session_id": db_id}, f"{where}: {table}[{i}]")
            self._import_preferences(record, db_id, where)
        return Outcome(file_id, db_id, imported=True)

    def _link_children(self, file_id: str, db_id: str) -> None:
        """Forks imported before their parent (later in the file) point at it now."""
        for child in self._pending_children.pop(file_id, []):
            self.db.execute("UPDATE sessions SET parent_id = ? WHERE id = ?", [db_id, child])

    def _import_preferences(self, record: ExportRecord, db_id: str, where: str) -> None:
        """A preference names two sessions, so it is in both records: it is inserted once both
        are in the database (or skipped, and counted, when the other is nowhere), and never twice:
        a preference already there is left alone, so importing again adds only new ones."""
        file_id = record.session.id
        for i, pref in enumerate(record.preferences):
            other = pref.second_id if pref.first_id == file_id else pref.first_id
            if other in self._file_ids and other not in self.id_map:
                continue  # the same preference is in the other session's line: inserted there
            target = self._map_session(other)
            if target is None:
                self.skipped_preferences += 1
                continue
            both = {file_id: db_id, other: target}
            row = {
                "rater": pref.rater,
                "first_id": both[pref.first_id],
                "second_id": both[pref.second_id],
                "chosen_id": both[pref.chosen_id],
                "reason": pref.reason,
                "assignment_id": None,
                "created_at": pref.created_at,
            }
            same = self.db.execute(
                "SELECT 1 FROM preferences WHERE rater = ? AND first_id = ? AND second_id = ?"
                " AND chosen_id = ? AND reason = ? AND created_at = ?",
                [row[k] for k in ("rater", "first_id", "second_id", "chosen_id", "reason")]
                + [row["created_at"]],
            ).fetchone()
            if same is None:
                self._ensure_rater(pref.rater)
                self._insert("preferences", row, f"{where}: preferences[{i}]")

    def _ensure_rater(self, rater: str) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO raters (id, created_at) VALUES (?, ?)", [rater, _CLOCK.now_iso()]
        )

    def _ensure_experiment(self, session: dict[str, Any], record: ExportRecord, where: str) -> None:
        exp_id = session.get("experiment_id")
        if exp_id is None:
            return
        if self.db.execute("SELECT 1 FROM experiments WHERE id = ?", [exp_id]).fetchone():
            return  # shared by id, like raters
        given = record.experiment
        row = (
            given.model_dump()
            if given is not None and given.id == exp_id
            else {"id": exp_id, "created_at": session["created_at"], "name": None, "config": None}
        )
        self._insert("experiments", row, f"{where}: experiment")

    # -- rows --------------------------------------------------------------------------------------
    def _insert(self, table: str, row: dict[str, Any], ctx: str) -> None:
        json_cols = export.JSON_COLUMNS.get(table, frozenset())
        # the event log is compact, as the recorder writes it (pydantic's JSON)
        compact = (",", ":") if table == "events" else None
        values = {
            name: json.dumps(value, ensure_ascii=False, separators=compact)
            if name in json_cols and value is not None
            else value
            for name, value in row.items()
        }
        names = list(values)
        try:
            self.db.execute(
                f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                [values[n] for n in names],
            )
        except sqlite3.IntegrityError as exc:
            # Constraints are checked per statement, so this row is the one at fault.
            raise LineError(f"{ctx}: rejected by the database ({exc})") from exc


def _kept(imported: int, skipped: int) -> str:
    """What the conversations before a bad line became, for the end of its error message."""
    done = imported + skipped
    if not done:
        return "; nothing was imported"
    before = f"the {done} conversation{'s' if done != 1 else ''} before it"
    if not skipped:
        return f"; {before} {_was(done)} imported and kept"
    if not imported:
        return f"; {before} {_was(done)} already in the database"
    return (
        f"; of {before}, {imported} {_was(imported)} imported and kept, {skipped} {_was(skipped)}"
        " already in the database"
    )


def _was(n: int) -> str:
    return "was" if n == 1 else "were"


def import_file(
    db: sqlite_utils.Database, path: str | Path, *, as_new: bool = False
) -> list[tuple[str, str]]:
    """Read a JSON Lines export into ``db``, one transaction per conversation.

    Args:
        db: an open session database.
        path: the export file.
        as_new: import a different conversation under a taken id as a copy with a new id.

    Returns:
        ``(id in the file, id in the database)`` per conversation; they differ when the id was
        taken, or when the same conversation was already there as a copy.

    Raises:
        PlaygroundError: missing or empty file, a line that is not JSON, a wrong format marker or
            version, a value the export model refuses (line and field named), or a different
            conversation under a taken id without ``as_new``. Conversations before it stay imported.
    """
    return [(o.file_id, o.db_id) for o in Importer(db, as_new=as_new).import_lines(path)]
