"""A process killed mid-simulation leaves a readable session marked interrupted."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from playground.storage import SessionReader, open_database

REPO = Path(__file__).resolve().parents[2]


def _start(db_path: Path) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "playground",
        "simulate",
        "--agents",
        "4",
        "--turns",
        "500",
        "--max-silent-steps",
        "100",
        "--seed",
        "1",
        "--engine",
        "offline",
        "--db",
        str(db_path),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _wait_for_messages(db_path: Path, proc: subprocess.Popen, n: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "exited"
        if db_path.exists():
            db = open_database(db_path)
            try:
                if db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] >= n:
                    return
            finally:
                db.close()
        time.sleep(0.2)
    raise AssertionError("the simulation never got going")


def test_sigkill_mid_run_leaves_an_interrupted_readable_session(tmp_path):
    db_path = tmp_path / "crash.db"
    proc = _start(db_path)
    try:
        _wait_for_messages(db_path, proc, 3)
        proc.kill()  # SIGKILL: no handler runs
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    db = open_database(db_path)  # opening marks runs whose process is gone
    sessions = SessionReader(db).list_sessions()
    assert len(sessions) == 1
    assert sessions[0]["status"] == "interrupted"
    data = SessionReader(db).load(sessions[0]["id"])
    assert len(data["messages"]) >= 3
    assert data["thoughts"]
    assert data["decisions"]


def test_sigterm_marks_the_session_interrupted_itself(tmp_path):
    db_path = tmp_path / "term.db"
    proc = _start(db_path)
    try:
        _wait_for_messages(db_path, proc, 2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 143  # 128 + SIGTERM, as a shell reports it
    finally:
        if proc.poll() is None:
            proc.kill()
    import sqlite3

    conn = sqlite3.connect(
        db_path
    )  # read without the app's helper: the process wrote the status itself
    status, reason = conn.execute("SELECT status, end_reason FROM sessions").fetchone()
    conn.close()
    assert status == "interrupted"
    assert reason
