"""The replay of a study session lists what its people noted afterwards, message by message,
exactly as the database holds it, beside the agents' interpretation of their own messages."""

from __future__ import annotations

import pytest

from playground.storage import study_rows
from playground.study.hub import StudyHub
from playground.study.seats import SeatBook
from playground.study.server import StudyServer
from testbed.study import open_browser
from tests.ui.conftest import app_window, until

pytestmark = pytest.mark.asyncio

HOSTILE = "<b>bold</b> & <img src=x>"


async def test_the_replay_offers_the_reviews_and_shows_them_as_saved(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "r.db", minilm)
    room = await controller.new_session(controller.library()[:1], icebreaker="Hello there")
    assert room is not None
    book = SeatBook(controller.database(), room.session_id)
    [seat] = book.add(1, room.clock.now_iso())
    server = StudyServer(StudyHub(room, book))
    await server.start()
    assert server.listening is not None
    browser, _ = await open_browser(server.link(seat), server.listening.origin)
    try:
        await browser.send(type="join", name="Noor")
        await browser.until(lambda p: p["type"] == "you")
        await browser.send(type="say", text="I just got back from hiking in Wales")
        own = (
            await browser.until(
                lambda p: p["type"] == "message" and p["message"]["speaker"] == "Noor"
            )
        )["message"]["id"]
        await controller.stop()  # the researcher stops: the page opens the review
        await browser.until(lambda p: p["type"] == "phase" and p["phase"] == "review")
        await browser.send(
            type="retro", message_id=own, thinking=HOSTILE, wanted="yes", why="to share it",
            timing="pause",
        )  # fmt: skip
        await browser.until(lambda p: p["type"] == "retro")
        await browser.send(type="retro", message_id=1, wanted="no", timing="never")
        await browser.until(lambda p: p["type"] == "retro")
        sid = room.session_id
        await win.open_replay(str(controller.db_path), sid)
        button = win.replay_panel.transport.reviews_button
        assert button.isVisibleTo(win)
        assert button.text() == "Reviews (2)…"
        reviews = win.replay_panel.open_reviews()
        assert reviews is not None
        table = reviews.table
        shown = [
            [table.item(r, c).text() for c in range(table.columnCount())]
            for r in range(table.rowCount())
        ]
        saved = study_rows.retrospective(controller.database(), sid)
        assert len(shown) == len(saved) == 2
        interpretation = (
            controller.database()
            .execute(
                "SELECT interpretation FROM messages WHERE session_id = ? AND id = ?", [sid, own]
            )
            .fetchone()[0]
        )
        first, second = shown
        assert first[:4] == ["1", room.messages[0].speaker, "Hello there", "Noor"]
        assert first[5:8] == ["No", "", "I would not have spoken"]
        assert first[8] == "", "not her message: no interpretation beside it"
        assert second[:8] == [
            str(own), "Noor", "I just got back from hiking in Wales", "Noor", HOSTILE, "Yes",
            "to share it", "At a pause",
        ]  # fmt: skip
        assert second[8] == (interpretation or "")
    finally:
        await browser.close()
        await server.stop()
        await controller.shutdown()


async def test_a_session_without_reviews_offers_none(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "r.db", minilm)
    room = await controller.new_session(controller.library()[:2], icebreaker="Hello there")
    assert room is not None
    await until(lambda: len(room.messages) >= 1, what="a message")
    await controller.stop()
    try:
        await win.open_replay(str(controller.db_path), room.session_id)
        assert not win.replay_panel.transport.reviews_button.isVisibleTo(win)
    finally:
        await controller.shutdown()
