"""Rating ▸ Invite raters… in the real window: a plan served from the window's loop, its links
opened by a rater's page, then stopped (every page told)."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from playground.embedding.cache import CachingEmbedder
from playground.rating.web import protocol
from playground.storage import open_database
from testbed.raters import make_plan, simulated_sessions
from tests.ui.conftest import until
from ui.app import build
from ui.rating.invite import InviteRatersDialog

pytestmark = pytest.mark.asyncio


async def test_invite_raters_serves_a_plan_from_the_window_and_stops(qtbot, tmp_path, minilm):
    path = tmp_path / "w.db"
    ids = await asyncio.to_thread(simulated_sessions, path, 2)  # it runs its own loop
    plan_id = make_plan(path, "conversation", ["R-ANN", "R-BEN"], 1, ids)
    win, _controller = build(db_path=str(path), environ={}, embedder=CachingEmbedder(minilm))
    qtbot.addWidget(win)
    win.show()
    win.rating.act_invite.trigger()
    dlg = win.rating.invite
    assert dlg is not None
    assert dlg.plan.currentData() == plan_id
    assert not dlg.stop_button.isEnabled()
    dlg.start_button.click()
    await until(lambda: dlg.serving, what="serving")
    assert dlg.where.text().startswith("Serving at http://127.0.0.1:")
    lines = dlg.links.toPlainText().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["R-ANN", "R-BEN"]
    link = lines[0].split("\t")[1]
    origin = "/".join(link.split("/")[:3])
    async with aiohttp.ClientSession() as http:
        async with http.get(link) as r:
            assert r.status == 200
        ws = await http.ws_connect(f"{link}/ws", headers={"Origin": origin})
        welcome = json.loads((await ws.receive()).data)
        assert welcome["rater"] == "R-ANN"
        await ws.receive()
        dlg.stop_button.click()
        closed = await ws.receive()
        assert closed.data == protocol.CloseCode.ENDED
    await until(lambda: not dlg.serving and dlg.start_button.isEnabled(), what="stopped")
    assert "Not serving" in dlg.where.text()
    db = open_database(path)
    assert db.execute("SELECT COUNT(*) FROM rater_links").fetchone()[0] == 2
    db.close()


async def test_each_link_is_one_line_however_narrow_the_dialog(qtbot, tmp_path):
    """A link wrapped onto a second line reads as two links (or a rater's link cut in two,
    copied by hand): each link stays on its own line, scrolled sideways if need be."""
    path = tmp_path / "w.db"
    ids = await asyncio.to_thread(simulated_sessions, path, 2)
    make_plan(path, "conversation", ["R-ANN", "R-BEN"], 1, ids)
    db = open_database(path)
    dlg = InviteRatersDialog(db)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.resize(dlg.minimumSizeHint())
    await dlg.start_serving()
    try:
        doc = dlg.links.document()
        blocks = [doc.findBlockByNumber(i) for i in range(doc.blockCount())]
        assert len(blocks) == 2
        assert [b.layout().lineCount() for b in blocks] == [1, 1]
    finally:
        await dlg.stop_serving()
        db.close()
