"""Combine session databases into one: ``playground merge OUT.db SHARD.db [SHARD.db ...]``.

The usual sources are the shard databases of one experiment run with ``--shard K/N`` on several
machines; any session databases can be merged. The whole merge is one transaction on ``OUT``: on
any error nothing is written (a new ``OUT`` is not even left behind).

What happens to each table (the rules are in ``docs/schema.md``, "Merging databases"):

- ``sessions`` and the rows that belong to one session (:data:`SESSION_ROWS`) move together. A
  session id already in ``OUT`` is skipped when it is the same session (same status, updated_at
  and message count) and refused otherwise.
- Integer surrogate keys (``evaluations.id``, ``rating_plans.id``, ``assignments.id``...) are
  renumbered in ``OUT``; every declared foreign key to one (``ratings.assignment_id``...) is
  rewritten to the new number.
- The experiment and human-evaluation tables are merged by their natural keys (:data:`KEYS`):
  identical rows collapse into one, differing ones follow the table's rule or are refused.

Columns are copied by name as the schema lists them, so a column added by a later migration is
carried along. A table this module has no rule for makes the merge fail (never a silent skip).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import sqlite_utils

from playground import errors
from playground.storage import database
from playground.storage.database import DEFAULT_BUSY_TIMEOUT, open_database, open_for_reading

Row = dict[str, Any]

#: The rows that belong to one session: copied with their session, skipped with it.
SESSION_ROWS = (
    "participants",
    "messages",
    "memories",
    "thoughts",
    "evaluations",
    "decisions",
    "events",
    "predictions",
    "annotations",
    "labels",
    "hidden_states",
    "storm_dialogues",
    "storm_judgements",
    "message_embeddings",
    "session_features",
)
#: Tables merged row by row on a natural key (``None``: the whole row but its surrogate id), in an
#: order that puts every referenced table before the tables that refer to it.
KEYS: dict[str, tuple[str, ...] | None] = {
    "experiments": ("id",),
    "experiment_draws": ("experiment_id", "draw"),
    "raters": ("id",),
    "rating_plans": None,
    "assignments": ("plan_id", "rater", "position"),
    "ratings": ("session_id", "rater", "instrument", "metric"),
    "judge_scores": ("session_id", "rater", "metric"),
    "turn_marks": ("session_id", "message_id", "rater"),
    "preferences": None,
    # After the sessions: a run names its session.
    "experiment_runs": ("experiment_id", "draw", "condition"),
}
#: Every table this module knows how to merge; any other table in a source stops the merge.
KNOWN_TABLES = frozenset({"sessions", *SESSION_ROWS, *KEYS})
_SQLITE_HEADER = b"SQLite format 3\x00"
_BATCH = 500


class MergeError(errors.PlaygroundError):
    """The databases cannot be merged (the message names the file, table or row at fault)."""


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
    """

    path: Path
    sessions_added: int
    sessions_present: int
    experiments: tuple[str, ...]
    evaluation_rows: int


@dataclass(frozen=True)
class MergeResult:
    """The outcome of :func:`merge`: the output file and one summary per source, in order."""

    output: Path
    sources: tuple[SourceSummary, ...]

    @property
    def sessions_added(self) -> int:
        return sum(s.sessions_added for s in self.sources)

    @property
    def sessions_present(self) -> int:
        return sum(s.sessions_present for s in self.sources)

    @property
    def experiments(self) -> tuple[str, ...]:
        return tuple(sorted({e for s in self.sources for e in s.experiments}))


