"""Turn-taking between agents through the real openai client and the loopback server.

Ratings are scripted per agent (tests/support/turns.py) and parsed (the server sends no
logprobs), so each score is rating × 1.02^(t − τp) and the thresholds of the paper's simulation
preset (imThreshold 3.95, interruptThreshold 4.8) decide who speaks.
"""

from __future__ import annotations

import pytest

from playground import domain, events
from playground.cognition.base import Articulation, Context
from playground.storage import SessionReader
from testbed.llm_server import FakeLLMServer
from tests.conftest import server_settings
from tests.support.rooms import build, library, of
from tests.support.turns import scripted

pytestmark = pytest.mark.asyncio


@pytest.fixture
def server():
    with FakeLLMServer(logprobs=False) as srv:
        yield srv


async def _room(srv, embedder, db, ratings, humans=("Zoe",)):
    srv.set_responder(scripted(ratings))
    settings = server_settings(srv, seed=3)
    room, engine, seen = await build(settings, embedder, library(3), db=db)  # Ana, Ben, Chloe
    for h in humans:
        room.add_human(h)
    return room, engine, seen


def _decisions(seen, step):
    return {e.decision.agent: e.decision for e in of(events.DecisionMade, seen) if e.step == step}


async def test_an_agent_above_interrupt_threshold_takes_the_floor_and_the_addressee_answers_next(
    server, embedder, db
):
    room, engine, seen = await _room(server, embedder, db, {"Ben": 2, "Chloe": 5, "Ana": 1})
    await room.post_human_message("Zoe", "Ben, what did you do last weekend?")

    interruption = await room.step_once()
    assert interruption is not None
    assert interruption.speaker == "Chloe"  # 5 × 1.02 ≥ 4.8
    assert interruption.interruption
    step1 = _decisions(seen, 1)
    assert step1["Chloe"].action == "speak"
    assert step1["Chloe"].turn_type == "allocated-other"
    assert "takes the floor from Ben" in step1["Chloe"].reason
    assert step1["Ben"].action == "silent"
    assert step1["Ben"].turn_type == "allocated-self"
    assert "lost the floor to Chloe, who interrupted (5.10 ≥ interruptThreshold 4.8)" in (
        step1["Ben"].reason
    )

    # Chloe's message hands the turn to nobody: Ben's allocation is still pending.
    answer = await room.step_once()
    assert answer is not None
    assert answer.speaker == "Ben"
    assert not answer.interruption
    assert _decisions(seen, 2)["Ben"].turn_type == "allocated-self"
    await engine.close()

    data = SessionReader(db).load(room.session_id)
    assert [(m["speaker"], m["interruption"]) for m in data["messages"]] == [
        ("Zoe", 0),
        ("Chloe", 1),
        ("Ben", 0),
    ]
    lost = next(d for d in data["decisions"] if d["agent"] == "Ben" and d["step"] == 1)
    assert "lost the floor to Chloe" in lost["reason"]


async def test_an_agent_below_interrupt_threshold_leaves_the_turn_to_the_addressee(
    server, embedder, db
):
    room, engine, seen = await _room(server, embedder, db, {"Ben": 2, "Chloe": 4, "Ana": 1})
    await room.post_human_message("Zoe", "Ben, what did you do last weekend?")
    answer = await room.step_once()
    await engine.close()
    assert answer is not None
    assert answer.speaker == "Ben"
    assert not answer.interruption
    step1 = _decisions(seen, 1)
    assert step1["Chloe"].action == "silent"
    assert "4.08 < interruptThreshold 4.8" in step1["Chloe"].reason
    data = SessionReader(db).load(room.session_id)
    assert [m["interruption"] for m in data["messages"]] == [0, 0]


async def test_after_silence_the_floor_opens_whoever_was_addressed(server, embedder, db):
    # Zoe asks Max, who never answers. Nobody is keen enough to interrupt (3 × 1.02 < 4.8); on
    # an open turn they would speak (3 × 1.02² ≥ imThreshold 3.0).
    room, engine, seen = await _room(
        server, embedder, db, {"Ana": 3, "Ben": 3, "Chloe": 3}, humans=("Zoe", "Max")
    )
    for a in room.agents:
        room.set_proactivity(a.name, a.proactivity.model_copy(update={"im_threshold": 3.0}))
    await room.post_human_message("Zoe", "Max, what did you do last weekend?")
    assert await room.step_once() is None  # the turn is Max's
    assert {d.turn_type for d in _decisions(seen, 1).values()} == {"allocated-other"}
    reply = await room.step_once()  # a pause: the floor is open to anyone
    await engine.close()
    assert of(events.TriggerFired, seen)[-1].trigger == "pause"
    assert {d.turn_type for d in _decisions(seen, 2).values()} == {"open"}
    assert reply is not None
    assert reply.kind == "ai"
    assert not reply.interruption


async def test_proactive_tone_restyles_the_wording_only(server, embedder):
    server.set_responder(scripted({}))
    room, engine, _ = await build(server_settings(server), embedder, library(2))
    agent = room.agents[0]
    ctx = Context(
        agent=agent.name,
        persona=agent.persona,
        participants=[a.name for a in room.agents],
        recent=[],
        latest=None,
        trigger="pause",
        step=1,
    )
    thought = domain.Thought(
        id=1, agent=agent.name, text="I fixed a bike", system=2, created_step=1, last_access=1
    )
    for tone in (False, True):
        await engine.cognition.articulate(ctx, Articulation(thought, proactive_tone=tone))
    await engine.close()
    asked = [r["messages"] for r in server.requests if "Write your next chat" in str(r.get("messages"))]  # fmt: skip
    assert len(asked) == 2
    assert asked[0][-1] == asked[1][-1]  # the same conversation and thought
    # The tone is a standing instruction: it is in the system message, before the conversation.
    plain, assertive = (messages[0]["content"] for messages in asked)
    head, mark, tail = plain.partition("as a text chat message.")
    assert mark
    head += mark
    assert assertive.startswith(head)
    assert assertive.endswith(tail)
    tone = assertive[len(head) : len(assertive) - len(tail)]
    assert "assertive" in tone
    assert "name" not in tone
    assert "invite" not in tone  # whom to address is not the tone's business
