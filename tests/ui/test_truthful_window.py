"""Issue 10, "the window must never say something untrue": an ended session refuses changes and
says why (with ways to go on), forced messages say "forced by you", the status bar names the
session's engine, ties read "tied", and a random memory pull shows "random" with its cosine."""

from __future__ import annotations

import asyncio
import random

import pytest

from playground import domain, events
from playground.embedding.cache import CachingEmbedder
from playground.room import floor
from tests.support import qt
from tests.ui.conftest import until
from ui.app import build
from ui.bridge import EngineBridge
from ui.dialogs.new_session import NewSessionDialog
from ui.panes.decisions.decision_strip import DecisionStrip
from ui.panes.memory.memory_pane import MemoryPane
from ui.panes.memory.memory_table import COL_SALIENCY, COL_TEXT
from ui.selection import SelectedParticipant

pytestmark = pytest.mark.asyncio
ENDED = r"has ended \(interrupted at \d\d:\d\d:\d\d\); it can no longer change"


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "ui.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    return win, controller


async def _started(win, controller):
    room = await controller.new_session(
        controller.library()[:3], icebreaker="What did you do last weekend?"
    )
    assert room is not None
    win.act_step.trigger()
    await until(lambda: room.step >= 1 and set(room.states.values()) == {"idle"}, what="one step")
    await until(lambda: win.thoughts.bubbles(), what="thought bubbles")
    return room


def _unsaid_bubble(win, room):
    name = win.selection.name
    reservoir = room.agent(name).reservoir
    return name, next(
        b.thought_id
        for b in win.thoughts.bubbles()
        if reservoir.get(b.thought_id).expressed_in is None
    )


async def test_a_thought_clicked_right_after_stop_posts_nothing_and_the_window_says_why(window):
    win, controller = window
    room = await _started(win, controller)
    name, tid = _unsaid_bubble(win, room)
    n = len(room.messages)
    # The race in the issue: the click's articulation is in flight when Stop ends the session.
    win.thoughts.force_express_requested.emit(name, tid)
    win.act_stop.trigger()
    await until(lambda: room.status == "interrupted", what="stop")
    await until(lambda: not win._tasks, what="both commands to end")
    await asyncio.sleep(0.2)
    assert len(room.messages) == n, "nothing is posted after the end"
    assert len(win.conversation.widgets) == n
    # Every change is refused, and the banner says why and how to go on.
    win.thoughts.force_express_requested.emit(name, tid)
    await until(lambda: win.banner.isVisible(), what="the refusal")
    assert "Express thought" in win.banner.text()
    assert __import__("re").search(ENDED, win.banner.text())
    assert "New session like this" in win.banner.text()
    assert "fork" in win.banner.text()
    for refuse, what in (
        (lambda: win.memory.add_requested.emit(name, "fact", "I keep bees.", 1.0), "Add memory"),
        (lambda: win.thoughts.delete_requested.emit(name, tid), "Delete thought"),
    ):
        win.hide_error()
        refuse()
        await until(lambda w=what: w in win.banner.text(), what=what)  # type: ignore[misc]  # mypy cannot type a lambda's default argument
        assert "it can no longer change" in win.banner.text()
    assert tid in [b.thought_id for b in win.thoughts.bubbles()]
    assert not any("bees" in m.text for m in room.agent(name).memory.items.values())
    assert not win.conversation.composer.isEnabled()
    for w, h in ((1024, 700), (1440, 900)):  # the reason and the ways on fit the window
        win.resize(w, h)
        await asyncio.sleep(0.05)
        assert win.banner.isVisible()
        assert win.banner.width() <= w
        assert win.banner.height() >= win.banner.heightForWidth(win.banner.width())
    # The way on: a new session with the same settings.
    win.ended_offer.follow("like")
    await until(
        lambda: any(d.isVisible() for d in win.findChildren(NewSessionDialog)),
        what="the New session dialog, prefilled",
    )
    dialog = next(d for d in win.findChildren(NewSessionDialog) if d.isVisible())
    assert {p.name for p in dialog.chosen()} == {a.name for a in room.agents}
    dialog.reject()
    await controller.shutdown()


