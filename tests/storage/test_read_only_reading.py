"""Reading never writes (issue 23): ``sessions``, ``show`` and ``export`` read a database on a
full disk, show a run whose process is gone as interrupted without marking it, and refuse an
empty file or a newer schema by name without touching it; ``merge`` names the source it cannot read.

Every case runs ``python -m playground`` as a subprocess on real SQLite files. A full disk is a
small tmpfs filled to the last block where this process may mount one (root in a container), and
a file-size limit (``RLIMIT_FSIZE``, ``SIGXFSZ`` ignored) on the command otherwise: under it no file
the command touches can grow, as on a disk with no block left.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from playground import domain, events
from playground.storage import SessionRecorder, open_database
from playground.storage.schema import MIGRATIONS
from tests.support.faults import read_only

REPO = Path(__file__).resolve().parents[2]
AT = "2025-01-01T00:00:00+00:00"
FINISHED = "20250101-000000-fini"
DEAD = "20250101-000001-dead"
DEAD_REASON = "the process ended before the session finished"

Preexec = Callable[[], None] | None


def _run(*argv: str, preexec: Preexec = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "playground", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=preexec,
    )


def _publish(db: sqlite_utils.Database, sid: str, *, finish: bool, messages: int = 3) -> None:
    """One session written through the real recorder."""
    bus = events.EventBus()
    recorder = SessionRecorder(db)
    recorder.attach(bus)
    stamp = {"session_id": sid, "at": AT}
    seq = iter(range(1, 100))
    bus.publish(
        events.SessionStarted(
            **stamp,
            seq=next(seq),
            engine="offline engine",
            model="offline",
            seed=0,
            condition="inner-thoughts",
            settings={},
        )
    )
    bus.publish(events.ParticipantJoined(**stamp, seq=next(seq), name="Ana", participant_kind="ai"))
    for i in range(1, messages + 1):
        msg = domain.Message(id=i, speaker="Ana", text=f"{sid} says {i}", step=i, at=AT)
        bus.publish(events.MessagePosted(**stamp, seq=next(seq), message=msg))
    if finish:
        bus.publish(
            events.SessionFinished(**stamp, seq=next(seq), status="finished", reason="done")
        )
    recorder.detach()


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _database(path: Path) -> Path:
    """A finished session and one still `running` whose process is gone; closed cleanly (WAL, no
    -wal or -shm file left)."""
    db = open_database(path)
    _publish(db, FINISHED, finish=True)
    _publish(db, DEAD, finish=False)
    with db.conn:
        db.execute(
            "UPDATE sessions SET pid = ?, host = ? WHERE id = ?",
            [_dead_pid(), socket.gethostname(), DEAD],
        )
    db.close()
    return path


def _raw(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows read straight from the file, as it is (immutable: no lock, no -shm, nothing written)."""
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)) as conn:
        return conn.execute(sql).fetchall()


def _header_journal(path: Path) -> tuple[int, int]:
    """The file format bytes 18 and 19 of the header: (2, 2) in WAL mode, (1, 1) with a rollback
    journal."""
    data = path.read_bytes()[18:20]
    return data[0], data[1]


# -- a full disk ------------------------------------------------------------------------------------


def _fill(folder: Path) -> None:
    """Write into ``folder`` until its file system has no block left."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mount_tmpfs(folder: Path) -> bool:
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _no_growth() -> None:
    """In the child: no file may grow past 1 KiB (the database is larger), and the signal that
    would kill the process is ignored, so a write fails with EFBIG as a full disk's does."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


