"""Open the session database: WAL, foreign keys on, migrations applied, dead runs marked interrupted.

Readers that may meet a database they cannot write (``playground sessions``, ``show``) use
:func:`open_for_reading`, which falls back to a read-only connection that writes nothing.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import NoReturn

import sqlite_utils

from playground import errors
from playground.storage.schema import MIGRATIONS

DEFAULT_DB = Path("sessions") / "playground.db"
#: Seconds a statement waits for another connection's lock before it fails with "database is
#: locked". Normal contention (two runs and a reader on one file) is a matter of milliseconds; this
#: also waits out a long import, a VACUUM or a backup by another process (a 12 s lock once made a
#: run lose a row at the old 10 s). A write that still fails stops the run (see
#: :class:`playground.errors.RecordingError`). The recorder writes on the event loop, so the
#: window can stall this long behind someone else's lock.
DEFAULT_BUSY_TIMEOUT = 30.0
# SQLite primary result codes (the low byte of an extended code).
_SQLITE_READONLY = 8
_SQLITE_CANTOPEN = 14


def open_database(
    path: str | os.PathLike[str] = DEFAULT_DB,
    *,
    create: bool = True,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> sqlite_utils.Database:
    """Open a session database, applying the schema migrations it still lacks.

    Args:
        path: the SQLite file.
        create: create the file (and its folder) when missing; with ``False`` a missing file is an
            error and nothing is created.
        busy_timeout: seconds a statement waits for another connection's lock (see
            :data:`DEFAULT_BUSY_TIMEOUT`).

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
        conn = sqlite3.connect(str(path), timeout=busy_timeout)
        db = sqlite_utils.Database(conn)
        _check_ours(db, path)  # read-only: a foreign file must not even be switched to WAL
        db.execute("PRAGMA foreign_keys = ON")
        _enable_wal(db, busy_timeout)
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


def open_for_reading(
    path: str | os.PathLike[str], *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> sqlite_utils.Database:
    """Open an existing session database to read it, also where it cannot be written.

    Where the file and its folder can be written, this is ``open_database(path, create=False)``
    (runs whose process is gone are marked interrupted, an older schema is upgraded). Where they
    cannot (a read-only file, folder or mount), the file is opened read-only and nothing is
    written: no WAL switch, no ``-shm`` file, no marking. An older schema is then upgraded in an
    in-memory copy, so the reader still finds every column it expects. Either way, writing through
    a read-only connection fails ("attempt to write a readonly database") instead of being lost.

    Args:
        path: the SQLite file; it is never created.
        busy_timeout: seconds a statement waits for another connection's lock.

    Raises:
        PlaygroundError: no file at ``path`` (nothing is created), or a file that cannot be read
            as a session database.
    """
    path = Path(path)
    try:
        return open_database(path, create=False, busy_timeout=busy_timeout)
    except errors.PlaygroundError as exc:
        if not _cannot_write(exc.__cause__):
            raise
    return _open_read_only(path, busy_timeout)


def open_read_only(
    path: str | os.PathLike[str], *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> sqlite_utils.Database:
    """A connection that only reads an existing session database, wherever it lies.

    For a worker thread beside the connection that opened the file (sqlite3 connections belong to
    the thread that made them): nothing is written, not even the marking or upgrading that
    :func:`open_database` does, so it cannot hold up that connection's writes.

    Raises:
        PlaygroundError: no file at ``path``, or a file that cannot be read as a session database.
    """
    path = Path(path)
    if not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    return _open_read_only(path, busy_timeout)


def database_path(db: sqlite_utils.Database) -> Path | None:
    """The absolute path of the file behind ``db`` (None for a database in memory)."""
    for _, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(file)
    return None


def _cannot_write(exc: BaseException | None) -> bool:
    """True for SQLite's "this place is read-only" failures (file, folder, mount, -shm)."""
    if not isinstance(exc, sqlite3.Error):
        return False
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return code in (_SQLITE_READONLY, _SQLITE_CANTOPEN)


def _open_read_only(path: Path, busy_timeout: float) -> sqlite_utils.Database:
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn: sqlite3.Connection | None = None
    try:
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout)
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as exc:
            if not _cannot_write(exc):
                raise
            if conn is not None:
                conn.close()
            # A WAL database in a folder that cannot be written: SQLite cannot create the -shm
            # file that readers share. With no write-ahead log left to read (the last writer
            # closed cleanly), the main file holds everything, and no writer can start in such a
            # folder (it would need to create the log): read the file as it stands.
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise errors.PlaygroundError(
                    f"{path}: cannot read it here: its folder is read-only and {wal.name} holds "
                    "changes not yet in the database file; open it once where it can be written"
                ) from exc
            conn = sqlite3.connect(f"{uri}&immutable=1", uri=True, timeout=busy_timeout)
        db = sqlite_utils.Database(conn)
        _check_ours(db, path)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            _too_new(version)
        if version < len(MIGRATIONS):
            # An older schema cannot be upgraded in place here: upgrade a copy in memory.
            copy = sqlite3.connect(":memory:")
            conn.backup(copy)
            conn.close()
            conn = copy
            db = sqlite_utils.Database(conn)
            _migrate(db)
        conn.execute("PRAGMA query_only = ON")  # a write through this handle fails loudly
    except (errors.PlaygroundError, sqlite3.Error, OSError) as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, errors.PlaygroundError):
            raise
        raise errors.PlaygroundError(f"{path}: not a usable session database ({exc})") from exc
    return db


def database_file(db: sqlite_utils.Database) -> str:
    """The file behind ``db`` as a user would name it: relative to the working folder when inside
    it, else absolute (``:memory:`` for a database in memory)."""
    for _, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main":
            if not file:
                return ":memory:"
            try:
                return str(Path(file).relative_to(Path.cwd()))
            except ValueError:
                return str(file)
    return ":memory:"


def _enable_wal(db: sqlite_utils.Database, wait: float = DEFAULT_BUSY_TIMEOUT) -> None:
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
        _too_new(version)
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


def _too_new(version: int) -> NoReturn:
    raise errors.PlaygroundError(
        f"the database schema (version {version}) is newer than this app understands ({len(MIGRATIONS)})"
    )


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


def alive(pid: int) -> bool:
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
        if pid != os.getpid() and (h != host or not pid or not alive(pid))
    ]
    with db.conn:
        for sid in dead:
            db.execute(
                "UPDATE sessions SET status = 'interrupted', end_reason = 'the process ended before the session finished' WHERE id = ?",
                [sid],
            )
    return len(dead)
