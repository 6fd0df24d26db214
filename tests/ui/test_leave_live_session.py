"""Never lose a live session silently: opening a saved session (File ▸ Open session…, Open in
replay from the Experiments or STORM window) while a session is live asks first; Cancel leaves it
running and untouched in the database, "End the session" ends it (saved interrupted, with
the reason) and opens the replay; with nothing live there is no question. And Open in replay
brings the main window to the front."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from playground.storage import SessionReader
from playground.storm import profiles
from tests.ui.conftest import app_window, run_experiment, step_session, until
from ui.replay.leave_live import END_AND_OPEN
from ui.session.simulated import SimulatedSeat

pytestmark = pytest.mark.asyncio

REASON = "a saved session was opened for replay"


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "leave.db", minilm)
    controller.simulated.users_dir = tmp_path / "users"
    yield win, controller
    view = win.experiments.view
    if view is not None and view.job is not None:
        view.job.cancel()


async def _session(win: Any, controller: Any, icebreaker: str, steps: int, **kw: Any) -> Any:
    room = await controller.new_session(controller.library()[:3], icebreaker=icebreaker, **kw)
    assert room is not None
    await step_session(win, room, steps)
    return room


async def _saved(win: Any, controller: Any) -> str:
    room = await _session(win, controller, "What did you cook last week?", 2)
    await controller.stop()
    return str(room.session_id)


def _in_db(controller: Any, sid: str) -> dict[str, Any]:
    """What the database holds of a session: its row and how much it has recorded."""
    db = controller.database()
    data = SessionReader(db).load(sid)
    (events,) = db.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", [sid]).fetchone()
    s = data["session"]
    return {
        "status": s["status"],
        "end_reason": s["end_reason"],
        "finished_at": s["finished_at"],
        "messages": [(m["id"], m["speaker"], m["text"]) for m in data["messages"]],
        "events": events,
    }


async def _question(win: Any) -> Any:
    await until(lambda: win.leave_question is not None, what="the question")
    q = win.leave_question
    assert q.isVisible()
    assert q.isModal()
    return q


async def test_cancel_keeps_a_paused_storm_session_running_and_untouched(window):
    win, controller = window
    saved = await _saved(win, controller)
    user = profiles.generate_profile(5, task="Buy a smartphone", difficulty=3)
    room = await _session(
        win, controller, "Has anyone bought a phone?", 3, simulated=[SimulatedSeat(user, 1.0)]
    )
    assert controller.control.paused
    assert not room.ended
    before = _in_db(controller, room.session_id)
    shown = win.conversation.messages()
    task = win.open_replay(str(controller.db_path), saved)
    q = await _question(win)
    text = q.text()
    assert room.session_id in text, text
    assert user.name in text, text
    assert saved in text, text
    assert q.end_button.text() == END_AND_OPEN
    assert q.defaultButton() is q.cancel_button
    q.cancel_button.click()
    await task
    assert win.leave_question is None
    assert not win.replay.active
    assert controller.room is room
    assert not room.ended
    assert controller.control.paused
    assert _in_db(controller, room.session_id) == before  # nothing was written
    assert win.conversation.messages() == shown
    # It runs on: a step adds to it.
    n = len(room.messages)
    await step_session(win, room, 1)
    assert len(room.messages) >= n
    assert _in_db(controller, room.session_id)["status"] == "running"
    # A second request while the question is open cancels the first one.
    first = win.open_replay(str(controller.db_path), saved)
    q1 = await _question(win)
    second = win.open_replay(str(controller.db_path), saved)
    await until(lambda: win.leave_question not in (None, q1), what="the second question")
    await first
    assert not win.replay.active
    assert not room.ended
    (await _question(win)).cancel_button.click()
    await second
    assert not win.replay.active
    assert not room.ended
    await controller.shutdown()


async def test_end_session_and_open_ends_a_joined_session_with_its_reason(window):
    win, controller = window
    saved = await _saved(win, controller)
    room = await _session(win, controller, "Where shall we travel?", 1)
    await controller.join_as_human("Max")
    assert controller.human == "Max"
    assert not room.ended
    task = win.open_replay(str(controller.db_path), saved)
    q = await _question(win)
    assert "you joined it as Max" in q.text(), q.text()
    q.end_button.click()
    await task
    assert room.ended
    assert room.status == "interrupted"
    row = _in_db(controller, room.session_id)
    assert row["status"] == "interrupted", row
    assert row["end_reason"] == REASON, row
    assert row["finished_at"]
    assert win.replay.active
    assert win.replay.recording.session["id"] == saved
    assert controller.room is None
    assert controller.human is None
    await controller.shutdown()


async def test_no_live_session_no_question(window, monkeypatch):
    win, controller = window
    saved = await _saved(win, controller)

    def never(*_a: Any, **_k: Any) -> None:
        raise AssertionError("asked although no session is live")

    monkeypatch.setattr("ui.window.main_window.LeaveLiveQuestion", never)
    await win.open_replay(str(controller.db_path), saved)  # the session on screen has ended
    assert win.replay.active
    assert win.replay.recording.session["id"] == saved
    other = await _saved(win, controller)
    await win.open_replay(str(controller.db_path), other)  # a replay on screen: nothing live
    assert win.replay.recording.session["id"] == other
    assert _in_db(controller, saved)["end_reason"] == "stopped by the user"
    await controller.shutdown()


async def test_open_in_replay_from_experiments_brings_the_main_window_to_the_front(window):
    win, controller = window
    view, sid = await run_experiment(win, "next-speaker", 3)
    # The main window minimised, the Experiments window in front.
    win.showMinimized()
    view.raise_()
    view.activateWindow()
    await until(lambda: QApplication.activeWindow() is view, what="the Experiments window active")
    assert win.isMinimized()
    view.replay_button.click()
    await until(lambda: win.replay.active, what="the replay")
    assert win.replay.recording.session["id"] == sid
    assert not win.isMinimized()
    assert win.isVisible()
    await until(lambda: QApplication.activeWindow() is win, what="the main window active")
    await controller.shutdown()


async def test_a_new_session_asks_before_ending_the_live_one(window):
    win, controller = window
    room = await _session(win, controller, "Who plays an instrument?", 1)
    assert controller.control.paused
    assert not room.ended
    before = _in_db(controller, room.session_id)
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.accept()
    q = await _question(win)
    assert room.session_id in q.text(), q.text()
    assert "Starting a new session ends it." in q.text(), q.text()
    q.cancel_button.click()
    await until(lambda: win.leave_question is None, what="the answer")
    await asyncio.sleep(0.2)
    assert controller.room is room
    assert not room.ended
    assert not controller.setting_up
    assert _in_db(controller, room.session_id) == before  # nothing was written
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.accept()
    (await _question(win)).end_button.click()
    await until(lambda: controller.room not in (None, room), timeout=60, what="the new session")
    assert room.ended
    assert _in_db(controller, room.session_id)["status"] == "interrupted"
    assert _in_db(controller, room.session_id)["end_reason"] == "a new session was started"
    await controller.shutdown()