def merge(
    out: str | Path,
    sources: Sequence[str | Path],
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> MergeResult:
    """Copy every session, experiment and rating of ``sources`` into ``out``.

    Args:
        out: the database to merge into; created (with its folder) when missing.
        sources: session databases to read. They are opened as every reader opens them,
            read-only (an older schema is upgraded in a copy in memory), and never written.
        busy_timeout: seconds a statement waits for another connection's lock.

    Returns:
        What each source brought.

    Raises:
        MergeError: no sources, a missing or repeated source, ``out`` among the sources, a source
            that is not a session database, a table with no merge rule, a session still being
            recorded on this machine, or a conflict (a session, experiment, draw, run or rating
            that differs between two databases). ``out`` is then left as it was.
        PlaygroundError: ``out`` or a source cannot be opened as a session database.
    """
    out_path = Path(out)
    paths = [Path(s) for s in sources]
    _check_paths(out_path, paths)
    opened: list[tuple[Path, sqlite_utils.Database]] = []
    try:
        for path in paths:
            opened.append((path, open_for_reading(path, busy_timeout=busy_timeout)))
        created = not out_path.exists()
        new_folders = [p for p in out_path.absolute().parents if not p.exists()]
        db = open_database(out_path, busy_timeout=busy_timeout)
        try:
            summaries = _merge_all(db, out_path, opened)
        except BaseException:
            db.close()
            if created:  # "unchanged" for a file that did not exist: not there
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with suppress(FileNotFoundError):
                        Path(f"{out_path}{suffix}").unlink()
                for folder in new_folders:  # innermost first
                    with suppress(OSError):
                        folder.rmdir()
            raise
        db.close()
    finally:
        for _, source in opened:
            source.close()
    return MergeResult(out_path, tuple(summaries))


def cli(args: argparse.Namespace, out: TextIO) -> int:
    """``playground merge OUT.db SHARD.db [...]``: merge, then print a summary. Returns 0.

    Args:
        args: ``output`` (the OUT path), ``sources`` (paths) and ``busy_timeout`` (seconds).
        out: where the summary goes.

    Raises:
        SettingsError: a negative or not-a-number ``--busy-timeout``.
        PlaygroundError: as :func:`merge` (nothing is merged).
    """
    if not 0 <= args.busy_timeout < float("inf"):  # NaN fails too
        raise errors.SettingsError(
            f"--busy-timeout: must be 0 or more seconds (got {args.busy_timeout:g})"
        )
    result = merge(args.output, args.sources, busy_timeout=args.busy_timeout)
    for s in result.sources:
        line = f"{s.path}: {_sessions(s.sessions_added, s.sessions_present)}"
        if s.experiments:
            line += f"; {_count(len(s.experiments), 'experiment')} ({', '.join(s.experiments)})"
        if s.evaluation_rows:
            line += f"; {_count(s.evaluation_rows, 'rating row')}"
        print(line, file=out)
    total = _sessions(result.sessions_added, result.sessions_present)
    print(
        f"merged into {result.output}: {total}, {_count(len(result.experiments), 'experiment')}",
        file=out,
    )
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _sessions(added: int, present: int) -> str:
    return f"{_count(added, 'session')} added, {present} already there"


def _check_paths(out: Path, paths: list[Path]) -> None:
    """Refuse what cannot be a merge before anything is opened (nothing is created)."""
    if not paths:
        raise MergeError("no source databases to merge")
    for i, path in enumerate(paths):
        if not path.exists():
            raise MergeError(f"{path}: no such file")
        if not path.is_file():
            raise MergeError(f"{path}: not a file")
        if out.exists() and os.path.samefile(path, out):
            raise MergeError(f"{path} is the output database itself: merge into another file")
        for earlier in paths[:i]:
            if os.path.samefile(path, earlier):
                raise MergeError(f"{path} is given twice (also as {earlier})")
        try:
            with open(path, "rb") as fh:
                header = fh.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise MergeError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
        if header != _SQLITE_HEADER:
            what = "an empty file" if not header else "not a SQLite file"
            raise MergeError(f"{path}: {what}, not a Thought Playground session database")


def _merge_all(
    db: sqlite_utils.Database, out_path: Path, sources: list[tuple[Path, sqlite_utils.Database]]
) -> list[SourceSummary]:
    """All sources into ``db`` in one transaction: committed whole, or rolled back whole."""
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Sessions name their parent, runs their session: check references once, at the end.
        conn.execute("PRAGMA defer_foreign_keys = ON")
        summaries = [_Merger(db, out_path, path, source).run() for path, source in sources]
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            with suppress(sqlite3.Error):  # the error that got us here is the one to report
                conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.IntegrityError):
            raise MergeError(
                f"{out_path}: the merged rows break a reference between tables ({exc}); "
                "nothing was merged"
            ) from exc
        if isinstance(exc, sqlite3.Error):
            raise MergeError(f"{out_path}: {exc}; nothing was merged") from exc
        raise
    return summaries


@dataclass(frozen=True)
class _Table:
    """A table's shape as ``PRAGMA table_info`` / ``foreign_key_list`` give it."""

    name: str
    columns: tuple[str, ...]
    surrogate: str | None  # an INTEGER PRIMARY KEY (a rowid alias): renumbered in OUT
    references: tuple[tuple[str, str], ...]  # (column, renumbered table it refers to)


class _Merger:
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
        self.tables: dict[str, _Table] = {}
        self.added: set[str] = set()
        self.present = 0
        self.evaluation_rows = 0

    def run(self) -> SourceSummary:
        self.src.execute("BEGIN")  # one snapshot of the source for the whole copy
        try:
            self._check_tables()
            self._check_running()
            for table in ("experiments", "experiment_draws"):
                self._merge_keyed(table)
            self._merge_sessions()
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
            self.path, len(self.added), self.present, experiments, self.evaluation_rows
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
                "(playground/transfer/merge.py knows only the tables of the session schema); nothing was merged"
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
            self.tables[name] = _Table(name, tuple(src_cols), _surrogate(self.out, name), refs)

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

    def _referenced(self, name: str) -> bool:
        return any(name == ref for t in self.tables.values() for _, ref in t.references)

    # -- tables merged on a natural key -----------------------------------------------------

    def _merge_keyed(self, name: str) -> int:
        """Merge ``name`` row by row on its key. Returns how many rows were added."""
        table = self.tables[name]
        key = KEYS[name] or tuple(c for c in table.columns if c != table.surrogate)
        resolve = _RULES.get(name, _refuse)
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

    def _rows(self, table: _Table, *, order: str = "rowid") -> Iterator[Row]:
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

    def _insert(self, table: _Table, row: Row) -> None:
        columns = [c for c in table.columns if c != table.surrogate]
        cursor = self.out.execute(
            f"INSERT INTO {_q(table.name)} ({', '.join(_q(c) for c in columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})",
            [row[c] for c in columns],
        )
        if table.surrogate:
            assert cursor.lastrowid is not None
            self.ids.setdefault(table.name, {})[row[table.surrogate]] = cursor.lastrowid

    def _insert_many(self, table: _Table, rows: Iterator[Row]) -> None:
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


