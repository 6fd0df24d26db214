"""A person in the room: the composer invites them once they joined (on screen, not only in the
widget's property), the window says when the agents wait for them, and the speed a human
session forced does not carry over to the next session."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QEvent, QObject

from tests.ui.conftest import app_window, until

pytestmark = pytest.mark.asyncio


class _Painted(QObject):
    """The composer's placeholder text at each paint of its viewport: what was on screen."""

    def __init__(self, composer) -> None:
        super().__init__(composer)
        self.composer = composer
        self.seen: list[str] = []
        composer.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.seen.append(self.composer.placeholderText())
        return False


async def _session(controller, n: int = 3):
    room = await controller.new_session(controller.library()[:n], icebreaker="Weekend plans?")
    assert room is not None
    return room


async def test_the_composer_shows_its_invitation_once_the_person_joined(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "h.db", minilm)
    await _session(controller)
    painted = _Painted(win.conversation.composer)
    # Joining a running simulation: the window repaints while the simulation stops, before the
    # placeholder changes.
    win.act_run.trigger()
    await until(win.act_pause.isEnabled, what="the run to start")
    await controller.join_as_human("Zoe")
    await asyncio.sleep(0.3)
    assert win.conversation.composer.placeholderText().startswith("Message as Zoe")
    assert painted.seen, "the composer was never painted"
    assert painted.seen[-1].startswith("Message as Zoe"), painted.seen
    await controller.shutdown()


async def test_the_window_says_when_the_agents_wait_for_the_person(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "w.db", minilm)
    room = await _session(controller)
    controller.settings.room.max_agent_streak = 2
    controller.settings.room.pause_seconds = 600  # no agent speaks up on its own meanwhile
    await controller.join_as_human("Zoe")
    label = win.conversation.waiting_label
    assert not label.isVisible()
    await room.post_human_message("Zoe", "Hello all")
    agents = [a.name for a in room.agents]
    await room.post(agents[0], "Hi Zoe")
    assert not label.isVisible()
    await room.post(agents[1], "Welcome!")
    await until(label.isVisible, what="the agents-waiting notice")
    assert label.text() == "Agents are waiting for you to speak (2 agent messages in a row)"
    assert "waiting for you" in win.conversation.composer.placeholderText()
    await room.post_human_message("Zoe", "Thanks")
    await until(lambda: not label.isVisible(), what="the notice to go once the person spoke")
    assert win.conversation.composer.placeholderText().startswith("Message as Zoe")
    await controller.shutdown()


async def test_the_next_session_has_its_own_speed_again(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "p.db", minilm)
    await _session(controller)
    assert win.pace.currentData() == "fast"
    await controller.join_as_human("Zoe")
    assert win.pace.currentData() == "typing"  # a person reads along
    room = await _session(controller)
    assert win.pace.currentData() == "fast"
    assert controller.settings.room.pace == "fast"
    assert room.settings.room.pace == "fast"
    await controller.shutdown()
