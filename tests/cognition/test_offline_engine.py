"""The offline engine: real embeddings, deterministic by seed, every output labelled offline."""

import pytest

from playground import events
from playground.embedding.cache import CachingEmbedder
from playground.room import loops
from tests.conftest import offline_settings
from tests.support.rooms import build, library, of

pytestmark = pytest.mark.asyncio


async def _run(minilm, seed: int):
    settings = offline_settings(seed=seed, max_turns=10)
    room, _, seen = await build(settings, CachingEmbedder(minilm), library(4))
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    transcript = [(m.speaker, m.text) for m in room.messages]
    scores = [
        (e.evaluation.thought_id, e.evaluation.score) for e in of(events.ThoughtEvaluated, seen)
    ]
    thoughts = [
        (e.thought.agent, e.thought.text, tuple(e.thought.stimuli))
        for e in of(events.ThoughtFormed, seen)
    ]
    return transcript, scores, thoughts, seen


async def test_same_seed_gives_identical_conversation_thoughts_and_scores(minilm):
    a = await _run(minilm, 7)
    b = await _run(minilm, 7)
    assert a[0] == b[0]
    assert a[1] == b[1]
    assert a[2] == b[2]
    assert len(a[0]) == 10


async def test_different_seed_gives_a_different_conversation(minilm):
    a = await _run(minilm, 7)
    c = await _run(minilm, 8)
    assert a[0] != c[0]


async def test_every_output_says_it_came_from_the_offline_engine(minilm):
    _, _, _, seen = await _run(minilm, 1)
    started = of(events.SessionStarted, seen)[0]
    assert started.engine == "offline engine"
    agent_msgs = [
        e.message for e in of(events.MessagePosted, seen) if e.message.thought_id is not None
    ]
    assert agent_msgs
    assert all(m.origin == "offline engine" for m in agent_msgs)
    assert all(e.thought.origin == "offline engine" for e in of(events.ThoughtFormed, seen))
    assert all(
        e.interpretation.origin == "offline engine" for e in of(events.MessageInterpreted, seen)
    )
    assert all(
        e.evaluation.method == "offline-heuristic" for e in of(events.ThoughtEvaluated, seen)
    )


async def test_thoughts_are_short_traceable_and_rated_on_all_eight_heuristics(minilm):
    _, _, _, seen = await _run(minilm, 2)
    for e in of(events.ThoughtFormed, seen):
        assert len(e.thought.text.split()) < 15
        assert e.thought.stimuli, e.thought
    for e in of(events.ThoughtEvaluated, seen):
        ev = e.evaluation
        assert set(ev.heuristics) == {
            "relevance",
            "information_gap",
            "expected_impact",
            "urgency",
            "coherence",
            "originality",
            "balance",
            "dynamics",
        }
        assert len(ev.reasons_for) == 2
        assert len(ev.reasons_against) == 2
        assert sum(ev.distribution.values()) == pytest.approx(1.0, abs=1e-4)
        assert ev.score == pytest.approx(ev.expected * ev.silence_factor, abs=1e-3)


async def test_a_question_to_a_named_participant_is_allocated_to_them(minilm):
    settings = offline_settings(seed=1, max_turns=2)
    room, _, seen = await build(settings, CachingEmbedder(minilm), library(3))
    human = "Zoe"
    room.add_human(human)
    names = [a.name for a in room.agents]
    await room.post_human_message(human, f"{names[1]}, what did you cook last night?")
    msg = await room.step_once()
    turn = of(events.TurnTypePredicted, seen)[-1].turn_type
    assert (turn.kind, turn.addressee) == ("allocated", names[1])
    assert msg is not None
    assert msg.speaker == names[1]  # allocated agent always takes its turn
