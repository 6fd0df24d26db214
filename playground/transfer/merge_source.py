"""Copying one source database into the merge's output, inside the caller's transaction.

:class:`SourceMerger` reads the source in one snapshot, checks that every table has a rule and a
place in the output, then copies sessions with their rows and merges the keyed tables by the
rules of :mod:`playground.transfer.merge_rules`, renumbering surrogate ids as it goes.
:func:`playground.transfer.merge.merge` runs one per source.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from playground.storage import database
from playground.transfer.merge_rules import (
    KEYS,
    KNOWN_TABLES,
    PLAN_ROWS,
    SESSION_ROWS,
    MergeError,
    Row,
    TableShape,
    rule_for,
)

_BATCH = 500


@dataclass(frozen=True)
class SourceSummary:
    """What one source brought to the merge.

    Attributes:
        path: the source file, as given.
        sessions_added: sessions copied into ``OUT``.
        sessions_present: sessions already in ``OUT`` (the same session), left as they were.
        experiments: ids of the experiments in the source.
        evaluation_rows: rows added to the human-evaluation tables (raters, plans, assignments,
            ratings, turn marks, preferences).
        plans_added: user study plans copied into ``OUT`` (with their seats, steps and answers).
        plans_present: study plans already in ``OUT`` under the same id, left as they were.
    """

    path: Path
    sessions_added: int
    sessions_present: int
    experiments: tuple[str, ...]
    evaluation_rows: int
    plans_added: int = 0
    plans_present: int = 0


class SourceMerger:
    """Merges one source into the output, inside the caller's transaction."""

    def __init__(
        self, db: sqlite_utils.Database, out_path: Path, path: Path, source: sqlite_utils.Database
    ) -> None:
        self.out = db.conn
        self.out_path = out_path
        self.path = path
        self.src = source.conn
        # Old surrogate id → new one, per renumbered table, for this source.
        self.ids: dict[str, dict[int, int]] = {}
        self.tables: dict[str, TableShape] = {}
        self.added: set[str] = set()
        self.present = 0
        self.evaluation_rows = 0
        self.plans: set[str] = set()
        self.plans_present = 0

    def run(self) -> SourceSummary:
        self.src.execute("BEGIN")  # one snapshot of the source for the whole copy
        try:
            self._check_tables()
            self._check_running()
            for table in ("experiments", "experiment_draws"):
                self._merge_keyed(table)
            self._merge_sessions()
            self._merge_plans()
            for table in KEYS:
                if table not in ("experiments", "experiment_draws"):
                    added = self._merge_keyed(table)
                    if table != "experiment_runs":
                        self.evaluation_rows += added
            experiments = tuple(r[0] for r in self._read("SELECT id FROM experiments ORDER BY id"))
        except BaseException:
            if self.src.in_transaction:
                with suppress(sqlite3.Error):  # the error that got us here is the one to report
                    self.src.execute("ROLLBACK")
            raise
        if self.src.in_transaction:
            self.src.execute("COMMIT")
        return SourceSummary(
            self.path,
            len(self.added),
            self.present,
            experiments,
            self.evaluation_rows,
            len(self.plans),
            self.plans_present,
        )

    # -- the shape of the tables ------------------------------------------------------------

    def _check_tables(self) -> None:
        names = [
            r[0]
            for r in self._read(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                " ORDER BY name"
            )
        ]
        unknown = [n for n in names if n not in KNOWN_TABLES]
        if unknown:
            tables = (
                f"table {unknown[0]} has"
                if len(unknown) == 1
                else f"tables {', '.join(unknown)} have"
            )
            raise MergeError(
                f"{self.path}: {tables} no merge rule "
                "(playground/transfer/merge_rules.py knows only the tables of the session schema); nothing was merged"
            )
        renumbered = {n for n in names if _surrogate(self.out, n)}
        for name in names:
            src_cols = [r[1] for r in self._read(f"PRAGMA table_info({_q(name)})")]
            out_cols = {r[1] for r in self.out.execute(f"PRAGMA table_info({_q(name)})")}
            missing = [c for c in src_cols if c not in out_cols]
            if missing:
                raise MergeError(
                    f"{self.path}: {name}.{', '.join(missing)} has no place in "
                    f"{self.out_path} (not in its schema); nothing was merged"
                )
            refs = tuple(
                (r[3], r[2])
                for r in self.out.execute(f"PRAGMA foreign_key_list({_q(name)})")
                if r[2] in renumbered and (r[4] is None or r[4] == _surrogate(self.out, r[2]))
            )
            self.tables[name] = TableShape(name, tuple(src_cols), _surrogate(self.out, name), refs)

    def _check_running(self) -> None:
        """Refuse a session this machine is still recording: its rows are not complete yet."""
        host = socket.gethostname()
        for sid, pid, h in self._read(
            "SELECT id, pid, host FROM sessions WHERE status = 'running'"
        ):
            if h == host and pid and (pid == os.getpid() or database.alive(pid)):
                raise MergeError(
                    f"{self.path}: session {sid} is still running (process {pid} on this "
                    "machine); merge once it has finished; nothing was merged"
                )

    # -- sessions and their rows ------------------------------------------------------------

    def _merge_sessions(self) -> None:
        table = self.tables["sessions"]
        for row in self._rows(table, order="created_at, id"):
            if row["status"] == "running":
                # Not alive here (checked above): dead, as a writer would mark it. A source is
                # opened read-only and never marked, so mark the copy, and compare it as marked.
                row["status"] = "interrupted"
                row["end_reason"] = "the process ended before the session finished"
            sid = row["id"]
            theirs = self.out.execute(
                "SELECT status, updated_at, (SELECT COUNT(*) FROM messages WHERE session_id = ?)"
                " FROM sessions WHERE id = ?",
                [sid, sid],
            ).fetchone()
            if theirs is None:
                self._insert(table, row)
                self.added.add(sid)
                continue
            (count,) = next(self._read("SELECT COUNT(*) FROM messages WHERE session_id = ?", [sid]))
            ours = (row["status"], row["updated_at"], count)
            if tuple(theirs) != ours:
                raise MergeError(
                    f"session {sid} is in both {self.out_path} ({_state(*theirs)}) and "
                    f"{self.path} ({_state(*ours)}) with different content; nothing was merged"
                )
            self.present += 1
        for name in SESSION_ROWS:
            table = self.tables[name]
            rows = (r for r in self._rows(table) if r["session_id"] in self.added)
            if table.surrogate and self._referenced(name):
                for row in rows:
                    self._insert(table, row)
            else:
                self._insert_many(table, rows)

    # -- user study plans -------------------------------------------------------------------

    def _merge_plans(self) -> None:
        """A plan ``OUT`` lacks is copied with its seats, steps and answers; one it has under the
        same id is left as it is there. Steps keep their ``session_id``: the sessions (copied
        just before, or already there) have the same ids in ``OUT``."""
        plans = self.tables[PLAN_ROWS[0]]
        for row in self._rows(plans):
            if self.out.execute("SELECT 1 FROM study_plans WHERE id = ?", [row["id"]]).fetchone():
                self.plans_present += 1
            else:
                self._insert(plans, row)
                self.plans.add(row["id"])
        for name in PLAN_ROWS[1:]:
            table = self.tables[name]
            self._insert_many(table, (r for r in self._rows(table) if r["plan_id"] in self.plans))

    def _referenced(self, name: str) -> bool:
        return any(name == ref for t in self.tables.values() for _, ref in t.references)

    # -- tables merged on a natural key -----------------------------------------------------

    def _merge_keyed(self, name: str) -> int:
        """Merge ``name`` row by row on its key. Returns how many rows were added."""
        table = self.tables[name]
        key = KEYS[name] or tuple(c for c in table.columns if c != table.surrogate)
        resolve = rule_for(name)
        added = 0
        for row in self._rows(table):
            where = " AND ".join(f"{_q(c)} IS ?" for c in key)
            cursor = self.out.execute(
                f"SELECT * FROM {_q(name)} WHERE {where}", [row[c] for c in key]
            )
            found = cursor.fetchone()
            if found is None:
                self._insert(table, row)
                added += 1
                continue
            theirs = dict(zip([d[0] for d in cursor.description], found, strict=True))
            if table.surrogate:
                self.ids.setdefault(name, {})[row[table.surrogate]] = theirs[table.surrogate]
            same = all(theirs[c] == row[c] for c in table.columns if c != table.surrogate)
            if same:
                continue
            changes = resolve(self, name, theirs, row)
            if changes:
                sets = ", ".join(f"{_q(c)} = ?" for c in changes)
                self.out.execute(
                    f"UPDATE {_q(name)} SET {sets} WHERE {where}",
                    [*changes.values(), *(row[c] for c in key)],
                )
        return added

    # -- reading and writing rows -----------------------------------------------------------

    def _read(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """The source's rows for ``sql``, one at a time. A failure to read them (a damaged file)
        names the source: it is raised here, between rows, never by a write to ``OUT``."""
        try:
            yield from self.src.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise MergeError(f"{self.path}: cannot read it ({exc}); nothing was merged") from exc

    def _rows(self, table: TableShape, *, order: str = "rowid") -> Iterator[Row]:
        """The source's rows of ``table``, their references already renumbered for ``OUT``."""
        for values in self._read(
            f"SELECT {', '.join(_q(c) for c in table.columns)} FROM {_q(table.name)} ORDER BY {order}"
        ):
            row = dict(zip(table.columns, values, strict=True))
            for column, parent in table.references:
                old = row[column]
                if old is None:
                    continue
                try:
                    row[column] = self.ids[parent][old]
                except KeyError:
                    raise MergeError(
                        f"{self.path}: {table.name}.{column} = {old} names no row of {parent}; "
                        "nothing was merged"
                    ) from None
            yield row

    def _insert(self, table: TableShape, row: Row) -> None:
        columns = [c for c in table.columns if c != table.surrogate]
        cursor = self.out.execute(
            f"INSERT INTO {_q(table.name)} ({', '.join(_q(c) for c in columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})",
            [row[c] for c in columns],
        )
        if table.surrogate:
            assert cursor.lastrowid is not None
            self.ids.setdefault(table.name, {})[row[table.surrogate]] = cursor.lastrowid

    def _insert_many(self, table: TableShape, rows: Iterator[Row]) -> None:
        columns = [c for c in table.columns if c != table.surrogate]
        sql = (
            f"INSERT INTO {_q(table.name)} ({', '.join(_q(c) for c in columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})"
        )
        batch: list[list[Any]] = []
        for row in rows:
            batch.append([row[c] for c in columns])
            if len(batch) >= _BATCH:
                self.out.executemany(sql, batch)
                batch = []
        if batch:
            self.out.executemany(sql, batch)


def _surrogate(conn: sqlite3.Connection, name: str) -> str | None:
    """The table's ``INTEGER PRIMARY KEY`` column (an alias of the rowid), if it has one."""
    pk = [r for r in conn.execute(f"PRAGMA table_info({_q(name)})") if r[5]]
    if len(pk) == 1 and str(pk[0][2]).upper() == "INTEGER":
        return str(pk[0][1])
    return None


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _state(status: str, updated_at: str | None, messages: int) -> str:
    return f"{status}, {_count(messages, 'message')}, updated {updated_at}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