# -- what to do when a row is in both databases and differs --------------------------------

_Rule = Callable[["_Merger", str, Row, Row], Row]


def _differences(theirs: Row, ours: Row, skip: tuple[str, ...] = ()) -> list[str]:
    return [c for c in ours if c not in skip and c in theirs and theirs[c] != ours[c]]


def _refuse(m: _Merger, name: str, theirs: Row, ours: Row) -> Row:
    """The default: a row that differs between two databases is a conflict."""
    surrogate = m.tables[name].surrogate
    cols = _differences(theirs, ours, skip=(surrogate,) if surrogate else ())
    what = ", ".join(f"{c} {ours[c]!r}" for c in KEYS[name] or ())
    detail = "; ".join(f"{c} {theirs[c]!r} in {m.out_path}, {ours[c]!r} in {m.path}" for c in cols)
    raise MergeError(f"{name} {what} differs between the databases ({detail}); nothing was merged")


def _experiment(m: _Merger, name: str, theirs: Row, ours: Row) -> Row:
    """One experiment from several shards: the same protocol, else refused. The row keeps the
    earliest creation time and a name when either has one.

    An experiment run by ``playground experiment`` stores its protocol (which its id is a hash of)
    next to operational settings (timeouts, retries, call concurrency) that shards on different
    machines may well set differently: only the protocol must agree. Any other config is
    compared whole."""
    a, b = _protocol(_config(theirs["config"])), _protocol(_config(ours["config"]))
    if a != b:
        paths = _json_differences(a, b)
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        raise MergeError(
            f"experiment {ours['id']}: its config in {m.out_path} differs from the one in "
            f"{m.path} ({shown}): they are not the same experiment; nothing was merged"
        )
    changes: Row = {}
    if ours["created_at"] < theirs["created_at"]:
        changes["created_at"] = ours["created_at"]
    if theirs["name"] is None and ours["name"] is not None:
        changes["name"] = ours["name"]
    return changes


def _protocol(config: Any) -> Any:
    if isinstance(config, dict) and isinstance(config.get("protocol"), dict):
        return {"protocol": config["protocol"]}
    return config


def _config(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return text


def _json_differences(a: Any, b: Any, at: str = "") -> list[str]:
    """The dotted paths at which two JSON values differ (``llm.concurrency: 32 ≠ 8``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            where = f"{at}.{k}" if at else str(k)
            if k not in a or k not in b:
                out.append(f"{where}: in one of them only")
            else:
                out += _json_differences(a[k], b[k], where)
        return out
    if a == b:
        return []
    return [f"{at or 'config'}: {json.dumps(a)} ≠ {json.dumps(b)}"]


def _run(m: _Merger, name: str, theirs: Row, ours: Row) -> Row:
    """The same conversation of an experiment in two databases: a finished one wins over any
    other; two finished ones must be the same session; otherwise the later update wins."""
    where = f"experiment {ours['experiment_id']} draw {ours['draw']} {ours['condition']}"
    if theirs["status"] == "finished" and ours["status"] == "finished":
        if theirs["session_id"] != ours["session_id"]:
            raise MergeError(
                f"{where} finished twice: session {theirs['session_id']} in {m.out_path}, "
                f"session {ours['session_id']} in {m.path}; nothing was merged"
            )
        return {}
    if theirs["status"] == "finished":
        return {}
    if ours["status"] == "finished" or ours["updated_at"] > theirs["updated_at"]:
        return {c: v for c, v in ours.items() if c not in (KEYS[name] or ())}
    return {}


def _rater(m: _Merger, name: str, theirs: Row, ours: Row) -> Row:
    """The same rater in two databases: one rater, known since the earlier date."""
    return {"created_at": ours["created_at"]} if ours["created_at"] < theirs["created_at"] else {}


def _assignment(m: _Merger, name: str, theirs: Row, ours: Row) -> Row:
    """The same assignment in two copies of a plan: completed in one of them is completed."""
    if _differences(theirs, ours, skip=("id", "completed_at")) or (
        theirs["completed_at"] is not None and ours["completed_at"] is not None
    ):
        return _refuse(m, name, theirs, ours)
    return {"completed_at": ours["completed_at"]} if theirs["completed_at"] is None else {}


_RULES: dict[str, _Rule] = {
    "experiments": _experiment,
    "experiment_runs": _run,
    "raters": _rater,
    "assignments": _assignment,
}
