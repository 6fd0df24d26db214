"""The playground window end to end, headless: simulation, inspection, forcing, memory, human, errors."""

from __future__ import annotations

import asyncio
import functools
import sqlite3

import pytest

from playground.storage import SessionReader, open_database
from testbed.llm_server import FakeLLMServer
from testbed.responders import faithful_responder
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


def _step_done(room) -> bool:
    return room.step >= 1 and all(state == "idle" for state in room._states.values())


async def _start(
    win, controller, n: int = 4, icebreaker: str | None = "What did you do last weekend?"
):
    people = controller.library()[:n]
    room = await controller.new_session(people, icebreaker=icebreaker)
    assert room is not None
    return room


async def test_a_four_agent_offline_simulation_fills_the_panes(window):
    win, controller = window
    room = await _start(win, controller)
    assert "offline engine" in win.messages.engine_label.text()
    win.act_run.trigger()
    await until(lambda: len(win.conversation.widgets) >= 4, what="messages")
    await until(lambda: win.thoughts.bubbles(), what="thought bubbles")
    assert len(win.participants.chips) == 4
    assert win.memory.rows(), "the selected agent's memory is shown"
    await until(
        lambda: win.decisions.rows(), what="the decision strip explaining the latest trigger"
    )
    win.act_pause.trigger()
    # The step in flight may still post; once every agent is idle, nothing more may come.
    await until(lambda: set(room.states.values()) == {"idle"}, what="the step in flight to end")
    await asyncio.sleep(0.1)
    n = len(win.conversation.widgets)
    await asyncio.sleep(0.5)
    assert len(win.conversation.widgets) == n, "paused means no new messages"
    assert room.messages
    win.act_stop.trigger()
    await until(lambda: room.status == "interrupted", what="stop")
    assert not win.act_run.isEnabled()
    assert not win.act_step.isEnabled()
    await controller.run()
    assert "has ended (interrupted at " in win.banner.text()
    await controller.shutdown()


async def test_selecting_another_participant_switches_both_side_panes(window):
    win, controller = window
    room = await _start(win, controller)
    win.act_step.trigger()
    await until(lambda: win.thoughts.bubbles(), what="bubbles")
    first = win.selection.name
    other = next(a.name for a in room.agents if a.name != first)
    before_memory = [r["text"] for r in win.memory.rows()]
    win.participants.chips[other].clicked.emit(other)
    assert win.selection.name == other
    after_memory = [r["text"] for r in win.memory.rows()]
    assert after_memory
    assert after_memory != before_memory
    assert {
        room.agent(other).reservoir.get(b.thought_id).agent for b in win.thoughts.bubbles()
    } <= {other}
    await controller.shutdown()


async def test_force_express_posts_the_thought_and_delete_removes_a_bubble(window):
    win, controller = window
    room = await _start(win, controller)
    win.act_step.trigger()
    await until(lambda: _step_done(room), what="the step to finish")
    assert win.act_run.isEnabled()
    assert not win.act_pause.isEnabled()  # paused again after one step
    await until(lambda: len(win.thoughts.bubbles()) >= 2, what="bubbles")
    name = win.selection.name
    bubbles = win.thoughts.bubbles()
    target = next(
        b for b in bubbles if room.agent(name).reservoir.get(b.thought_id).expressed_in is None
    )
    n = len(room.messages)
    win.thoughts.force_express_requested.emit(name, target.thought_id)
    await until(lambda: len(room.messages) > n, what="the forced message")
    assert room.messages[-1].speaker == name
    assert room.messages[-1].thought_id == target.thought_id
    await until(lambda: room.messages[-1].id in win.conversation.widgets, what="message shown")
    victim = next(b.thought_id for b in win.thoughts.bubbles() if b.thought_id != target.thought_id)
    win.thoughts.delete_requested.emit(name, victim)
    await until(
        lambda: victim not in [b.thought_id for b in win.thoughts.bubbles()], what="bubble removed"
    )
    await controller.shutdown()


async def test_an_added_memory_is_used_as_a_stimulus(window):
    win, controller = window
    room = await _start(win, controller, n=2, icebreaker=None)
    name = win.selection.name
    win.memory.add_requested.emit(name, "interest", "I build wooden sailing boats by hand.", 1.0)
    await until(
        lambda: any("sailing boats" in r["text"] for r in win.memory.rows()), what="memory row"
    )
    await controller.join_as_human("Zoe")
    controller.set_pace("fast")
    await controller.send("Has anyone here ever built a wooden boat?")
    mem = next(m for m in room.agent(name).memory.items.values() if "sailing boats" in m.text)
    await until(
        lambda: any(
            mem.ref in room.agent(name).reservoir.get(b.thought_id).stimuli
            for b in win.thoughts.bubbles()
        ),
        what="a thought with the new memory as stimulus",
    )
    row = next(r for r in win.memory.rows() if r["id"] == mem.id)
    assert row["saliency"] is not None
    assert row["highlighted"]
    await controller.shutdown()


