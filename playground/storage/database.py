"""Open the session database: WAL, foreign keys on, migrations applied, dead runs marked interrupted.

That is for writers. Readers (``playground sessions``, ``show``, ``export``, ``report``) use
:func:`open_for_reading`: a read-only connection from the start, which writes nothing, so a full
disk, a read-only mount or a newer app's file cannot make reading fail or change the file. They
read each session inside one :func:`snapshot`, and show a run whose process is gone as
interrupted (:func:`as_read`) without marking it.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

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
#: The end reason of a run whose process ended without saying so (killed, or the machine stopped).
DEAD_REASON = "the process ended before the session finished"
# SQLite primary result codes (the low byte of an extended code).
_SQLITE_IOERR = 10
_SQLITE_READONLY = 8
_SQLITE_FULL = 13
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
        PlaygroundError: no file (``create=False``), a file that is not a usable SQLite database, a
            SQLite database of another application, or one of a newer schema than this app's;
            such a file is left untouched.
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
        _check_ours(db, path)  # read-only: a foreign or newer file must not even be switched to WAL
        db.execute("PRAGMA foreign_keys = ON")
        _enable_wal(db, busy_timeout)
        db.execute("PRAGMA synchronous = NORMAL")
        _migrate(db, path)
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
    """Open an existing session database to read it, writing nothing, wherever it lies.

    Reading must not need what writing needs: on a full disk, a read-only mount, in a read-only
    file or folder, or beside a newer app, ``sessions``, ``show`` and ``export`` still work and
    leave the file as it was. So the file is opened read-only from the start: no WAL switch, no
    migration, no marking of dead runs (readers show them as interrupted, see :func:`as_read`;
    the next writer marks them). An older schema is upgraded in an in-memory copy, so the reader
    still finds every column it expects. A write through the connection fails ("attempt to write
    a readonly database") instead of being lost.

    In a folder it may write, SQLite creates the ``-wal`` and ``-shm`` files every connection to a
    WAL database shares (empty until a writer comes). Where it cannot (a read-only folder, a full
    disk), the database file is read as it stands, provided no ``-wal`` file holds changes not yet
    in it; otherwise the file is refused with a message saying so.

    Args:
        path: the SQLite file; it is never created.
        busy_timeout: seconds a statement waits for another connection's lock.

    Raises:
        PlaygroundError: no file at ``path`` (nothing is created), an empty file, a file that
            cannot be read as a session database, or one of a newer schema (named, untouched).
    """
    path = Path(path)
    if not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    try:
        empty = path.stat().st_size == 0
    except OSError as exc:
        raise errors.PlaygroundError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    if empty:
        # An empty file is a valid SQLite database with nothing in it: reading it would answer "no
        # sessions" about a file that is no session database, and could leave -wal/-shm beside it.
        raise errors.PlaygroundError(f"{path}: not a session database (an empty file)")
    return _open_read_only(path, busy_timeout)


def open_read_only(
    path: str | os.PathLike[str], *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> sqlite_utils.Database:
    """A connection that only reads an existing session database: :func:`open_for_reading`.

    For a worker thread beside the connection that opened the file (sqlite3 connections belong to
    the thread that made them): it writes nothing, so it cannot hold up that connection's writes.

    Raises:
        PlaygroundError: as :func:`open_for_reading`.
    """
    return open_for_reading(path, busy_timeout=busy_timeout)


@contextmanager
def snapshot(db: sqlite_utils.Database) -> Iterator[None]:
    """Run the block's reads inside one read transaction: in WAL mode they all see the database
    as it stood at the first of them, whatever another process commits meanwhile.

    A session read table by table outside one (a recorder writing it between two statements)
    comes back with messages whose thought is missing, or counts that disagree with its event
    log. Inside a transaction already open on ``db``, the block simply joins it. Nothing may be
    written in the block.
    """
    conn = db.conn
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):  # the error that got us here is the one to report
                conn.execute("ROLLBACK")
        raise
    if conn.in_transaction:
        conn.execute("COMMIT")


def database_path(db: sqlite_utils.Database) -> Path | None:
    """The absolute path of the file behind ``db`` (None for a database in memory)."""
    for _, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(file)
    return None


def _cannot_write(exc: BaseException | None) -> bool:
    """True for SQLite's "nothing can be created or grown here" failures: a read-only file,
    folder or mount, or a full disk (the -shm file cannot be created or sized)."""
    if not isinstance(exc, sqlite3.Error):
        return False
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return code in (_SQLITE_READONLY, _SQLITE_CANTOPEN, _SQLITE_FULL, _SQLITE_IOERR)


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
            # A WAL database where SQLite cannot create (or size) the -shm file that readers share:
            # a read-only folder, or a full disk. With no write-ahead log left to read (the last
            # writer closed cleanly), the main file holds everything, and no writer can get far in
            # such a place (it would need to grow the log): read the file as it stands.
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise errors.PlaygroundError(
                    f"{path}: cannot read it here: SQLite cannot create its shared-memory file "
                    f"(a read-only folder or a full disk) and {wal.name} holds changes not yet in "
                    "the database file; open it once where it can be written"
                ) from exc
            conn = sqlite3.connect(f"{uri}&immutable=1", uri=True, timeout=busy_timeout)
        db = sqlite_utils.Database(conn)
        version = _check_ours(db, path)
        if version < len(MIGRATIONS):
            # An older schema cannot be upgraded in place here: upgrade a copy in memory.
            copy = sqlite3.connect(":memory:")
            conn.backup(copy)
            conn.close()
            conn = copy
            db = sqlite_utils.Database(conn)
            _migrate(db, path)
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


def _check_ours(db: sqlite_utils.Database, path: Path) -> int:
    """Refuse a SQLite file that belongs to another application, or one of a newer schema than
    this app's, before anything is written to it. Returns its schema version."""
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
    if version > len(MIGRATIONS):
        _too_new(version, path)
    return int(version)


def _migrate(db: sqlite_utils.Database, path: Path) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        _too_new(version, path)
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


def _too_new(version: int, path: Path) -> NoReturn:
    raise errors.PlaygroundError(
        f"{path}: the database schema (version {version}) is newer than this app understands"
        f" ({len(MIGRATIONS)})"
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


def dead_sessions(db: sqlite_utils.Database) -> set[str]:
    """Sessions still 'running' whose process is gone: on this machine, no process with their id
    any more; recorded on another machine, taken as gone. This process's own are alive."""
    host = socket.gethostname()
    return {
        sid
        for sid, pid, h in db.execute(
            "SELECT id, pid, host FROM sessions WHERE status = 'running'"
        ).fetchall()
        if pid != os.getpid() and (h != host or not pid or not alive(pid))
    }


def as_read(row: dict[str, Any], dead: Collection[str]) -> dict[str, Any]:
    """A ``sessions`` row as a reader shows it: a run in ``dead`` (see :func:`dead_sessions`)
    is interrupted, as the next writer will mark it, though the file still says running."""
    if row.get("status") != "running" or row.get("id") not in dead:
        return row
    shown = {**row, "status": "interrupted"}
    if "end_reason" in row:
        shown["end_reason"] = DEAD_REASON
    return shown


def mark_dead_sessions(db: sqlite_utils.Database) -> int:
    """Sessions still 'running' whose process is gone become 'interrupted'. Returns how many."""
    dead = sorted(dead_sessions(db))
    with db.conn:
        for sid in dead:
            db.execute(
                "UPDATE sessions SET status = 'interrupted', end_reason = ? WHERE id = ?",
                [DEAD_REASON, sid],
            )
    return len(dead)
