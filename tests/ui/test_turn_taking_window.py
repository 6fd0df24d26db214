"""The window shows turn-taking as it happens: an interruption (both sides of it) and the saliency
of a re-scored thought."""

from __future__ import annotations

from typing import Any

import pytest

from playground import events
from playground.embedding.cache import CachingEmbedder
from testbed.llm_server import FakeLLMServer
from tests.support.turns import scripted
from ui.app import build

pytestmark = pytest.mark.asyncio


async def _session(controller, n: int, icebreaker: str | None):
    room = await controller.new_session(controller.library()[:n], icebreaker=icebreaker)
    assert room is not None
    return room


async def test_an_interruption_is_marked_and_the_decision_strip_explains_both_sides(
    qtbot, tmp_path, minilm
):
    with FakeLLMServer(logprobs=False) as srv:
        srv.set_responder(scripted({"Ana": 1, "Ben": 2, "Chloe": 5}))
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "test-key"}
        win, controller = build(
            db_path=str(tmp_path / "t.db"), environ=env, embedder=CachingEmbedder(minilm)
        )
        qtbot.addWidget(win)
        win.show()
        controller.configure({"model": "fake-model", "retry_base_delay": 0})
        room = await _session(controller, 3, None)  # Ana, Ben, Chloe
        room.add_human("Zoe")
        await room.post_human_message("Zoe", "Ben, what did you do last weekend?")

        await room.step_once()  # Chloe (5 × 1.02 ≥ 4.8) takes the floor from Ben
        rows = {r[0]: r for r in win.decisions.rows()}
        assert rows["Chloe"][1:3] == ["interrupts", "5.10 / 4.8"]
        assert "takes the floor from Ben" in rows["Chloe"][3]
        assert rows["Ben"][1] == "silent"
        assert "lost the floor to Chloe, who interrupted" in rows["Ben"][3]
        chloe = room.messages[-1]
        assert chloe.speaker == "Chloe"
        assert chloe.interruption
        assert "⚡ interrupts" in win.conversation.widgets[chloe.id].header.text()

        await room.step_once()  # the turn stayed Ben's: he answers now
        rows = {r[0]: r for r in win.decisions.rows()}
        assert rows["Ben"][1] == "speaks"
        assert "addressed" in rows["Ben"][3]
        ben = room.messages[-1]
        assert ben.speaker == "Ben"
        assert "⚡" not in win.conversation.widgets[ben.id].header.text()
        await controller.shutdown()


async def test_the_saliency_badge_of_a_re_scored_thought_follows_its_new_saliency(
    qtbot, tmp_path, minilm
):
    win, controller = build(
        db_path=str(tmp_path / "s.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.show()
    room = await _session(controller, 3, "What did you do last weekend?")
    seen: list[Any] = []
    room.bus.subscribe(seen.append)
    for a in room.agents:  # every participant's page is built now and kept up to date live
        win.selection.select(a.name)

    def changed() -> tuple[str, int, float, float | None] | None:
        """A retained thought re-scored with a saliency its badge did not show at first."""
        formed = {e.thought.id: e.thought.saliency for e in seen if e.kind == "thought_formed"}
        latest = {
            (e.agent, e.evaluation.thought_id): e.saliency
            for e in seen
            if isinstance(e, events.ThoughtEvaluated) and e.retained
        }
        for (agent, tid), sal in latest.items():
            if tid in formed and f"{sal:.2f}" != f"{formed[tid]:.2f}":
                return agent, tid, formed[tid], sal
        return None

    for _ in range(12):
        await room.step_once()
        if changed():
            break
    found = changed()
    assert found, "no retained thought was re-scored with a new saliency"
    agent, tid, first, now = found
    win.selection.select(agent)
    bubble = win.thoughts.bubble(tid)
    assert bubble is not None
    assert bubble._saliency_badge.text() == f"sal {now:.2f}" != f"sal {first:.2f}"
    await controller.shutdown()
