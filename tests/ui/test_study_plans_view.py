"""Experiments ▸ Study plans…, headless: a plan created from the dialog runs on the window's
loop; a browser joins with the link the window shows; the window follows who joined, who is
online, who has answered and the plan's first conversation; Stop saves the conversation
interrupted and Resume goes on with the same links; a port in use and a locked database are
messages, not tracebacks; closing the main window stops the plan first. Offline engine, real
sockets on 127.0.0.1, conversations of 3 seconds."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from playground.rating.user_study import USER_STUDY_METRICS
from testbed.study import Browser, open_browser
from tests.ui.conftest import app_window, until
from ui.study_plans.live import PEOPLE_COLUMNS
from ui.study_plans.tables import PLAN_COLUMNS, STEP_COLUMNS
from ui.study_plans.view import StudyPlansWindow

pytestmark = pytest.mark.asyncio

ALL_SEVEN = {m.key: 7 for m in USER_STUDY_METRICS}
NAME, BROWSER, QUESTIONS, LINK = (PEOPLE_COLUMNS.index(c) for c in ("Name", "Browser", "Questions", "Link"))  # fmt: skip
STEP_STATUS, SESSION = STEP_COLUMNS.index("Status"), STEP_COLUMNS.index("Session")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _window(qtbot: Any, db: Path, minilm: Any) -> tuple[Any, Any]:
    win, controller = app_window(qtbot, db, minilm)
    return win, controller


def _start(view: StudyPlansWindow, port: int, humans: int = 2) -> Any:
    dlg = view.open_new_dialog()
    assert dlg is not None
    dlg.humans.setValue(humans)
    dlg.group.setValue(1)
    dlg.seed.setValue(2)
    dlg.minutes.setValue(0.05)  # 3 seconds
    dlg.review_minutes.setValue(1.0)
    dlg.port.setValue(port)
    dlg.buttons.accepted.emit()  # the Start button
    assert not dlg.isVisible(), dlg.error.text()
    view.timer.setInterval(200)
    assert view.job is not None
    return view.job


def _col(table: Any, col: int) -> list[str]:
    return [
        table.item(r, col).text() if table.item(r, col) else "" for r in range(table.rowCount())
    ]


def _sql(db: Path, query: str, params: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


async def _links(view: StudyPlansWindow, n: int) -> list[str]:
    people = view.live.people
    await until(
        lambda: people.rowCount() == n and all(t.startswith("http") for t in _col(people, LINK)),
        timeout=40,
        what="the links in the window",
    )
    return _col(people, LINK)


async def _join(link: str, name: str) -> Browser:
    browser, hello = await open_browser(link, link.split("/join/")[0])
    assert hello["phase"] == "talk"
    await browser.send(type="join", name=name)
    await browser.until(lambda p: p["type"] == "you")
    return browser


async def test_a_plan_from_the_dialog_runs_is_followed_stopped_and_resumed(qtbot, tmp_path, minilm):
    db = tmp_path / "plans.db"
    win, controller = _window(qtbot, db, minilm)
    plans_menu = win.experiments.plans
    assert [a.text() for a in win.experiments.menu.actions() if a.text()][:4] == [
        "Experiments…",
        "New experiment…",
        "Study plans…",
        "New study plan…",
    ]
    plans_menu.act_open.trigger()
    view = plans_menu.view
    assert view is not None
    assert view.isVisible()
    assert view.plans.rowCount() == 0
    assert "no study plan yet" in view.steps_box.title()
    port = _free_port()
    job = _start(view, port)
    assert not view.new_button.isEnabled()
    assert not view.resume_button.isEnabled()
    assert view.stop_button.isEnabled()
    links = await _links(view, 2)
    assert all(link.startswith(f"http://127.0.0.1:{port}/join/") for link in links)
    assert "Serving at http://127.0.0.1:" in view.live.where.text()
    assert _col(view.plans, PLAN_COLUMNS.index("Status")) == ["▶ running here"]
    await until(lambda: _col(view.steps, STEP_STATUS)[0] == "talking", what="talking")
    assert _col(view.steps, SESSION)[0] not in ("", "—")
    assert "Conversation 1 of 3" in view.live.now.text()
    ivy = await _join(links[0], "Ivy")
    kai = await _join(links[1], "Kai")
    people = view.live.people
    await until(lambda: _col(people, NAME) == ["Ivy", "Kai"], what="the names")
    await until(lambda: _col(people, BROWSER) == ["online", "online"], what="online")
    # The conversation's time is up: the review and the questions.
    await until(
        lambda: _col(view.steps, STEP_STATUS)[0] == "review and questions",
        timeout=30,
        what="review",
    )
    await until(lambda: _col(people, QUESTIONS) == ["not yet", "not yet"], what="not answered")
    assert "0 of 2 people have answered" in view.live.now.text()
    await ivy.until(lambda p: p["type"] == "phase" and p["phase"] == "review", 30)
    await ivy.send(type="questionnaire", answers=ALL_SEVEN)
    await until(lambda: _col(people, QUESTIONS) == ["answered", "not yet"], what="Ivy answered")
    assert "1 of 2 people have answered" in view.live.now.text()
    await kai.send(type="questionnaire", answers=ALL_SEVEN)
    # Everyone answered: the next conversation starts, and the tables follow.
    await until(
        lambda: _col(view.steps, STEP_STATUS)[:2] == ["done", "talking"], timeout=30, what="next"
    )
    assert _col(view.plans, PLAN_COLUMNS.index("Conversations")) == ["1/3 done"]
    await until(lambda: "Conversation 2 of 3" in view.live.now.text(), what="the second")

    view.stop_button.click()
    await until(lambda: not job.running, timeout=30, what="the plan to stop")
    assert job.outcome == "stopped", job.message
    assert "Resume" in view.status.text()
    assert "Traceback" not in view.status.text()
    assert not view.live.isVisible()
    assert _col(view.plans, PLAN_COLUMNS.index("Status")) == ["stopped: Resume goes on"]
    assert view.resume_button.isEnabled()
    assert view.new_button.isEnabled()
    assert not view.stop_button.isEnabled()
    assert _col(view.steps, STEP_STATUS)[1].startswith("cut short")
    plan_id = job.plan_id
    assert _sql(db, "SELECT status FROM study_plans") == [("running",)]
    steps = _sql(db, "SELECT status, session_id FROM plan_steps ORDER BY position")
    assert [s[0] for s in steps] == ["done", "talking", "pending"]
    assert _sql(db, "SELECT status FROM sessions WHERE id = ?", (steps[1][1],)) == [
        ("interrupted",)
    ]
    assert _sql(db, "SELECT COUNT(*) FROM sessions WHERE status = 'running'") == [(0,)]
    for browser in (ivy, kai):  # the server stopped: every page was told
        await browser.session.close()
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientConnectionError):
            await s.get(links[0])

    # Resume: the same links, the same people, the second conversation again as a new session.
    again = view.resume()
    assert again is not None
    assert again.plan_id == plan_id
    assert await _links(view, 2) == links
    ivy, hello = await open_browser(links[0], links[0].split("/join/")[0])
    assert hello["you"] == "Ivy"
    assert hello["study"]["position"] == 2
    await until(lambda: _col(view.live.people, NAME)[0] == "Ivy", what="Ivy in the window")
    interrupted = steps[1][1]
    await until(
        lambda: _col(view.steps, SESSION)[1] not in (interrupted, "—"), what="a new session"
    )
    await ivy.session.close()
    await view.stop()
    assert again.outcome == "stopped"
    await controller.shutdown()


async def test_a_port_in_use_is_a_message_and_the_plan_resumes_then_closing_stops_it(
    qtbot, tmp_path, minilm
):
    db = tmp_path / "plans.db"
    win, controller = _window(qtbot, db, minilm)
    view = win.experiments.plans.open_view()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        job = _start(view, port, humans=1)
        await until(lambda: not job.running, timeout=40, what="the failed start")
    finally:
        busy.close()
    assert job.outcome == "error"
    text = view.status.text()
    assert f"cannot listen on 127.0.0.1:{port}" in text, text
    assert "Resume goes on" in text
    assert "Traceback" not in text
    assert view.resume_button.isEnabled()
    # Nothing is left behind: no empty session, the step as it was, the plan not started.
    assert _sql(db, "SELECT status FROM sessions") == []
    assert _sql(db, "SELECT status, session_id FROM plan_steps") == [("pending", None)] * 3
    assert _col(view.plans, PLAN_COLUMNS.index("Status")) == ["not started: Resume runs it"]
    # The port is free again: Resume serves the plan there.
    again = view.resume()
    assert again is not None
    (link,) = await _links(view, 1)
    assert link.startswith(f"http://127.0.0.1:{port}/join/")
    await until(lambda: _col(view.steps, STEP_STATUS)[0] == "talking", what="talking")
    # Closing the main window stops the plan first: saved interrupted, the server stopped.
    win.close()
    await until(lambda: not again.running, timeout=30, what="the plan to stop")
    assert again.outcome == "stopped"
    await until(lambda: controller.closed, timeout=30, what="the window to close")
    assert _sql(db, "SELECT status FROM sessions ORDER BY created_at") == [("interrupted",)]
    assert _sql(db, "SELECT status FROM study_plans") == [("running",)]
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientConnectionError):
            await s.get(link)


async def test_a_locked_database_and_another_engine_are_messages(qtbot, tmp_path, minilm):
    db = tmp_path / "plans.db"
    win, controller = _window(qtbot, db, minilm)
    view = win.experiments.plans.open_view()
    controller.database().conn.execute("PRAGMA busy_timeout = 200")
    other = sqlite3.connect(db)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        dlg = view.open_new_dialog()
        assert dlg is not None
        dlg.buttons.accepted.emit()
        assert dlg.isVisible()
        assert f"could not be saved in {db}: database is locked" in dlg.error.text()
    finally:
        other.rollback()
        other.close()
    dlg.buttons.accepted.emit()  # the lock is gone: saved
    assert not dlg.isVisible()
    assert view.job is not None
    await view.stop()
    assert view.job.outcome == "stopped"
    controller.configure({"engine": "openai", "model": "gpt-4o-mini", "api_key": "k"})
    assert view.resume() is None
    assert "ran with the offline engine; choose the same under Engine…" in view.status.text()
    await controller.shutdown()
