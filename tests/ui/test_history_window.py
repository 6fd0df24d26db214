"""The window's history view: clicking a message (or ◀ / ▶, ← / → in the decision strip) shows
the trigger that produced it, as the live window showed it then, during a run or after it; new
messages neither pull the view back nor get lost; replay moves to the trigger."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt

from playground.embedding.cache import CachingEmbedder
from playground.history.snapshot import SessionHistory
from tests.ui.conftest import until
from ui.app import build

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "history.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    return win, controller


def panes(win, memory, thoughts) -> dict:
    """What the side panes and the decision strip show, as plain data."""
    return {
        "memory": memory.rows(),
        "thoughts": [
            (b.thought_id, b.text(), b.score_text(), b._saliency_badge.text(), b.is_expressed())
            for b in thoughts.bubbles()
        ],
        "decisions": win.decisions.rows(),
        "prediction": win.decisions.prediction_line(),
    }


def live(win) -> dict:
    return panes(win, win.memory, win.thoughts)


def past(win) -> dict:
    return panes(win, win.history.memory, win.history.thoughts)


def _idle(room) -> bool:
    return all(state == "idle" for state in room._states.values())


def click(qtbot, win, message_id: int) -> None:
    w = win.conversation.widgets[message_id]
    qtbot.mouseClick(w.body, Qt.MouseButton.LeftButton)


async def _steps(win, room, n: int) -> None:
    """``n`` steps through the window's Step, each waited for until every agent is idle."""
    for i in range(n):
        before = room.step
        win.act_step.trigger()
        await until(lambda: room.step > before and _idle(room), what=f"step {i + 1}")  # noqa: B023


async def _start(win, controller, n: int = 3):
    room = await controller.new_session(
        controller.library()[:n], icebreaker="What did you do last weekend?"
    )
    assert room is not None
    return room


async def test_a_click_on_a_message_shows_its_trigger_as_the_live_window_showed_it(window, qtbot):
    win, controller = window
    room = await _start(win, controller)
    seen: dict[int, tuple[str, dict]] = {}  # message id -> (selected, what the window showed)
    for i in range(7):
        before, count = room.step, len(room.messages)
        win.act_step.trigger()
        await until(lambda: room.step > before and _idle(room), what=f"step {i + 1}")  # noqa: B023
        await asyncio.sleep(0.05)
        if i == 3:  # look at another participant for a while, as a user would
            other = next(a.name for a in room.agents if a.name != win.selection.name)
            win.participants.chips[other].clicked.emit(other)
        if len(room.messages) > count:
            seen[room.messages[-1].id] = (win.selection.name, live(win))
    assert len(seen) >= 3
    latest = live(win)
    # Still live (paused): every earlier message shows the trigger that produced it.
    for mid, (selected, shown) in seen.items():
        win.selection.select(selected)
        click(qtbot, win, mid)
        await asyncio.sleep(0)
        assert win.history.looking_back
        assert past(win) == shown, f"message #{mid}"
        title = win.decisions.title.text()
        assert f"Showing the trigger of message #{mid} (step " in title
        assert win.decisions.live_button.isVisible()
        assert not win.memory.isVisible()
        assert win.history.memory.isVisible()
        assert "As at step" in win.history._past[0][1].banner.text()
    # The icebreaker: no trigger produced it, and the strip says so with no decisions.
    click(qtbot, win, 1)
    assert "icebreaker: no trigger produced it" in win.decisions.title.text()
    assert win.decisions.rows() == []
    # The past cannot be changed from here: the window says so.
    bubble = win.history.thoughts.bubbles()[0] if win.history.thoughts.bubbles() else None
    if bubble is not None:
        win.history.thoughts.force_express_requested.emit(win.selection.name, bubble.thought_id)
        assert "Back to live" in win.messages.status_label.text()
    assert not win.history.memory.add_button.isVisible()
    # Back to live: the live panes as they were.
    win.decisions.live_button.click()
    assert not win.history.looking_back
    assert win.memory.isVisible()
    assert not win.decisions.live_button.isVisible()
    win.selection.select(list(seen.values())[-1][0])
    assert live(win) == latest
    await controller.stop()


