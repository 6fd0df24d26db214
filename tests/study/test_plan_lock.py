"""One runner per study plan, and ``study list`` telling the truth about it: real runners in
subprocesses (``python -m playground study …`` on the offline engine) over a real SQLite file,
stopped by SIGKILL, SIGTERM and SIGINT, and starts that fail because the port is taken."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from playground import personas
from playground.cli import main as cli
from playground.clock import SystemClock
from playground.rating.user_study import USER_STUDY_METRICS
from playground.settings import load_settings
from playground.storage import open_database
from playground.study.plan import create_plan
from testbed.study import open_browser

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def new_plan(db: Path, minutes: float = 5.0) -> str:
    saved = open_database(db)
    try:
        return create_plan(
            saved, personas.load_personas(), load_settings({}, {"engine": "offline"}),
            humans=2, group=0, seed=0, minutes=minutes, now=SystemClock().now_iso(),
        )  # fmt: skip
    finally:
        saved.close()


class Runner:
    """``playground study resume PLAN`` in a subprocess, up until it printed its links."""

    def __init__(self, db: Path, plan_id: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "playground", "study", "resume", plan_id, "--engine",
             "offline", "--port", "0", "--db", str(db)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.links = [self.proc.stdout.readline().strip() for _ in range(2)]
        assert all("/join/" in link for link in self.links), self.finish()
        self.origin = self.links[0].split("/join/")[0]

    def finish(self) -> tuple[int, str]:
        """Its exit code and what it wrote on standard error."""
        _, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, err


@pytest.fixture
def plan(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "study.db"
    return db, new_plan(db)


def test_a_second_runner_of_a_running_plan_is_refused_and_changes_nothing(plan):
    db, plan_id = plan
    first = Runner(db, plan_id)
    try:
        before = rows(db, "SELECT position, status, session_id FROM plan_steps")
        sessions = rows(db, "SELECT id, status FROM sessions")
        assert len(sessions) == 1
        code, out, err = run(
            "study", "resume", plan_id, "--engine", "offline", "--port", "0", "--db", str(db)
        )
        assert (code, out) == (1, "")  # no links, no session id
        assert f"already being run by process {first.proc.pid}" in err
        assert first.origin in err
        assert "Traceback" not in err
        assert rows(db, "SELECT position, status, session_id FROM plan_steps") == before
        assert rows(db, "SELECT id, status FROM sessions") == sessions

        code, out, _ = run("study", "list", "--db", str(db))
        assert f"running (conversation 1 of 3, talking; process {first.proc.pid} at" in out
        assert first.origin in out
    finally:
        first.proc.kill()
        first.finish()
    # SIGKILL: the lock is left in the database, but its process is gone.
    code, out, _ = run("study", "list", "--db", str(db))
    assert f"{plan_id}  group 0  2 people  stopped (conversation 1 of 3, talking)  0/3" in out
    # A stale lock is taken over: the plan resumes, with the same links.
    second = Runner(db, plan_id)
    assert [x.split("/join/")[1] for x in second.links] == [
        x.split("/join/")[1] for x in first.links
    ]
    second.proc.send_signal(signal.SIGTERM)
    code, err = second.finish()
    assert code == 128 + signal.SIGTERM, err
    assert f"Resume with: playground study resume {plan_id}" in err
    code, out, _ = run("study", "list", "--db", str(db))
    assert "stopped (conversation 1 of 3, talking)" in out
    assert rows(db, "SELECT runner_pid FROM study_plans") == [(None,)]


@pytest.mark.asyncio
async def test_a_plan_shows_its_progress_and_ctrl_c_leaves_it_stopped(tmp_path):
    db = tmp_path / "study.db"
    plan_id = new_plan(db, minutes=0.05)  # 3 seconds
    runner = Runner(db, plan_id)
    ivy, _ = await open_browser(runner.links[0], runner.origin)
    await ivy.send(type="join", name="Ivy")
    await ivy.until(lambda p: p["type"] == "you")
    await ivy.until(lambda p: p["type"] == "ended", 60)
    await ivy.send(type="questionnaire", answers={m.key: 5 for m in USER_STUDY_METRICS})
    await ivy.until(lambda p: p["type"] == "phase" and p["phase"] == "wait", 30)
    await asyncio.sleep(1)  # the runner looks four times a second
    await ivy.session.close()
    runner.proc.send_signal(signal.SIGINT)
    code, err = runner.finish()
    assert code == 130, err
    lines = [line for line in err.splitlines() if line and not line.startswith("http")]
    assert lines[lines.index("Ivy joined (1 of 2).") - 1].startswith("Conversation 1 of 3 (")
    assert lines[lines.index("Ivy joined (1 of 2).") - 1].endswith("): talking.")
    after = lines[lines.index("Ivy joined (1 of 2).") + 1 :]
    assert after[:2] == [
        "Conversation 1 of 3: reviewing.",
        "Ivy answered (1 of 1 in, conversation 1 of 3).",
    ]  # everyone who joined has answered: the next conversation begins
    assert after[2].startswith("Conversation 2 of 3 (")
    assert lines[-2:] == [f"Stopped. Resume with: playground study resume {plan_id}", "interrupted"]
    code, out, _ = run("study", "list", "--db", str(db))
    assert "stopped (conversation 2 of 3, talking)  1/3 conversations" in out
    assert "running" not in out


def test_a_lock_of_a_process_that_is_gone_or_another_boot_is_stale(plan):
    from playground.study import lock

    db, plan_id = plan
    me = lock.me()
    assert lock.alive(me)
    assert not lock.alive({**me, "boot": "another boot"})
    assert not lock.alive({**me, "host": "another-host"})
    assert not lock.alive({**me, "started": "1"})  # the pid now belongs to another process
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert not lock.alive({**me, "pid": int(done.stdout)})
    saved = open_database(db)
    try:
        held = lock.RunnerLock(saved, plan_id)
        held.take()
        other = lock.RunnerLock(saved, plan_id)
        with pytest.raises(lock.PlanBusy, match=f"process {os.getpid()} .*not listening yet"):
            other.take()
        other.release()  # not its lock: nothing happens
        assert rows(db, "SELECT runner_pid FROM study_plans") == [(os.getpid(),)]
        held.release()
        other.take()
        other.release()
    finally:
        saved.close()


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_a_new_plan_that_cannot_listen_leaves_nothing_behind(tmp_path, taken_port):
    db = tmp_path / "study.db"
    code, out, err = run(
        "study", "new", "--engine", "offline", "--port", str(taken_port), "--db", str(db)
    )
    assert (code, out) == (1, "")
    assert f"cannot listen on 127.0.0.1:{taken_port}" in err
    assert "was not started, and is not kept" in err
    assert "Traceback" not in err
    assert rows(db, "SELECT COUNT(*) FROM study_plans") == [(0,)]
    assert rows(db, "SELECT COUNT(*) FROM sessions") == [(0,)]


def test_a_resume_that_cannot_listen_leaves_the_plan_as_it_was(plan, taken_port):
    db, plan_id = plan
    code, out, err = run(
        "study", "resume", plan_id, "--engine", "offline", "--port", str(taken_port),
        "--db", str(db),
    )  # fmt: skip
    assert (code, out) == (1, "")
    assert f"cannot listen on 127.0.0.1:{taken_port}" in err
    assert rows(db, "SELECT status, session_id FROM plan_steps") == [("pending", None)] * 3
    assert rows(db, "SELECT COUNT(*) FROM sessions") == [(0,)]
    assert rows(db, "SELECT runner_pid FROM study_plans") == [(None,)]
    code, out, _ = run("study", "list", "--db", str(db))
    assert f"{plan_id}  group 0  2 people  not started (at conversation 1 of 3)  0/3" in out
