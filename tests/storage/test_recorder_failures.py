"""A failed write is a failed run; reads need no write access (issue 8).

The CLI cases run ``python -m playground`` as a subprocess on real SQLite files. A read-only place
is made with permissions, or, for root (whom permissions do not stop), with a read-only bind mount
in a private mount namespace; where neither is possible the test is skipped. A held write lock
(another connection's ``BEGIN IMMEDIATE``) is the fault that needs neither.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from playground import domain, errors, events
from playground.storage import SessionRecorder, open_database
from playground.storage.database import DEFAULT_BUSY_TIMEOUT
from playground.storage.schema import MIGRATIONS
from tests.support.faults import read_only
from tests.support.rooms import SESSION_TABLES

REPO = Path(__file__).resolve().parents[2]
SID = "20250101-000000-abcd"
AT = "2025-01-01T00:00:00+00:00"
SAVED = re.compile(r"(\d+) messages? (?:were|was) saved before")


# -- helpers -----------------------------------------------------------------------------------------


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "playground", *argv]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300, check=False
    )


def _publish_session(db_path: Path, *, messages: int = 2) -> str:
    """A small finished session written through the real recorder."""
    db = open_database(db_path)
    bus = events.EventBus()
    SessionRecorder(db).attach(bus)
    seq = iter(range(1, 100))
    stamp = {"session_id": SID, "at": AT}
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
        msg = domain.Message(id=i, speaker="Ana", text=f"hello {i}", step=i, at=AT)
        bus.publish(events.MessagePosted(**stamp, seq=next(seq), message=msg))
    bus.publish(events.SessionFinished(**stamp, seq=next(seq), status="finished", reason="done"))
    db.close()  # a clean close: no -wal or -shm file is left
    return SID


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _assert_one_clear_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    assert not re.search(r"^(ERROR|WARNING|CRITICAL) ", stderr, re.M), stderr
    lines = _error_lines(stderr)
    assert len(lines) == 1, stderr
    return lines[0]


def _wait_for_messages(db_path: Path, proc: subprocess.Popen[str], n: int) -> None:
    deadline = time.monotonic() + 180
    uri = f"{db_path.resolve().as_uri()}?mode=ro"
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before {n} messages"
        with closing(sqlite3.connect(uri, uri=True, timeout=10)) as conn:
            if conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] >= n:
                return
        time.sleep(0.05)
    raise AssertionError("the simulation never got going")


def _write_lock(db_path: Path) -> sqlite3.Connection:
    """Another connection holding the write lock (it waits its turn between the run's writes)."""
    conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def _start_simulation(db_path: Path, *flags: str) -> subprocess.Popen[str]:
    """``simulate`` in the background; its output goes to ``<db>.out`` and ``<db>.err``."""
    out = db_path.with_suffix(".out").open("w")
    err = db_path.with_suffix(".err").open("w")
    return subprocess.Popen(
        _cli("simulate", "--engine", "offline", "--seed", "3", "--db", str(db_path), *flags),
        cwd=REPO,
        env=_env(),
        stdout=out,
        stderr=err,
        text=True,
    )


def _counts(db_path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(db_path)) as conn:
        return {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("sessions", *SESSION_TABLES)
        }


# -- the event bus -----------------------------------------------------------------------------------


def test_a_required_subscriber_failure_reaches_the_publisher_after_every_listener(caplog):
    bus = events.EventBus()
    before: list[events.BaseEvent] = []
    after: list[events.BaseEvent] = []

    def recorder(e):
        raise errors.RecordingError("x.db", "disk full", session_id="", saved_messages=0)

    def broken_widget(e):
        raise RuntimeError("the window is gone")

    bus.subscribe(before.append)
    bus.subscribe(recorder, required=True)
    bus.subscribe(broken_widget)
    bus.subscribe(after.append)
    with caplog.at_level(logging.ERROR), pytest.raises(errors.RecordingError, match="disk full"):
        bus.publish(events.ParticipantLeft(name="Ana"))
    assert len(before) == len(after) == 1, "every other subscriber still had the event"
    assert isinstance(bus.failure, errors.RecordingError)
    assert "event handler failed" in caplog.text, "a listener's failure is still only logged"
    assert "disk full" not in caplog.text, "the required one is raised, not logged"


# -- the recorder ---------------------------------------------------------------------------------


def test_after_a_failed_write_nothing_more_is_written_and_the_session_is_marked_failed(tmp_path):
    path = tmp_path / "r.db"
    db = open_database(path, busy_timeout=0.05)
    bus = events.EventBus()
    recorder = SessionRecorder(db)
    recorder.attach(bus)
    stamp = {"session_id": SID, "at": AT}
    bus.publish(
        events.SessionStarted(
            **stamp, seq=1, engine="e", model="m", seed=0, condition="inner-thoughts", settings={}
        )
    )
    bus.publish(events.ParticipantJoined(**stamp, seq=2, name="Ana", participant_kind="ai"))

    def post(i: int) -> None:
        msg = domain.Message(id=i, speaker="Ana", text=f"hi {i}", step=i, at=AT)
        bus.publish(events.MessagePosted(**stamp, seq=2 + i, message=msg))

    post(1)
    lock = _write_lock(path)
    with pytest.raises(errors.RecordingError) as caught:
        post(2)
    lock.execute("ROLLBACK")  # the database could be written again...
    with pytest.raises(errors.RecordingError):
        post(3)  # ...but a record with a hole in it would pass for a whole one
    bus.publish(events.SessionFinished(**stamp, seq=9, status="interrupted", reason="stopped"))
    db.close()
    text = str(caught.value)
    assert f"could not save to {path}: database is locked" in text
    assert "1 message was saved before" in text
    assert "the session is marked failed" in text
    with closing(sqlite3.connect(path)) as conn:
        status, reason = conn.execute("SELECT status, end_reason FROM sessions").fetchone()
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 1
    assert status == "failed"
    assert "database is locked" in reason


def test_the_default_busy_timeout_outlasts_a_12_second_lock(tmp_path):
    db = open_database(tmp_path / "t.db")
    try:
        waits_ms = db.execute("PRAGMA busy_timeout").fetchone()[0]
    finally:
        db.close()
    assert waits_ms == DEFAULT_BUSY_TIMEOUT * 1000
    assert waits_ms >= 12_000


# -- simulate: a failed write is a failed run -----------------------------------------------------


def test_simulate_on_a_read_only_database_fails_with_one_clear_line(tmp_path):
    path = tmp_path / "ro.db"
    open_database(path).close()
    with read_only(path) as prefix:
        done = _run(
            prefix + _cli("simulate", "--engine", "offline", "--turns", "3", "--db", str(path))
        )
    line = _assert_one_clear_line(done.stderr)
    assert done.returncode == 1
    assert str(path) in line
    assert "readonly database" in line
    assert "nothing was saved" in line
    assert not re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", done.stdout.strip().splitlines()[-1])
    assert _counts(path)["sessions"] == 0


def test_a_lock_held_past_the_busy_timeout_stops_the_run_loudly(tmp_path):
    path = tmp_path / "locked.db"
    open_database(path).close()
    proc = _start_simulation(path, "--turns", "40", "--busy-timeout", "0.2")
    lock = None
    try:
        _wait_for_messages(path, proc, 2)
        lock = _write_lock(path)
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
        if lock is not None:
            lock.execute("ROLLBACK")
            lock.close()
    stderr = path.with_suffix(".err").read_text()
    stdout = path.with_suffix(".out").read_text()
    line = _assert_one_clear_line(stderr)
    assert code == 1
    assert f"could not save to {path}: database is locked" in line
    saved = SAVED.search(line)
    assert saved, line
    assert _counts(path)["messages"] == int(saved.group(1)) < 40, "the line says what was saved"
    assert not re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", stdout.strip().splitlines()[-1])


def test_a_12_second_lock_is_waited_out_and_nothing_is_lost(tmp_path):
    """The issue's case: another process held the write lock for 12 s (the old 10 s timeout lost
    a row, and the run still said `finished`). The default busy timeout waits it out: the run
    saves exactly what the same seeded run saves with no lock in its way."""
    path, reference = tmp_path / "locked.db", tmp_path / "reference.db"
    open_database(path).close()
    procs = [
        _start_simulation(path, "--turns", "12"),
        _start_simulation(reference, "--turns", "12"),
    ]
    try:
        _wait_for_messages(path, procs[0], 2)
        lock = _write_lock(path)
        time.sleep(12)  # the run's next write waits this out
        lock.execute("ROLLBACK")
        lock.close()
        codes = [proc.wait(180) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert codes == [0, 0], path.with_suffix(".err").read_text()
    stderr = path.with_suffix(".err").read_text()
    assert "Traceback" not in stderr, stderr
    assert "error" not in stderr.lower(), stderr
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT status FROM sessions").fetchone()[0] == "finished"
    assert _counts(path) == _counts(reference)
    assert _counts(path)["messages"] == 12


# -- sessions and show: reads need no write access ---------------------------------------------------


def test_sessions_and_show_read_a_database_in_a_read_only_folder(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    path = folder / "s.db"
    sid = _publish_session(path)
    before = sorted(p.name for p in folder.iterdir())
    with read_only(folder) as prefix:
        listing = _run(prefix + _cli("sessions", "--db", str(path)))
        shown = _run(prefix + _cli("show", sid[:10], "--db", str(path)))
    assert listing.returncode == 0, listing.stderr
    assert sid in listing.stdout
    assert "finished" in listing.stdout
    assert shown.returncode == 0, shown.stderr
    assert "hello 2" in shown.stdout
    assert sorted(p.name for p in folder.iterdir()) == before == ["s.db"]


def test_report_and_export_read_a_database_in_a_read_only_folder(tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    path = folder / "s.db"
    sid = _publish_session(path)
    out = tmp_path / "out.jsonl"
    with read_only(folder) as prefix:
        report = _run(prefix + _cli("report", "--db", str(path), "--format", "json"))
        export = _run(prefix + _cli("export", sid, "--db", str(path), "--output", str(out)))
    assert report.returncode == 0, report.stderr
    assert export.returncode == 0, export.stderr
    assert sid in out.read_text()
    assert "hello 2" in out.read_text()
    assert sorted(p.name for p in folder.iterdir()) == ["s.db"]


def test_an_older_schema_in_a_read_only_folder_is_read_through_an_upgraded_copy(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    path = folder / "old.db"
    old = len(MIGRATIONS) - 1
    with closing(sqlite3.connect(path)) as conn:
        for number, script in enumerate(MIGRATIONS[:old], start=1):
            conn.executescript(script)
            conn.execute(f"PRAGMA user_version = {number}")
        conn.execute(
            "INSERT INTO sessions (id, created_at, status, engine, model, config)"
            " VALUES (?, ?, 'finished', 'offline engine', 'offline', '{}')",
            [SID, AT],
        )
        conn.commit()
    content = path.read_bytes()
    with read_only(folder) as prefix:
        listing = _run(prefix + _cli("sessions", "--db", str(path)))
        shown = _run(prefix + _cli("show", SID, "--db", str(path), "--json"))
    assert listing.returncode == 0, listing.stderr
    assert SID in listing.stdout
    assert shown.returncode == 0, shown.stderr
    assert '"status": "finished"' in shown.stdout
    assert path.read_bytes() == content, "the file itself was not touched"


@pytest.mark.parametrize("command", [["sessions"], ["show", "abc"]], ids=["sessions", "show"])
def test_a_mistyped_path_creates_nothing_and_says_there_is_no_database(tmp_path, command):
    path = tmp_path / "typo" / "nested" / "sessions.db"
    done = _run(_cli(*command, "--db", str(path)))
    line = _assert_one_clear_line(done.stderr)
    assert done.returncode == 1
    assert line == f"error: no database at {path}"
    assert not (tmp_path / "typo").exists()
