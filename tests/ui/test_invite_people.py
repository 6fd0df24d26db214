"""Session ▸ Invite people…: the live session's seats served to browsers from the window.

The dialog lists each seat's link, who joined through it and whether their browser is
connected; Revoke closes a seat at once; a new session, or closing the window, ends the study
for every browser.
"""

from __future__ import annotations

import aiohttp
import pytest

from playground.study.server import CLOSE_FOR_GOOD
from testbed.study import open_browser
from tests.ui.conftest import app_window, until
from ui.dialogs.invite import TEXT_COLUMNS

pytestmark = pytest.mark.asyncio


async def _session(controller):
    room = await controller.new_session(controller.library()[:2], icebreaker="Hello there")
    assert room is not None
    return room


def _cells(dlg) -> list[list[str]]:
    t = dlg.table
    return [[t.item(r, c).text() for c in TEXT_COLUMNS] for r in range(t.rowCount())]


async def test_invite_people_lists_links_and_follows_who_joins(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "i.db", minilm)
    room = await _session(controller)
    assert win.act_invite.isEnabled()
    dlg = win.dialogs.open_invite()
    assert "Not serving yet" in dlg.where.text()
    dlg.count.setValue(2)
    dlg.add_button.click()
    await until(lambda: dlg.table.rowCount() == 2, what="two seats")
    assert controller.mode == "realtime", "the session goes on in real time"
    assert dlg.where.text().startswith("Serving at http://127.0.0.1:")
    assert not dlg.host.isEnabled()
    links = [row[3] for row in _cells(dlg)]
    assert [row[1:3] for row in _cells(dlg)] == [["not joined yet", "offline"]] * 2
    origin = controller.study.address
    ana, _ = await open_browser(links[0], origin)
    ben, _ = await open_browser(links[1], origin)
    try:
        await ana.send(type="join", name="Maya")
        await until(lambda: _cells(dlg)[0][1:3] == ["Maya", "online"], what="Maya online")
        # Her link opened in a second window (shared?): the researcher sees it.
        twice, _ = await open_browser(links[0], origin)
        await until(lambda: _cells(dlg)[0][2] == "online · open in 2 windows", what="open twice")
        await twice.close()
        await until(lambda: _cells(dlg)[0][2] == "online", what="open once again")
        assert "Maya" in win.participants.chips
        # The desktop researcher can still join at the window beside the remote people.
        await controller.join_as_human("Researcher")
        assert win.conversation.composer.isEnabled()
        assert win.conversation.composer.placeholderText().startswith("Message as Researcher")
        assert "None" not in win.statusBar().currentMessage()
        await ana.send(type="say", text="Hello from the browser")
        await until(
            lambda: any(m.text == "Hello from the browser" for m in room.messages), what="sent"
        )
        # Revoke closes Ben's seat at once.
        dlg.table.cellWidget(1, 4).click()
        await ben.until(lambda p: p["type"] == "revoked")
        assert _cells(dlg)[1][2] == "revoked"
        assert not dlg.table.cellWidget(1, 4).isEnabled()
        async with aiohttp.ClientSession() as s, s.get(links[1]) as r:
            assert r.status == 403
        # Adding seats later keeps the address and the earlier seats.
        dlg.count.setValue(1)
        dlg.add_button.click()
        await until(lambda: dlg.table.rowCount() == 3, what="a third seat")
        assert _cells(dlg)[0][3] == links[0]
        # Closing the window ends the study for every browser.
        await controller.shutdown()
        await ana.until(lambda p: p["type"] == "ended")
        frame = await ana.ws.receive(timeout=10)
        while frame.type == aiohttp.WSMsgType.TEXT:
            frame = await ana.ws.receive(timeout=10)
        assert frame.data == CLOSE_FOR_GOOD
        assert not controller.study.serving
    finally:
        await ana.session.close()
        await ben.session.close()
        await controller.shutdown()


async def test_a_new_session_stops_serving_the_previous_one(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "n.db", minilm)
    await _session(controller)
    await controller.study.invite(1)
    [seat] = controller.study.seats()
    browser, _ = await open_browser(seat.link, controller.study.address)
    try:
        await _session(controller)
        ended = await browser.until(lambda p: p["type"] == "ended")
        assert "ended" in ended["reason"]
        assert not controller.study.serving
        assert win.act_invite.isEnabled()
    finally:
        await browser.session.close()
        await controller.shutdown()


async def test_no_live_session_no_invitation(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "e.db", minilm)
    assert not win.act_invite.isEnabled()
    errors: list[str] = []
    controller.error.connect(errors.append)
    await controller.guarded("Invite people", lambda: controller.study.invite(1))
    assert errors
    assert errors[0].startswith("Invite people:")
    assert not controller.study.serving
    await controller.shutdown()
