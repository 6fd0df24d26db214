"""Affordances that must not outlive what they act on: a pinned stimulus highlight ends with its
step; Add… and ✕ are not offered on an ended session or in a replay; the plan dialog's Select
all / none go with its session list."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QPushButton

from tests.ui.conftest import app_window, until
from ui.rating.plans import RatingPlanDialog

pytestmark = pytest.mark.asyncio


async def _session(controller, n: int = 3):
    room = await controller.new_session(controller.library()[:n], icebreaker="Weekend plans?")
    assert room is not None
    return room


async def _step(win, room) -> None:
    before = room.step
    win.act_step.trigger()
    await until(
        lambda: room.step > before and win.act_step.isEnabled(), timeout=60, what="the step to end"
    )


async def test_a_pinned_stimulus_highlight_ends_with_its_step(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "s.db", minilm)
    room = await _session(controller)
    await _step(win, room)
    await until(lambda: win.thoughts.bubbles(), what="thought bubbles")
    bubble = next(
        b for b in win.thoughts.bubbles() if any(r.startswith("memory:") for r in b.thought.stimuli)
    )
    ref = next(r for r in bubble.thought.stimuli if r.startswith("memory:"))
    focused: list[str] = []
    win.selection.stimulus_focused.connect(focused.append)
    bubble.stimulus_clicked.emit(ref)  # the rater clicks the link: the memory is highlighted
    assert win.memory.focused_id == int(ref.split(":")[1])
    await _step(win, room)
    assert win.memory.focused_id is None, "the highlight outlived its step"
    assert focused[-1] == ""
    await controller.shutdown()


async def test_an_ended_session_and_a_replay_offer_no_add_or_delete(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "e.db", minilm)
    room = await _session(controller)
    await _step(win, room)
    await until(lambda: win.thoughts.bubbles(), what="thought bubbles")
    assert win.memory.add_button.isEnabled()
    assert all(b.delete_button.isVisible() for b in win.thoughts.bubbles())
    await controller.stop()
    await until(lambda: room.status != "running", what="the session to end")
    assert not win.memory.add_button.isEnabled(), "Add… on an ended session"
    assert not any(b.delete_button.isVisible() for b in win.thoughts.bubbles()), "✕ when ended"
    await win.open_replay(str(controller.db_path), room.session_id)
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.last)
    await asyncio.sleep(0)
    assert win.thoughts.bubbles()
    assert not win.memory.add_button.isEnabled(), "Add… in a replay"
    assert not any(b.delete_button.isVisible() for b in win.thoughts.bubbles()), "✕ in a replay"
    win.replay.close()
    await controller.shutdown()


async def test_select_all_goes_with_the_plan_dialogs_session_list(qtbot, tmp_path, minilm):
    _win, controller = app_window(qtbot, tmp_path / "p.db", minilm)
    await _session(controller)
    await controller.stop()
    dlg = RatingPlanDialog(controller.database())
    qtbot.addWidget(dlg)
    dlg.show()
    buttons = {b.text(): b for b in dlg.findChildren(QPushButton)}
    select_all, select_none = buttons["Select all"], buttons["Select none"]
    assert dlg.sessions.isEnabled()
    assert select_all.isEnabled()
    assert select_none.isEnabled()
    dlg.from_experiment.setChecked(True)
    assert not dlg.sessions.isEnabled()
    assert not select_all.isEnabled(), "Select all works on a disabled list"
    assert not select_none.isEnabled()
    dlg.from_sessions.setChecked(True)
    assert select_all.isEnabled()
    assert select_none.isEnabled()
    await controller.shutdown()
