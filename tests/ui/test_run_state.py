"""Run state: Pausing… then Paused, Step disables Run and Step, Run never races the set-up, and
the model's loading is visible over the conversation pane while the window stays responsive."""

from __future__ import annotations

import asyncio
import threading

import pytest

from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from tests.ui.conftest import until
from ui.app import build, start

pytestmark = pytest.mark.asyncio
ICEBREAKER = "What did you do last weekend?"


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "ui.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.show()
    return win, controller


async def _session(controller, n: int = 3, *, typing: bool = False):
    if typing:  # each message takes as long as typing it: a step in flight lasts a while
        controller.settings.room.pace = "typing"
        controller.settings.room.typing_cps = 40.0
    room = await controller.new_session(controller.library()[:n], icebreaker=ICEBREAKER)
    assert room is not None
    return room


def _speaking(room) -> bool:
    return "speaking" in room.states.values()


async def test_pause_says_pausing_until_the_step_in_flight_has_posted_then_paused(window):
    win, controller = window
    room = await _session(controller, typing=True)
    assert win.run_label.text() == "Paused"  # a new session waits for Run
    seen: list[tuple[str, int]] = []
    controller.running_changed.connect(
        lambda _: seen.append((win.run_label.text(), len(room.messages)))
    )
    win.act_run.trigger()
    await until(lambda: win.run_label.text() == "Running", what="running")
    await until(lambda: _speaking(room), what="an agent typing its message")
    before = len(room.messages)

    win.act_pause.trigger()

    assert win.run_label.text() == "Pausing…"
    assert not win.act_run.isEnabled()
    assert not win.act_step.isEnabled()
    assert not win.act_pause.isEnabled()
    assert win.act_stop.isEnabled()
    await until(lambda: win.run_label.text() == "Paused", what="paused")
    # The message in flight was posted before the window said "Paused" (documented choice).
    paused_at = next(n for text, n in seen if text == "Paused")
    assert paused_at == before + 1 == len(room.messages)
    assert room.messages[-1].id in win.conversation.widgets
    assert win.act_run.isEnabled()
    assert win.act_step.isEnabled()
    await asyncio.sleep(0.6)
    assert len(room.messages) == before + 1, "nothing is posted once Paused"
    await controller.shutdown()


async def test_run_and_step_are_disabled_while_a_step_runs(window):
    win, controller = window
    room = await _session(controller, typing=True)
    win.act_step.trigger()
    await until(lambda: room.step >= 1 and _speaking(room), what="the step in flight")
    assert win.run_label.text() == "Stepping…"
    assert not win.act_run.isEnabled()
    assert not win.act_step.isEnabled()
    assert not win.act_pause.isEnabled()
    n = len(room.messages)
    await controller.step()  # a second Step asked anyway (e.g. a shortcut) is not a second step
    await until(lambda: win.run_label.text() == "Paused", what="the step to end")
    assert win.act_run.isEnabled()
    assert win.act_step.isEnabled()
    assert room.step == 1
    assert len(room.messages) == n + 1
    await controller.shutdown()


async def test_run_the_instant_it_is_enabled_runs_the_whole_set_up_session(window):
    win, controller = window
    pressed: list[int] = []

    def press_when_enabled() -> None:
        if win.act_run.isEnabled() and not pressed:
            pressed.append(len(controller.room.messages) if controller.room else -1)
            win.act_run.trigger()

    win.act_run.changed.connect(press_when_enabled)
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.accept()
    await until(lambda: pressed, what="Run to be enabled")
    assert pressed == [1], "Run is enabled only once the icebreaker is posted"
    room = controller.room
    await until(lambda: len(room.messages) >= 4 or room.status != "running", what="a run")
    assert len(room.messages) >= 4, f"ended after the icebreaker alone: {room.status}"
    await controller.shutdown()


async def test_run_pressed_while_a_new_session_is_set_up_applies_to_the_new_one(window):
    win, controller = window
    old = await _session(controller, n=2)
    win.act_step.trigger()
    await until(lambda: controller.run_state() == "paused" and old.step == 1, what="a step")
    assert win.act_run.isEnabled()

    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.accept()  # asks first: the old session is live (paused)
    await until(lambda: win.leave_question is not None, what="the question")
    win.leave_question.end_button.click()  # the set-up starts; the old session is on screen a moment
    await until(lambda: controller.setting_up, what="the set-up")
    assert not win.act_run.isEnabled()
    assert not win.act_step.isEnabled()
    assert win.run_label.text() == "Setting up…"
    win.act_run.trigger()  # disabled: nothing happens
    run = asyncio.ensure_future(controller.run())  # asked anyway (a shortcut, a script)
    await until(lambda: controller.room is not old and controller.room is not None, what="new")
    new = controller.room
    await run
    assert old.step == 1, "the session being replaced did not run"
    assert old.status == "interrupted"
    await until(lambda: len(new.messages) >= 3 or new.status != "running", what="the new run")
    assert len(new.messages) >= 3
    assert win.run_label.text() == "Running"
    assert not win.banner.isVisible(), win.banner.text()
    await controller.shutdown()


async def test_the_model_loads_from_start_up_and_a_set_up_waiting_for_it_says_so(
    qtbot,
    tmp_path,
    monkeypatch,
):
    # The window stays responsive because the model loads in a worker thread, never on the GUI
    # thread (how long the loop stalls meanwhile is measured in bench/bench_ui.py).
    loaded_on: list[threading.Thread] = []
    load_sync = MiniLMEmbedder.load_sync

    def recording_load(self: MiniLMEmbedder) -> object:
        loaded_on.append(threading.current_thread())
        return load_sync(self)

    monkeypatch.setattr(MiniLMEmbedder, "load_sync", recording_load)
    win, controller = build(db_path=str(tmp_path / "ui.db"), environ={})
    qtbot.addWidget(win)
    busy: list[str] = []
    controller.busy_changed.connect(busy.append)
    start(win, controller)  # no embedder handed in: the packaged MiniLM, not loaded yet
    assert controller.embedding.started, "loading starts with the app"
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.accept()
    await until(lambda: busy, what="a busy state")
    if controller.embedding.loading:  # the usual case here: the model is still loading
        assert busy[0] == "Loading the embedding model (all-MiniLM-L6-v2)…"
        assert win.busy.isVisible()
        assert win.busy.text() == busy[0]
        assert win.busy.geometry() == win.conversation.rect()
    await until(lambda: controller.room is not None, what="the session set up", timeout=120)
    assert loaded_on, "the model was never loaded"
    assert threading.main_thread() not in loaded_on, "the model loaded on the GUI thread"
    await until(lambda: not controller.setting_up, what="the set-up to end")
    assert not win.busy.isVisible()
    assert busy[-1] == ""
    assert any(t.startswith("Setting up the session") for t in busy)
    await controller.shutdown()
