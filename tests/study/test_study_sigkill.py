"""The issue's own scenario, end to end: a study plan run by ``python -m playground study resume``
in a subprocess, a person on its page in real Chromium, the runner SIGKILLed mid-conversation and
resumed on the same address. The open page must come back by itself to the conversation run
again, show nothing of the dead one, and file the person's reason on their own new message."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.study.test_plan_lock import ROOT, new_plan
from tests.study.test_study_browser import LAPTOP, _join, _page, _say
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _runner(db: Path, plan_id: str, port: int) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", "study", "resume", plan_id, "--engine", "offline",
         "--port", str(port), "--db", str(db)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    links = [proc.stdout.readline().strip() for _ in range(2)]
    if not all("/join/" in link for link in links):
        proc.kill()
        raise AssertionError(proc.communicate(timeout=60))
    return proc, links


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def test_after_a_sigkill_and_resume_the_open_page_shows_the_rerun_and_files_notes_there(
    tmp_path: Path,
):
    db = tmp_path / "study.db"
    plan_id = new_plan(db)
    port = _free_port()
    first, links = _runner(db, plan_id, port)
    second = None
    try:
        async with chromium() as browser:
            maya, errors = await _page(browser, links[0], LAPTOP)
            await _join(maya, "Maya")
            for text in ("First before the crash", "Second before the crash"):
                await _say(maya, text)
                await maya.wait_for_selector(f".msg.mine:has-text('{text}')")
            first.kill()  # SIGKILL: no frame, no close code, the lock left in the database
            first.communicate(timeout=60)
            await maya.wait_for_selector("#status:has-text('reconnecting')", timeout=30_000)
            second, again = _runner(db, plan_id, port)
            assert again == links  # the same seats, the same address
            await maya.wait_for_selector("#status:has-text('Connected as Maya')", timeout=30_000)
            await maya.wait_for_selector(".msg:has-text('before the crash')", state="detached")
            await _say(maya, "Back after the crash")
            await maya.wait_for_selector(".msg.mine:has-text('Back after the crash')")
            await maya.click(".msg.mine:has-text('Back after the crash') .text")
            await maya.fill(".msg form input", "why I said it")
            await maya.press(".msg form input", "Enter")
            await maya.wait_for_selector(".mynote:has-text('why I said it')")
            # Chromium logs each refused reconnection while no server listens: expected here.
            assert [e for e in errors if "ERR_CONNECTION_REFUSED" not in e] == []
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
    sessions = _rows(db, "SELECT id, status FROM sessions ORDER BY rowid")
    assert len(sessions) == 2
    new = sessions[1][0]
    mine = _rows(
        db, f"SELECT id FROM messages WHERE session_id = '{new}' AND text = 'Back after the crash'"
    )
    assert len(mine) == 1
    assert _rows(db, "SELECT session_id, message_id, kind, author FROM annotations") == [
        (new, mine[0][0], "reason", "Maya")
    ]
