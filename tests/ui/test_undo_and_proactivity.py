"""Undo of a deleted thought (Ctrl+Z, status-bar Undo) and visible proactivity on the chips."""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtGui import QKeySequence

from playground.settings import PRESETS
from tests.ui.conftest import until
from ui.app import build

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    from playground.embedding.cache import CachingEmbedder

    win, controller = build(
        db_path=str(tmp_path / "ui.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.show()
    return win, controller


async def _stepped(win, controller, n: int = 3, preset: str | None = None):
    room = await controller.new_session(
        controller.library()[:n], icebreaker="What did you do last weekend?", preset=preset
    )
    assert room is not None
    win.act_step.trigger()
    await until(lambda: controller.run_state() == "paused" and room.step >= 1, what="one step")
    return room


def _deleted(db_path: str, session_id: str, thought_id: int) -> int:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(
            "SELECT deleted FROM thoughts WHERE session_id = ? AND id = ?",
            [session_id, thought_id],
        ).fetchone()[0]


async def test_a_deleted_thought_is_back_after_undo_in_the_pane_the_database_and_replay(window):
    win, controller = window
    room = await _stepped(win, controller)
    await until(lambda: len(win.thoughts.bubbles()) >= 2, what="bubbles")
    name = win.selection.name
    victim = win.thoughts.bubbles()[0]
    tid, text = victim.thought_id, room.agent(name).reservoir.get(victim.thought_id).text
    assert not win.act_undo.isEnabled()
    assert not win.undo.button.isVisibleTo(win)

    win.thoughts.delete_requested.emit(name, tid)
    await until(lambda: win.thoughts.bubble(tid) is None, what="the bubble to go")
    assert _deleted(controller.db_path, room.session_id, tid) == 1
    assert win.undo.button.isVisibleTo(win), "the status bar offers Undo for a few seconds"
    assert win.act_undo.isEnabled()
    assert win.act_undo.shortcut() == QKeySequence(QKeySequence.StandardKey.Undo)  # Ctrl+Z

    win.undo.button.click()
    await until(lambda: win.thoughts.bubble(tid) is not None, what="the bubble to come back")
    bubble = win.thoughts.bubble(tid)
    assert bubble is not None
    assert text in bubble.text()
    assert tid in room.agent(name).reservoir
    assert _deleted(controller.db_path, room.session_id, tid) == 0
    evaluations = win.thoughts.ledger.evaluations.get(name, {})
    assert evaluations.get(tid), "its evaluations are back with it"
    assert not win.act_undo.isEnabled()
    assert not win.undo.button.isVisibleTo(win)
    assert "Restored" in win.messages.status_label.text()

    # Ctrl+Z (the action) undoes the latest of several deletions first.
    others = [*[b.thought_id for b in win.thoughts.bubbles() if b.thought_id != tid][:1], tid]
    for t in others:
        win.thoughts.delete_requested.emit(name, t)
    await until(lambda: all(win.thoughts.bubble(t) is None for t in others), what="deleted")
    win.act_undo.trigger()
    await until(lambda: win.thoughts.bubble(others[-1]) is not None, what="latest back")
    assert win.thoughts.bubble(others[0]) is None

    # Replay shows the thought restored: at the end it is there, with the deletion in between.
    await controller.stop()
    await win.open_replay(str(controller.db_path), room.session_id)
    rec = win.replay.recording
    assert rec is not None
    win.selection.select(name)
    win.replay.seek(rec.last)
    assert win.thoughts.bubble(others[-1]) is not None
    assert win.thoughts.bubble(others[0]) is None
    await controller.shutdown()


async def test_undo_is_not_offered_across_sessions(window):
    win, controller = window
    await _stepped(win, controller, n=2)
    await until(lambda: win.thoughts.bubbles(), what="bubbles")
    win.thoughts.delete_requested.emit(win.selection.name, win.thoughts.bubbles()[0].thought_id)
    await until(lambda: win.act_undo.isEnabled(), what="undo offered")
    await controller.new_session(controller.library()[:2], icebreaker=None)
    assert not win.act_undo.isEnabled()
    assert not win.undo.pending()
    await controller.shutdown()


async def test_chips_show_preset_and_thresholds_and_a_change_applies_from_the_next_trigger(
    window,
):
    win, controller = window
    room = await _stepped(win, controller, n=2, preset="active-contributor")
    # One who will decide at the next trigger (the latest speaker does not, on a new message).
    name = next(a.name for a in room.agents if a.name != room.messages[-1].speaker)
    chip = win.participants.chips[name]
    assert chip.preset_label.text() == "active-contributor"
    assert "imThreshold 3.59" in chip.toolTip()
    assert "interruptThreshold 4.8" in chip.toolTip()
    assert "active-contributor preset" in chip.toolTip()

    custom = PRESETS["active-contributor"].model_copy(update={"im_threshold": 4.37})
    win.selection.select(name)
    dlg = win.dialogs.open_participant_settings()
    assert dlg is not None
    dlg.value = lambda: custom  # what the sliders would give
    dlg.accept()
    await until(lambda: room.agent(name).proactivity == custom, what="the change")
    status = win.messages.status_label
    await until(lambda: "imThreshold 4.37" in status.text(), what="confirmation")
    assert "next trigger" in status.text()
    assert name in status.text()
    assert chip.preset_label.text() == "custom"
    assert "imThreshold 4.37" in chip.toolTip()

    win.act_step.trigger()
    await until(lambda: controller.run_state() == "paused" and room.step >= 2, what="next step")
    rows = [r for r in win.decisions.rows() if r and r[0].startswith(name)]
    assert rows, f"the decision strip explains with the new threshold: {rows}"
    assert any("4.37" in cell for cell in rows[0][2:4]), (
        f"the decision strip explains with the new threshold: {rows}"
    )
    await controller.shutdown()