async def test_new_messages_while_looking_back_neither_pull_the_view_back_nor_get_lost(
    window, qtbot
):
    win, controller = window
    win.resize(1024, 700)
    room = await _start(win, controller, n=4)
    win.act_run.trigger()
    await until(lambda: len(room.messages) >= 4, what="four messages")
    win.act_pause.trigger()
    await until(lambda: controller.control.paused and _idle(room), what="paused")
    click(qtbot, win, 2)
    await asyncio.sleep(0.05)
    shown = past(win)
    title = win.decisions.title.text()
    bar = win.conversation.list.verticalScrollBar()
    bar.setValue(0)  # the user scrolled up to the message they clicked
    count = len(room.messages)
    win.act_run.trigger()
    await until(lambda: len(room.messages) >= count + 3, what="three more messages")
    await asyncio.sleep(0.1)  # deferred sizing (which used to scroll to the newest message)
    # The history view stays where it was…
    assert win.history.looking_back
    assert past(win) == shown
    assert win.decisions.title.text() == title
    assert bar.maximum() > 0
    assert bar.value() == 0  # more messages than fit, still at the top
    n = len(room.messages) - count
    note = win.decisions.past_note
    assert note.isVisible()
    assert note.text() == f"{win.history.new_messages} new messages since"
    assert win.history.new_messages >= n
    # …and nothing is lost: the messages are in the conversation, the live panes followed.
    assert all(m.id in win.conversation.widgets for m in room.messages[-n:])
    await controller.stop()
    await until(lambda: controller.task is None or controller.task.done(), what="stopped")
    win.decisions.live_button.click()
    await asyncio.sleep(0.05)
    assert not win.history.looking_back
    assert bar.value() == bar.maximum()
    h = SessionHistory.load(controller.database(), room.session_id)
    last = h.at_trigger(len(h.triggers) - 1)
    assert [r[0] for r in win.decisions.rows()] == [d.agent for d in last.decisions]
    assert f"step {last.step}," in win.decisions.title.text()


async def test_arrows_in_the_strip_step_through_triggers_and_back_to_live(window, qtbot):
    win, controller = window
    room = await _start(win, controller)
    await _steps(win, room, 4)
    h = SessionHistory.load(controller.database(), room.session_id)
    n = len(h.triggers)
    win.decisions.table.setFocus()
    await until(lambda: win.decisions.table.hasFocus(), what="focus")
    qtbot.keyClick(win.decisions.table, Qt.Key.Key_Left)
    snap = win.history.snapshot
    assert snap is not None
    assert snap.trigger is not None
    assert snap.trigger.index == n - 2
    expected = [d.agent for d in h.at_trigger(n - 2).decisions]
    assert [r[0] for r in win.decisions.rows()] == expected
    assert f"step {snap.step}" in win.decisions.title.text()
    win.decisions.back_button.click()
    assert win.history.snapshot.trigger.index == n - 3
    win.decisions.forward_button.click()
    qtbot.keyClick(win.decisions.table, Qt.Key.Key_Right)
    assert win.history.snapshot.trigger.index == n - 1
    qtbot.keyClick(win.decisions.table, Qt.Key.Key_Right)  # past the latest: live again
    assert not win.history.looking_back
    assert win.memory.isVisible()
    await controller.stop()


async def test_after_the_run_and_in_replay_a_click_shows_the_trigger(window, qtbot):
    win, controller = window
    room = await _start(win, controller)
    await _steps(win, room, 4)
    await controller.stop()
    sid = room.session_id
    mid = room.messages[-1].id
    click(qtbot, win, mid)  # the session has ended: still readable
    assert f"Showing the trigger of message #{mid}" in win.decisions.title.text()
    await win.open_replay(str(controller.db_path), sid)
    assert not win.history.looking_back
    assert not win.decisions.back_button.isVisible()
    h = SessionHistory.load(controller.database(), sid)
    target = h.at_message(2)
    win.replay.seek(win.replay.recording.last)
    click(qtbot, win, 2)
    assert win.replay.position == target.seq
    assert [r[0] for r in win.decisions.rows()] == [d.agent for d in target.decisions]
    await controller.shutdown()


async def test_looking_back_says_whether_the_run_goes_on_and_offers_no_delete(window, qtbot):
    """While the run goes on, the banner says so; once the session has ended it says that
    instead, and the past's bubbles offer no ✕ in either case (issue 34, point 8)."""
    win, controller = window
    room = await _start(win, controller)
    await _steps(win, room, 3)
    win.selection.select(room.messages[-1].speaker)
    click(qtbot, win, room.messages[-1].id)
    banner = win.history._past[0][1].banner.text()
    assert "The live run goes on." in banner
    assert win.history.thoughts.bubbles()
    assert not any(b.delete_button.isVisibleTo(b) for b in win.history.thoughts.bubbles())
    win.history.back_to_live()

    await controller.stop()
    click(qtbot, win, room.messages[-1].id)
    banner = win.history._past[0][1].banner.text()
    assert "live run goes on" not in banner
    assert "The session has ended" in banner
    assert "the session as it ended" in win.messages.status_label.text()
    bubbles = win.history.thoughts.bubbles()
    assert bubbles
    assert not any(b.delete_button.isVisibleTo(b) for b in bubbles)
    await controller.shutdown()
