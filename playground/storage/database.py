"""Open the session database: WAL, foreign keys on, migrations applied, dead runs marked interrupted."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path

import sqlite_utils

from playground import errors
from playground.storage.schema import MIGRATIONS

DEFAULT_DB = Path("sessions") / "playground.db"


def open_database(
    path: str | os.PathLike[str] = DEFAULT_DB, *, create: bool = True
) -> sqlite_utils.Database:
    """Open a session database, applying the schema migrations it still lacks.

    Args:
        path: the SQLite file.
        create: create the file (and its folder) when missing; with ``False`` a missing file is an
            error and nothing is created.

    Raises:
        PlaygroundError: no file (``create=False``), a file that is not a usable SQLite database, or
            a SQLite database of another application; such a file is left untouched.
    """
    path = Path(path)
    if not create and not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    conn: sqlite3.Connection | None = None
    try:
        if create and path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=10)
        db = sqlite_utils.Database(conn)
        _check_ours(db, path)  # read-only: a foreign file must not even be switched to WAL
        db.execute("PRAGMA foreign_keys = ON")
        _enable_wal(db)
        db.execute("PRAGMA synchronous = NORMAL")
        _migrate(db)
        mark_dead_sessions(db)
    except (errors.PlaygroundError, sqlite3.Error, OSError) as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, errors.PlaygroundError):
            raise
        if isinstance(exc, sqlite3.DatabaseError):
            raise errors.PlaygroundError(f"{path}: not a usable session database ({exc})") from exc
        raise errors.PlaygroundError(f"{path}: cannot open the session database ({exc})") from exc
    return db


def _enable_wal(db: sqlite_utils.Database, wait: float = 10.0) -> None:
    """Switch to WAL. Changing the journal mode ignores the busy timeout: when another process
    is opening the same new file, it fails at once with "database is locked", so retry a while."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.enable_wal()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _check_ours(db: sqlite_utils.Database, path: Path) -> None:
    """Refuse a SQLite file that belongs to another application (without writing to it)."""
    conn = db.conn
    conn.execute("BEGIN")  # one snapshot: another process may be creating the schema right now
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
        }
    finally:
        conn.execute("COMMIT")
    if (version == 0 and tables) or (version > 0 and "sessions" not in tables):
        raise errors.PlaygroundError(
            f"{path} is a SQLite database of another application, "
            "not a Thought Playground session database"
        )


def _migrate(db: sqlite_utils.Database) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise errors.PlaygroundError(
            f"the database schema (version {version}) is newer than this app understands ({len(MIGRATIONS)})"
        )
    conn = db.conn
    for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
        # Another process may be migrating the same file right now: take the write lock first,
        # then look again, so each step is applied exactly once.
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] < number:
                for statement in _statements(script):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(script: str) -> list[str]:
    """Split a migration script into complete SQL statements."""
    out: list[str] = []
    current = ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_dead_sessions(db: sqlite_utils.Database) -> int:
    """Sessions still 'running' whose process is gone become 'interrupted'. Returns how many."""
    host = socket.gethostname()
    dead = [
        sid
        for sid, pid, h in db.execute(
            "SELECT id, pid, host FROM sessions WHERE status = 'running'"
        ).fetchall()
        if pid != os.getpid() and (h != host or not pid or not _alive(pid))
    ]
    with db.conn:
        for sid in dead:
            db.execute(
                "UPDATE sessions SET status = 'interrupted', end_reason = 'the process ended before the session finished' WHERE id = ?",
                [sid],
            )
    return len(dead)
