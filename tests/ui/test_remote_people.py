"""People who join from a browser appear in the window: a "remote human" chip that says whether
they are connected, their messages in the conversation, and their name shown as text wherever
it appears (a person in a browser chooses it: it may hold markup)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from playground.study.hub import StudyHub
from playground.study.seats import SeatBook
from playground.study.server import StudyServer
from testbed.study import open_browser
from tests.ui.conftest import app_window, until

pytestmark = pytest.mark.asyncio

NAME = "<i>Ana</i> <img src=x>"


def _markup_shown_as_html(win) -> list[str]:
    """Labels that would render the person's name as markup instead of text."""
    return [
        label.text()
        for label in win.findChildren(QLabel)
        if NAME in label.text() and label.textFormat() != Qt.TextFormat.PlainText
    ]


async def test_a_remote_person_is_a_chip_that_follows_their_connection(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "r.db", minilm)
    room = await controller.new_session(controller.library()[:2], icebreaker="Hello there")
    assert room is not None
    book = SeatBook(controller.database(), room.session_id)
    [seat] = book.add(1, room.clock.now_iso())
    server = StudyServer(StudyHub(room, book))
    await server.start()
    assert server.listening is not None
    browser, _ = await open_browser(server.link(seat), server.listening.origin)
    try:
        await browser.send(type="join", name=NAME)
        await until(lambda: NAME in win.participants.chips, what="the remote chip")
        chip = win.participants.chips[NAME]
        assert "remote human" in chip.title.text()
        assert "&lt;i&gt;Ana&lt;/i&gt;" in chip.title.text()
        await until(lambda: chip.state_label.text() == "online", what="online")
        await browser.send(type="say", text="Hi from my laptop")
        await until(
            lambda: any(m.speaker == NAME for m in room.messages), what="the person's message"
        )
        await asyncio.sleep(0.2)
        assert _markup_shown_as_html(win) == []
        await browser.close()
        await until(lambda: chip.state_label.text() == "offline", what="offline")
        # The replay shows the same chip: a remote human, and whether they were connected then.
        await server.stop()
        sid = room.session_id
        await controller.stop()
        await win.open_replay(str(controller.db_path), sid)
        assert win.replay.active
        rec = win.replay.recording
        said = next(m for m in room.messages if m.speaker == NAME)
        win.replay.seek(rec.message_seq[said.id])
        await asyncio.sleep(0)
        replayed = win.participants.chips[NAME]
        assert "remote human" in replayed.title.text()
        assert "&lt;i&gt;Ana&lt;/i&gt;" in replayed.title.text()
        assert replayed.state_label.text() == "online", "connected when they spoke"
        win.replay.seek(rec.seqs[-1])  # the end of the record: after the browser closed
        await asyncio.sleep(0)
        assert replayed.state_label.text() == "offline", "gone at the end"
        assert _markup_shown_as_html(win) == []
    finally:
        await server.stop()
        await controller.shutdown()
