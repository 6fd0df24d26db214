"""A session that ends because nobody's motivation reached the threshold says so in the window:
the end reason, with the best score against the threshold and what to change, shown in full."""

from __future__ import annotations

import asyncio

import pytest

from playground import events
from playground.embedding.cache import CachingEmbedder
from playground.settings import PRESETS
from tests.ui.conftest import until
from ui.app import build

pytestmark = pytest.mark.asyncio
QUIET = PRESETS["simulation"].model_copy(
    update={"im_threshold": 5.0, "interrupt_threshold": 5.0, "system1_prob": 0.0}
)


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "ui.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    return win, controller


async def quiet_session_ended(win, controller):
    """A session of three agents nobody's motivation carries over imThreshold 5, run to its end."""
    controller.configure({"engine": "offline", "max_silent_steps": 2})
    room = await controller.new_session(controller.library()[:3], icebreaker="Hey!")
    assert room is not None
    for a in room.agents:
        room.set_proactivity(a.name, QUIET)
    finished: list[events.SessionFinished] = []
    room.bus.subscribe(finished.append, kinds=["session_finished"])
    win.act_run.trigger()
    await until(lambda: room.status == "finished", timeout=60, what="the silent end")
    await until(lambda: win.banner.isVisible(), what="the banner")
    return room, finished[0].reason


async def test_the_window_shows_why_nobody_spoke_in_full(window):
    win, controller = window
    _room, reason = await quiet_session_ended(win, controller)
    assert "no thought's motivation reached the threshold (best " in reason
    assert "against 5.00); try a more talkative preset (active-contributor)" in reason
    assert win.banner.text() == f"Session finished: {reason}"  # every word of it
    assert "⚠" not in win.banner.text()  # a notice, not an error
    status = win.messages.status_label
    assert reason in status.toolTip() or reason in status.text()
    for w, h in ((1024, 700), (1440, 900)):  # wrapped, not clipped, at both sizes
        win.resize(w, h)
        await asyncio.sleep(0.05)
        assert win.banner.isVisible()
        assert win.banner.width() <= w
        assert win.banner.height() >= win.banner.heightForWidth(win.banner.width())
    win.show_error("something broke")  # an error after it takes the error look again
    assert win.banner.text() == "⚠ something broke"
    await controller.shutdown()