async def test_human_joins_gets_a_reply_and_private_notes_never_reach_a_prompt(
    qtbot, tmp_path, minilm
):
    from playground.embedding.cache import CachingEmbedder

    with FakeLLMServer() as srv:
        srv.set_responder(functools.partial(faithful_responder, rating=5))  # agents keen to answer
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "test-key"}
        win, controller = build(
            db_path=str(tmp_path / "h.db"), environ=env, embedder=CachingEmbedder(minilm)
        )
        qtbot.addWidget(win)
        win.show()
        controller.configure({"model": "fake-model", "pause_seconds": 30, "retry_base_delay": 0})
        room = await _start(win, controller, n=2, icebreaker=None)
        await controller.join_as_human("Zoe")
        assert win.pace.currentData() == "typing"  # real time reads at typing speed
        controller.set_pace("fast")  # but this test need not wait for it
        assert win.conversation.composer.isEnabled()
        win.conversation.composer.setPlainText("Hi both! Ana, what did you cook this weekend?")
        win.conversation.send_button.click()
        await until(
            lambda: any(m.kind == "ai" for m in room.messages), timeout=30, what="an agent reply"
        )
        mine = next(m for m in room.messages if m.speaker == "Zoe")
        theirs = next(m for m in room.messages if m.kind == "ai")
        win.conversation.widgets[mine.id].note_submitted.emit(
            mine.id, "SECRET-REASON I want Ana to talk"
        )
        win.conversation.widgets[theirs.id].note_submitted.emit(
            theirs.id, "SECRET-REACTION that felt warm"
        )
        await until(
            lambda: win.conversation.widgets[theirs.id].notes.isVisible(), what="note shown"
        )
        await controller.send("Nice! What else?")
        await until(
            lambda: sum(m.kind == "ai" for m in room.messages) >= 2 or len(srv.requests) > 40,
            timeout=30,
            what="more thinking",
        )
        sid = room.session_id
        await controller.shutdown()
        prompts = " ".join(str(r.get("messages", "")) for r in srv.requests)
    db = sqlite3.connect(tmp_path / "h.db")
    notes = db.execute("SELECT kind, text FROM annotations WHERE session_id = ?", [sid]).fetchall()
    db.close()
    assert ("reason", "SECRET-REASON I want Ana to talk") in notes
    assert ("reaction", "SECRET-REACTION that felt warm") in notes
    assert "SECRET-REASON" not in prompts
    assert "SECRET-REACTION" not in prompts
    assert "Nice! What else?" in prompts  # the agents did see the messages themselves


async def test_a_server_error_is_shown_and_the_session_is_kept(qtbot, tmp_path, minilm):
    from playground.embedding.cache import CachingEmbedder

    with FakeLLMServer() as srv:
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "test-key"}
        win, controller = build(
            db_path=str(tmp_path / "e.db"), environ=env, embedder=CachingEmbedder(minilm)
        )
        qtbot.addWidget(win)
        win.show()
        controller.configure({"model": "fake-model", "retry_base_delay": 0, "max_retries": 0})
        room = await _start(win, controller, n=2)
        srv.fail_next(500, count=100)
        win.act_step.trigger()
        await until(lambda: win.banner.isVisible(), what="the error banner")
        assert "500" in win.banner.text()
        sid = room.session_id
        await controller.shutdown()
    data = SessionReader(open_database(tmp_path / "e.db")).load(sid)
    assert data["messages"][0]["text"] == "What did you do last weekend?"
    assert data["session"]["status"] in ("failed", "interrupted")


async def test_closing_the_window_mid_run_marks_the_session_interrupted(window, tmp_path):
    win, controller = window
    room = await _start(win, controller)
    controller.configure({"max_turns": 500})
    win.act_run.trigger()
    await until(lambda: len(room.messages) >= 3, what="a few messages")
    sid = room.session_id
    win.close()
    await until(lambda: controller.db is None, what="shutdown")
    data = SessionReader(open_database(tmp_path / "ui.db")).load(sid)
    assert data["session"]["status"] == "interrupted"


