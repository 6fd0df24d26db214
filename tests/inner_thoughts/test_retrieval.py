"""Retrieval as the paper does it: salient stimuli, a creativity pull that is a probability alone,
and a cap on the earlier thoughts re-scored per trigger."""

import pytest

from playground import events
from playground.settings import PRESETS
from tests.conftest import offline_settings
from tests.support.rooms import build, of, persona

pytestmark = pytest.mark.asyncio

QUIET = PRESETS["simulation"].model_copy(
    update={"im_threshold": 5.0, "interrupt_threshold": 5.0, "system1_prob": 0.0}
)
FACTS = ["I surf at dawn before work.", "I live by the sea in Portugal.", "I grow tomatoes."]
LINES = [
    "I tried surfing at dawn for the first time today!",
    "The water was cold but the waves were perfect.",
    "Do you think the sea in Portugal is warmer?",
    "My tomatoes finally turned red this week.",
    "What else do you do before work?",
    "We should all go to the beach together.",
]


async def _talk(settings, embedder, agents: int = 2):
    room, _, seen = await build(settings, embedder, [])
    for name in ("Ana", "Ben")[:agents]:
        await room.add_agent(persona(name, FACTS), QUIET)
    room.add_human("Zoe")
    for line in LINES:
        await room.post_human_message("Zoe", line)
        await room.step_once()
    return room, of(events.MemoriesRetrieved, seen), seen


async def test_nothing_salient_means_no_random_memory(embedder):
    """When no memory is salient the agent thinks from the conversation and its reservoir: the
    creativity pull never fires just because nothing was salient."""
    settings = offline_settings(seed=3, creativity_prob=0.0, saliency_threshold=0.99)
    _, retrieved, _ = await _talk(settings, embedder)
    assert len(retrieved) == 2 * len(LINES)
    assert not any(st.random for e in retrieved for st in e.stimuli)
    assert not any(st.ref.startswith("memory:") for e in retrieved for st in e.stimuli)


async def test_the_creativity_pull_is_a_probability_per_trigger(embedder):
    always = offline_settings(seed=3, creativity_prob=1.0, saliency_threshold=0.99)
    _, retrieved, _ = await _talk(always, embedder, agents=1)
    assert all(sum(st.random for st in e.stimuli) == 1 for e in retrieved)
    default = offline_settings(seed=3, saliency_threshold=0.99)  # creativity_prob 0.1
    assert default.room.creativity_prob == 0.1
    _, retrieved, _ = await _talk(default, embedder)
    pulls = sum(any(st.random for st in e.stimuli) for e in retrieved)
    assert pulls < len(retrieved) / 2, "a small probability, not every time nothing was salient"


async def test_at_most_max_retained_earlier_thoughts_are_rescored_the_most_salient(embedder):
    settings = offline_settings(seed=3, creativity_prob=0.0, saliency_threshold=0.0)
    assert settings.room.max_retained == 2
    _room, retrieved, seen = await _talk(settings, embedder, agents=1)
    rescored = [e for e in of(events.ThoughtEvaluated, seen) if e.retained]
    assert rescored, "with everything salient, earlier thoughts come back"
    for r in retrieved:
        thoughts = [st for st in r.stimuli if st.ref.startswith("thought:")]
        again = [e for e in rescored if e.step == r.step and e.agent == r.agent]
        assert len(again) <= 2
        if len(thoughts) > 2:
            assert len(again) == 2
            top = sorted(thoughts, key=lambda st: -st.saliency)[:2]
            assert {f"thought:{e.evaluation.thought_id}" for e in again} == {st.ref for st in top}
    assert any(
        len([st for st in r.stimuli if st.ref.startswith("thought:")]) > 2 for r in retrieved
    )


async def test_an_agents_own_turns_count_each_message_once(embedder):
    """``own_turns`` (the prompt's "You have spoken X of Y") counts each message once."""
    settings = offline_settings(seed=3)
    room, _, _ = await build(settings, embedder, [])
    ana = await room.add_agent(persona("Ana", FACTS), PRESETS["non-stop-chatter"])
    room.add_human("Zoe")
    for line in LINES[:4]:
        await room.post_human_message("Zoe", line)
        await room.step_once()
    said = sum(1 for m in room.messages if m.speaker == "Ana")
    assert said
    assert ana.turns == said
