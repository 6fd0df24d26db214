"""Retention and evolution: unexpressed thoughts are re-scored when salient again and seed new ones."""

import pytest

from playground import events
from playground.settings import PRESETS
from tests.conftest import offline_settings
from tests.support.rooms import build, of, persona

pytestmark = pytest.mark.asyncio

QUIET = PRESETS["simulation"].model_copy(
    update={"im_threshold": 5.0, "interrupt_threshold": 5.0, "system1_prob": 0.0}
)


async def test_retained_thoughts_are_rescored_and_evolve(embedder):
    settings = offline_settings(seed=3, creativity_prob=0.0)
    ana = persona("Ana", ["I surf at dawn before work.", "I live by the sea in Portugal."])
    room, _, seen = await build(settings, embedder, [])
    await room.add_agent(ana, QUIET)
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "I tried surfing at dawn for the first time today!")
    await room.step_once()
    first = [e.thought for e in of(events.ThoughtFormed, seen)]
    assert first
    assert all(t.expressed_in is None for t in first)  # nobody spoke: all retained

    await room.post_human_message("Zoe", "Surfing at dawn was cold but amazing. Do you surf?")
    await room.step_once()
    step = room.step
    rescored = [e for e in of(events.ThoughtEvaluated, seen) if e.retained]
    assert rescored, "an earlier thought that became salient again must be re-scored"
    assert all(e.evaluation.step == step for e in rescored)
    assert {e.evaluation.thought_id for e in rescored} <= {t.id for t in first}
    retrieved = of(events.MemoriesRetrieved, seen)[-1]
    assert any(s.ref.startswith("thought:") for s in retrieved.stimuli)
    salient_now = {s.ref: s.saliency for s in retrieved.stimuli}
    for (
        e
    ) in rescored:  # a re-scored thought carries its new saliency, not the one it was formed with
        assert e.saliency == salient_now[f"thought:{e.evaluation.thought_id}"]
    evolved = [
        e.thought
        for e in of(events.ThoughtFormed, seen)
        if e.thought.created_step == step
        and any(r.startswith("thought:") for r in e.thought.stimuli)
    ]
    assert evolved, "a retained thought must seed a new one (evolution)"
    assert int(evolved[0].stimuli[0].split(":")[1]) in {t.id for t in first}


async def test_expressed_and_deleted_thoughts_are_not_retrieved_again(embedder):
    settings = offline_settings(seed=3, creativity_prob=0.0)
    room, _, seen = await build(settings, embedder, [])
    agent = await room.add_agent(persona("Ana", ["I surf at dawn before work."]), QUIET)
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "I tried surfing at dawn today!")
    await room.step_once()
    ids = list(agent.reservoir.thoughts)
    room.delete_thought("Ana", ids[0])
    await room.force_express("Ana", ids[1])
    refs = {r for r in agent.reservoir.pool(embedder.dim).refs}
    assert f"thought:{ids[0]}" not in refs
    assert f"thought:{ids[1]}" not in refs
    assert of(events.ThoughtDeleted, seen)[0].thought_id == ids[0]