async def test_question_card_answers_are_saved_as_labels(window, tmp_path):
    win, controller = window
    room = await _start(win, controller, n=2)
    await controller.join_as_human("Zoe")
    controller.set_pace("fast")
    await controller.send("Ana, what did you cook this weekend?")
    await until(lambda: win.conversation.card.isVisible(), what="the question card")
    not_sure = next(b for b in win.conversation.card_buttons if b.text() == "Not sure")
    not_sure.click()
    await until(lambda: not win.conversation.card.isVisible(), what="the card to close")
    sid = room.session_id
    assert win.conversation.composer.isEnabled()
    await controller.stop()
    assert not win.conversation.composer.isEnabled()  # nobody types into an ended session
    await controller.shutdown()
    db = sqlite3.connect(tmp_path / "ui.db")
    labels = db.execute("SELECT author, answer FROM labels WHERE session_id = ?", [sid]).fetchall()
    db.close()
    assert labels == [("Zoe", "not sure")]


async def test_participants_can_be_added_removed_and_retuned_mid_session(window):
    win, controller = window
    room = await _start(win, controller, n=2)
    newcomer = controller.library()[5]
    await controller.room_commands.add_participant(newcomer)
    await until(lambda: newcomer.name in win.participants.chips, what="the new chip")
    dlg = None
    win.selection.select(newcomer.name)
    dlg = win.dialogs.open_participant_settings()
    assert dlg is not None
    dlg.preset.setCurrentIndex(dlg.preset.findData("selective-participant"))
    dlg.accept()
    await until(
        lambda: room.agent(newcomer.name).proactivity.system1_prob == 0.0, what="the preset applied"
    )
    assert room.agent(newcomer.name).proactivity.interrupt_threshold == 5.0
    dlg = win.dialogs.open_participant_settings()
    dlg.im_threshold.slider.setValue(350)  # the slider drives the value
    assert dlg.im_threshold.value() == 3.5
    dlg.accept()
    await until(
        lambda: room.agent(newcomer.name).proactivity.im_threshold == 3.5, what="custom value"
    )
    await controller.room_commands.remove_participant(newcomer.name)
    await until(lambda: newcomer.name not in win.participants.chips, what="the chip removed")
    await controller.shutdown()


async def test_hovering_a_stimulus_highlights_its_memory(window):
    win, controller = window
    room = await _start(win, controller)
    win.act_step.trigger()
    await until(lambda: _step_done(room), what="the step")
    name = win.selection.name
    thought = next(
        room.agent(name).reservoir.get(b.thought_id)
        for b in win.thoughts.bubbles()
        if any(
            r.startswith("memory:") for r in room.agent(name).reservoir.get(b.thought_id).stimuli
        )
    )
    ref = next(r for r in thought.stimuli if r.startswith("memory:"))
    win.selection.focus_stimulus(ref)
    assert win.memory.focused_id == int(ref.split(":")[1])
    win.selection.focus_stimulus("message:1")
    assert win.conversation.widgets[1].styleSheet().count("#d8ecff") == 1
    await controller.shutdown()


async def test_bad_settings_and_unreachable_servers_are_reported_in_the_window(window):
    win, controller = window
    room = await _start(win, controller, n=2)  # an offline session is running…
    dlg = win.dialogs.open_engine_settings()
    dlg.engine.setCurrentIndex(dlg.engine.findData("openai"))
    dlg.base_url.setText("http://127.0.0.1:9/v1")
    dlg.test_requested.emit(dlg.overrides())
    await until(
        lambda: "cannot reach http://127.0.0.1:9/v1" in dlg.result_label.text(),
        what="the test verdict",
    )
    dlg.accept()
    controller.configure(
        {"engine": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}
    )
    await controller.new_session(controller.library()[2:4], icebreaker="Hey!")
    await until(lambda: win.banner.isVisible(), what="the error banner")
    assert "cannot reach" in win.banner.text()
    # …and survives the failed attempt: same room, same panes, still recording.
    assert controller.room is room
    assert room.status == "running"
    assert len(win.participants.chips) == 2
    assert len(win.conversation.widgets) == 1
    with pytest.raises(Exception, match="max_turns"):
        controller.configure({"max_turns": 0})
    await controller.shutdown()


async def test_joining_mid_simulation_keeps_the_session_running(window):
    win, controller = window
    room = await _start(win, controller, n=3)
    win.act_step.trigger()
    await until(lambda: _step_done(room), what="a simulated step")
    assert controller.task is not None
    assert not controller.task.done()  # the loop waits to go on
    await controller.join_as_human("Zoe")
    assert room.status == "running"
    assert win.act_stop.isEnabled()
    assert win.conversation.composer.isEnabled()
    controller.set_pace("fast")
    n = len(room.messages)
    await controller.send("Hello everyone, mind if I join?")
    await until(lambda: len(room.messages) > n + 1, what="an agent answering the human")
    assert room.status == "running"
    await controller.shutdown()
    assert room.status == "interrupted"
