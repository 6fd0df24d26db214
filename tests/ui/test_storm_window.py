"""Simulated users in the window, end to end on the offline engine: two simulated users and one
Inner Thoughts agent seated from New session, their hidden states as marked bubbles with a
sparkline point per turn, their messages marked, the agent's pane free of hidden state, Add
simulated user… mid-session, and the replay showing the states up to the moment."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from playground.embedding.cache import CachingEmbedder
from playground.storm import profiles
from tests.ui.conftest import until
from ui.app import build
from ui.panes.conversation.message_widget import SIMULATED_MARK
from ui.panes.hidden_state.hidden_state_pane import MARKER

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "ui.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    controller.simulated.users_dir = tmp_path / "users"
    qtbot.addWidget(win)
    win.show()
    return win, controller


def _states(db_path: str, session_id: str, name: str) -> list[tuple[int, int]]:
    con = sqlite3.connect(db_path)
    try:
        return con.execute(
            "SELECT message_id, turn FROM hidden_states WHERE session_id = ? AND participant = ?"
            " ORDER BY turn",
            (session_id, name),
        ).fetchall()
    finally:
        con.close()


async def test_two_simulated_users_and_an_agent_show_hidden_state_only_for_the_users(window):
    win, controller = window
    one = profiles.generate_profile(1, task="Buy a smartphone", difficulty=3, uncertainty=40)
    two = profiles.generate_profile(2, task="Refill my prescription", difficulty=2)
    controller.simulated.save_profile(
        one
    )  # a saved profile is listed; the other is generated in the box
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    box = dlg.simulated
    assert [box.list.item(i).text().split(" — ")[0] for i in range(box.list.count())] == [one.name]
    box.set_checked(one.id)
    gen = box.open_generate()
    gen.seed.setValue(2)
    gen.task.setCurrentText("Refill my prescription")
    gen.difficulty.setCurrentIndex(gen.difficulty.findData(2))
    gen.try_generate()
    assert gen.profile == two
    assert (controller.simulated.users_dir / f"{two.id}.toml").exists()
    box.speak.setValue(0.9)
    agent = controller.library()[0]
    for i in range(dlg.list.count()):
        item = dlg.list.item(i)
        item.setCheckState(item.checkState().Checked if i == 0 else item.checkState().Unchecked)
    assert [s.profile.id for s in box.seats()] == [one.id, two.id]
    dlg.accept()
    await until(lambda: controller.room is not None and len(controller.room.participants) == 3)
    room = controller.room
    users = [u.name for u in room.simulated_users]
    assert len(users) == 2
    assert agent.name in room.participants
    win.act_run.trigger()
    await until(
        lambda: all(sum(m.speaker == u for m in room.messages) >= 2 for u in users),
        timeout=120,
        what="two turns of each simulated user",
    )
    win.act_pause.trigger()
    await until(lambda: set(room.states.values()) == {"idle"}, what="the step in flight to end")
    await asyncio.sleep(0.1)
    for u in users:
        win.participants.chips[u].clicked.emit(u)
        hidden = win.thoughts.hidden
        assert win.thoughts._stack.currentWidget() is hidden
        assert hidden.isVisible()
        assert hidden.banner.text() == MARKER
        said = [m for m in room.messages if m.speaker == u]
        rows = _states(str(controller.db_path), room.session_id, u)
        assert [mid for mid, _ in rows] == [m.id for m in said]
        assert hidden.sparkline.point_count() == len(said) == len(hidden.cards())
        assert f"Turn {len(said) - 1}" in hidden.cards()[0].text()
        assert said[-1].text in hidden.cards()[0].text()
        assert win.memory.stack.currentWidget() is win.memory.profile_view
        assert win.memory.profile_view.edit_button.isVisible()
        assert room.participants[u].profile.task.task in win.memory.profile_view.text()
    for m in room.messages:
        header = win.conversation.widgets[m.id].header.text()
        assert (SIMULATED_MARK in header) == (m.speaker in users), header
    win.participants.chips[agent.name].clicked.emit(agent.name)
    assert win.thoughts._stack.currentWidget() is not win.thoughts.hidden
    assert not win.thoughts.hidden.isVisible()
    assert not win.thoughts.hidden.is_simulated(agent.name)
    assert win.memory.stack.currentWidget() is win.memory.table

    # Participants ▸ Add simulated user… seats a third one mid-session.
    three = profiles.generate_profile(3, task="Buy a smartphone", avoid_names=users)
    add = win.storm.open_add()
    add.users.add_profile(three)
    add.users.speak.setValue(0.5)
    add.buttons.accepted.emit()
    await until(lambda: len(room.simulated_users) == 3, what="the added simulated user")
    added = room.simulated_users[-1]
    assert added.profile == three
    assert added.speak_probability == 0.5
    assert win.participants.chips[added.name].kind == "simulated"
    await controller.shutdown()


async def test_the_replay_shows_the_hidden_states_up_to_the_moment(window):
    win, controller = window
    from ui.session.simulated import SimulatedSeat

    user = profiles.generate_profile(5, task="Buy a smartphone", difficulty=3)
    room = await controller.new_session(
        controller.library()[:1],
        icebreaker="Has anyone bought a phone lately?",
        simulated=[SimulatedSeat(user, 1.0)],
    )
    assert room is not None
    win.act_run.trigger()
    await until(
        lambda: sum(m.speaker == user.name for m in room.messages) >= 3,
        timeout=120,
        what="three turns of the simulated user",
    )
    await controller.stop()
    said = [m for m in room.messages if m.speaker == user.name]
    await win._open_replay(str(controller.db_path), room.session_id)
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.last)
    win.participants.chips[user.name].clicked.emit(user.name)
    hidden = win.thoughts.hidden
    assert hidden.sparkline.point_count() == len(said)
    win.replay.seek(rec.message_seq[said[1].id])  # back: a rebuild at the user's second message
    assert win.thoughts._stack.currentWidget() is hidden
    assert hidden.sparkline.point_count() == 2
    assert len(hidden.cards()) == 2
    assert said[1].text in hidden.cards()[0].text()
    win.replay.seek(rec.message_seq[said[0].id] - 1)  # just before the first: nothing yet
    assert hidden.sparkline.point_count() == 0
    assert hidden.empty.isVisible()
    win.replay.seek(rec.message_seq[said[2].id])  # forward, event by event
    assert hidden.sparkline.point_count() == 3
    win.replay.close()
    await controller.shutdown()