@contextmanager
def full_disk(tmp_path: Path, method: str, source: Path) -> Iterator[tuple[Path, Preexec]]:
    """A copy of ``source`` on a full disk; yields its path and the ``preexec_fn`` to run the
    command with."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if method == "tmpfs":
        if not _mount_tmpfs(folder):
            pytest.skip("cannot mount a tmpfs here (not root, or no mount in this container)")
        try:
            copy = folder / source.name
            copy.write_bytes(source.read_bytes())
            _fill(folder)
            yield copy, None
        finally:
            subprocess.run(["umount", "-l", str(folder)], check=False)
        return
    copy = folder / source.name
    copy.write_bytes(source.read_bytes())
    yield copy, _no_growth


@pytest.mark.parametrize("method", ["tmpfs", "fsize"])
def test_sessions_show_and_export_read_a_database_on_a_full_disk(tmp_path, method):
    source = _database(tmp_path / "s.db")
    with full_disk(tmp_path, method, source) as (path, preexec):
        content = path.read_bytes()
        listing = _run("sessions", "--db", str(path), preexec=preexec)
        shown = _run("show", FINISHED, "--db", str(path), preexec=preexec)
        exported = _run("export", FINISHED, DEAD, "--db", str(path), preexec=preexec)
        assert path.read_bytes() == content
    for done in (listing, shown, exported):
        assert done.returncode == 0, done.stderr
        assert not done.stderr, done.stderr
    assert FINISHED in listing.stdout
    assert DEAD in listing.stdout
    assert f"{FINISHED} says 3" in shown.stdout
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [(r["session"]["id"], r["session"]["status"]) for r in records] == [
        (FINISHED, "finished"),
        (DEAD, "interrupted"),
    ]


def test_a_run_whose_process_is_gone_is_shown_interrupted_without_writing(tmp_path):
    path = _database(tmp_path / "s.db")
    content = path.read_bytes()
    listing = _run("sessions", "--db", str(path))
    shown = _run("show", DEAD, "--db", str(path), "--json")
    assert listing.returncode == 0, listing.stderr + shown.stderr
    assert shown.returncode == 0, listing.stderr + shown.stderr
    row = next(line for line in listing.stdout.splitlines() if line.startswith(DEAD))
    assert row.split()[2] == "interrupted"
    session = json.loads(shown.stdout)["session"]
    assert (session["status"], session["end_reason"]) == ("interrupted", DEAD_REASON)
    assert _raw(path, f"SELECT status FROM sessions WHERE id = '{DEAD}'") == [("running",)]
    assert path.read_bytes() == content
    # A writer still marks it, once, in the file.
    open_database(path).close()
    assert _raw(path, f"SELECT status, end_reason FROM sessions WHERE id = '{DEAD}'") == [
        ("interrupted", DEAD_REASON)
    ]


def test_a_log_with_changes_but_no_shm_in_a_read_only_folder_is_refused_by_name(tmp_path):
    live = _database(tmp_path / "live.db")
    folder = tmp_path / "archive"
    folder.mkdir()
    path = folder / "s.db"
    with closing(sqlite3.connect(live)) as writer:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        with writer:
            writer.execute("UPDATE sessions SET model = 'changed'")
        # Copied while the writer is open: the change is only in the log, and no -shm comes along.
        path.write_bytes(live.read_bytes())
        Path(f"{path}-wal").write_bytes(Path(f"{live}-wal").read_bytes())
    assert Path(f"{path}-wal").stat().st_size > 0
    with read_only(folder) as prefix:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "playground", "sessions", "--db", str(path)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"error: {path}: cannot read it here: SQLite cannot create its shared-memory file (a"
        " read-only folder or a full disk) and s.db-wal holds changes not yet in the database"
        " file; open it once where it can be written"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["s.db", "s.db-wal"]


# -- files that are not (yet) ours ------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["sessions"], ["show", "2025"], ["export", "--all"]], ids=lambda c: c[0]
)
def test_an_empty_file_is_not_a_session_database_and_stays_empty(tmp_path, command):
    path = tmp_path / "EMPTY.db"
    path.touch()
    done = _run(*command, "--db", str(path))
    assert done.returncode == 1, done.stdout
    assert done.stderr.strip() == f"error: {path}: not a session database (an empty file)"
    assert path.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["EMPTY.db"]


def _newer(path: Path) -> bytes:
    """A session database one schema version ahead of this app, in rollback-journal mode."""
    with closing(sqlite3.connect(path)) as conn:
        for script in MIGRATIONS:
            conn.executescript(script)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
        conn.commit()
    assert _header_journal(path) == (1, 1)
    return path.read_bytes()


@pytest.mark.parametrize(
    "command",
    [["sessions"], ["show", "2025"], ["export", "--all"], ["import", "x.jsonl"]],
    ids=lambda c: c[0],
)
def test_a_newer_schema_is_refused_by_name_before_anything_is_written(tmp_path, command):
    path = tmp_path / "newer.db"
    content = _newer(path)
    done = _run(*command, "--db", str(path))
    assert _header_journal(path) == (1, 1), "switched to WAL before it was refused"
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"error: {path}: the database schema (version {len(MIGRATIONS) + 1}) is newer than this"
        f" app understands ({len(MIGRATIONS)})"
    )
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["newer.db"]


def test_merge_names_the_source_it_cannot_read(tmp_path):
    source = tmp_path / "shard.db"
    db = open_database(source)
    _publish(db, FINISHED, finish=True, messages=40)
    db.close()
    (root,) = _raw(source, "SELECT rootpage FROM sqlite_master WHERE name = 'messages'")[0]
    (page_size,) = _raw(source, "PRAGMA page_size")[0]
    data = bytearray(source.read_bytes())
    start = (int(root) - 1) * int(page_size)
    data[start : start + int(page_size)] = b"\xff" * int(page_size)  # the messages are gone
    source.write_bytes(bytes(data))
    out = tmp_path / "out.db"
    done = _run("merge", str(out), str(source))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert line.startswith(f"error: {source}: cannot read it (database disk image is malformed)")
    assert str(out) not in line
    assert not out.exists()
