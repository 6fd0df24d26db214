"""The window when the session database cannot be written: a banner, a failed session, no crash.

The fault is real: another connection holds the database's write lock, and the window's own
connection waits only 0.05 s for it (instead of the default busy timeout).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from playground.embedding.cache import CachingEmbedder
from playground.storage import open_database
from tests.ui.conftest import until
from ui.app import build

pytestmark = pytest.mark.asyncio


async def test_a_failed_write_stops_the_run_with_a_banner_and_the_window_stays_up(
    qtbot, tmp_path, minilm
):
    path = tmp_path / "ui.db"
    win, controller = build(db_path=str(path), environ={}, embedder=CachingEmbedder(minilm))
    controller.db = open_database(path, busy_timeout=0.05)
    qtbot.addWidget(win)
    win.show()
    lock: sqlite3.Connection | None = None
    try:
        room = await controller.new_session(controller.library()[:2], icebreaker="Hello there?")
        assert room is not None
        assert room.status == "running"
        lock = sqlite3.connect(path, timeout=10, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # another program's write lock, held on and on
        win.act_run.trigger()
        await until(lambda: win.banner.isVisible(), what="the banner")
        text = win.banner.text()
        assert f"could not save to {path}: database is locked" in text
        assert "the run stopped" in text
        assert "1 message was saved before" in text
        await until(lambda: controller.task is None or controller.task.done(), what="the run ends")
        assert room.status == "failed"
        assert "could not save" in win.messages.status_label.text()
        assert win.isVisible(), "the window stays up"
        assert not win.act_run.isEnabled()
        assert not win.act_step.isEnabled()
        lock.execute("ROLLBACK")
        lock.close()
        lock = None
        await controller.run()  # a failed session cannot be run on
        assert "has ended (failed at " in win.banner.text()
        with closing(sqlite3.connect(path)) as check:
            assert check.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 1
    finally:
        if lock is not None:
            lock.execute("ROLLBACK")
            lock.close()
        await controller.shutdown()
