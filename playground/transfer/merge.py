"""Combine session databases into one: ``playground merge OUT.db SHARD.db [SHARD.db ...]``.

The usual sources are the shard databases of one experiment run with ``--shard K/N`` on several
machines; any session databases can be merged. The whole merge is one transaction on ``OUT``: on
any error nothing is written (a new ``OUT`` is not even left behind).

What happens to each table (the rules are in ``docs/schema.md``, "Merging databases"):

- ``sessions`` and the rows that belong to one session (``SESSION_ROWS``) move together. A
  session id already in ``OUT`` is skipped when it is the same session (same status, updated_at
  and message count) and refused otherwise.
- Integer surrogate keys (``evaluations.id``, ``rating_plans.id``, ``assignments.id``...) are
  renumbered in ``OUT``; every declared foreign key to one (``ratings.assignment_id``...) is
  rewritten to the new number.
- The experiment and human-evaluation tables are merged by their natural keys (``KEYS``):
  identical rows collapse into one, differing ones follow the table's rule or are refused.
- A user study plan (``PLAN_ROWS``) is keyed by its id: one ``OUT`` lacks is copied with its
  seats, steps and answers; one it has is skipped (counted as already there, not compared).
  Session ids are never renamed, so a step's ``session_id`` names the same session in ``OUT``.

Columns are copied by name as the schema lists them, so a column added by a later migration is
carried along. A table with no rule makes the merge fail (never a silent skip).

The tables and their rules are in :mod:`playground.transfer.merge_rules`; the copy of one source
is :mod:`playground.transfer.merge_source`; this module checks the files and runs the whole
merge in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from playground.storage.database import DEFAULT_BUSY_TIMEOUT, open_database, open_for_reading
from playground.transfer.merge_rules import MergeError
from playground.transfer.merge_source import SourceMerger, SourceSummary

_SQLITE_HEADER = b"SQLite format 3\x00"


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
    """Copy every session, experiment, rating and study plan of ``sources`` into ``out``.

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
        summaries = [SourceMerger(db, out_path, path, source).run() for path, source in sources]
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