async def test_a_forced_message_says_forced_by_you_and_others_do_not(window):
    win, controller = window
    room = await _started(win, controller)
    name, tid = _unsaid_bubble(win, room)
    win.thoughts.force_express_requested.emit(name, tid)
    await until(lambda: room.messages[-1].thought_id == tid, what="the forced message")
    mid = room.messages[-1].id
    await until(lambda: mid in win.conversation.widgets, what="the forced message shown")
    assert "forced by you" in win.conversation.widgets[mid].header.text()
    assert all(
        "forced by you" not in w.header.text()
        for i, w in win.conversation.widgets.items()
        if i != mid
    )
    await controller.shutdown()


async def test_the_status_bar_keeps_the_sessions_engine_when_the_engine_dialog_changes(window):
    win, controller = window
    await _started(win, controller)
    assert win.messages.engine_label.text() == "offline engine (no language model)"
    dlg = win.dialogs.open_engine_settings()
    assert "next new session" in dlg.applies_note.text()
    dlg.engine.setCurrentIndex(dlg.engine.findData("openai"))
    dlg.base_url.setText("http://127.0.0.1:9/v1")
    dlg.model.setText("other-model")
    dlg.accept()
    assert controller.engine_label().startswith("other-model @ http://127.0.0.1:9")  # the next
    assert win.messages.engine_label.text() == "offline engine (no language model)", (
        "the status bar names the engine the session on screen runs"
    )
    assert controller.engine.cognition.name == "offline engine"
    await controller.shutdown()


async def test_a_tie_as_shown_reads_tied_in_the_decision_strip(qtbot):
    bridge = EngineBridge()
    strip = DecisionStrip(bridge)
    qtbot.addWidget(strip)

    def wants(agent: str, score: float) -> domain.Decision:
        return domain.Decision(
            agent=agent,
            step=3,
            trigger="new_message",
            action="speak",
            thought_id=1,
            score=score,
            threshold=3.5,
            turn_type="open",
            reason=f"best thought scored {score:.2f}",
        )

    hiro, grace = wants("Hiro", 4.0812), wants("Grace", 4.0779)  # both read 4.08
    winner = floor.arbitrate([hiro, grace], random.Random("7:3:floor"))
    assert winner is not None
    loser = grace if winner is hiro else hiro
    bridge.dispatch(events.TriggerFired(trigger="new_message", message_id=2, generation=1, step=3))
    for d in (hiro, grace):
        bridge.dispatch(events.DecisionMade(decision=floor.outcome(d, winner, None), step=3))
    text = " ".join(" ".join(r) for r in strip.rows())
    assert f"tied with {winner.agent} at 4.08; {winner.agent} won the seeded draw" in text
    assert "scored higher" not in text
    assert loser.agent in text


async def test_a_random_memory_pull_shows_random_and_its_cosine_never_a_saliency(qtbot):
    bridge = EngineBridge()
    selection = SelectedParticipant()
    pane = MemoryPane(bridge, selection)
    qtbot.addWidget(pane)
    persona = domain.Persona(id="ana", name="Ana", facts=["I surf."])
    bridge.dispatch(events.ParticipantJoined(name="Ana", participant_kind="ai", persona=persona))
    for mid, text in ((1, "I surf before work."), (2, "I grow tomatoes.")):
        bridge.dispatch(
            events.MemoryChanged(
                agent="Ana",
                change="added",
                memory=domain.MemoryItem(id=mid, kind="fact", text=text),
            )
        )
    selection.select("Ana")
    stimuli = [
        domain.Stimulus(ref="memory:1", text="…", saliency=0.62),
        domain.Stimulus(ref="memory:2", text="…", saliency=-0.01, random=True, cosine=0.12),
    ]
    bridge.dispatch(events.MemoriesRetrieved(agent="Ana", stimuli=stimuli, step=2))
    row = [r["id"] for r in pane.rows()].index(2)
    cell = qt.cell(pane.table, row, COL_SALIENCY).text()
    assert cell == "random\ncos 0.12"
    tip = qt.cell(pane.table, row, COL_TEXT).toolTip()
    assert "-0.01" not in cell + tip
    assert "pulled in at random" in tip
    assert "0.12" in tip
    assert qt.cell(pane.table, [r["id"] for r in pane.rows()].index(1), COL_SALIENCY).text() == "0.62"
