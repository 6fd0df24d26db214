"""The baselines in real rooms: reactive agents answer only when addressed; the next-speaker rule
(named agent, ``anyone``, a human or the last speaker predicted); mixed rooms; and the LLM path
through the real openai client against the loopback server."""

from __future__ import annotations

import io
import json
import random
from collections import Counter

import pytest

from playground import domain, events
from playground.cli import main as cli
from playground.room import floor
from playground.storage import open_database
from tests.conftest import offline_settings
from tests.support.rooms import build, library


def prediction(label: str, names: list[str], message_id: int = 1) -> domain.NextSpeakerPrediction:
    probs = {n: 0.1 for n in [*names, domain.ANYONE]}
    probs[label] = 1 - 0.1 * (len(probs) - 1)
    return domain.NextSpeakerPrediction(
        message_id=message_id, predicted=label, probabilities=probs, method="parsed"
    )


@pytest.mark.asyncio
async def test_reactive_agents_answer_only_when_addressed(embedder, db):
    people = library(3)  # Ana, Ben, Chloe
    room, _, seen = await build(offline_settings(), embedder, people, db=db, policy="reactive")
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "Ben, what did you do last weekend?")
    msg = await room.step_once()
    assert msg is not None
    assert msg.speaker == "Ben"
    assert msg.thought_id is None
    decisions = [e.decision for e in seen if isinstance(e, events.DecisionMade)]
    assert {d.agent: d.action for d in decisions} == {
        "Ana": "silent",
        "Ben": "speak",
        "Chloe": "silent",
    }
    assert all(d.policy == "reactive" and d.score is None for d in decisions)
    assert "addressed by name by Zoe" in next(d.reason for d in decisions if d.agent == "Ben")
    # An open message and the pauses after it: nobody speaks.
    await room.post_human_message("Zoe", "What is everyone eating today?")
    for silent in range(3):
        assert await room.step_once(silent_steps=silent) is None
    assert [m.speaker for m in room.messages] == ["Zoe", "Ben", "Zoe"]
    assert not [e for e in seen if isinstance(e, (events.ThoughtFormed, events.MemoriesRetrieved))]
    # Stored: every speaking decision of a reactive agent was on a turn allocated to it.
    rows = db.execute(
        "SELECT agent, turn_type, policy FROM decisions WHERE action = 'speak'"
    ).fetchall()
    assert rows == [("Ben", "allocated-self", "reactive")]


@pytest.mark.asyncio
async def test_the_next_speaker_rule(embedder):
    people = library(4)  # Ana, Ben, Chloe, Dev
    names = [p.name for p in people]
    room, _, _ = await build(
        offline_settings(),
        embedder,
        people,
        policies={
            "Ana": "next-speaker",
            "Ben": "next-speaker",
            "Chloe": "next-speaker",
            "Dev": "inner-thoughts",
        },
    )
    room.add_human("Zoe")
    latest = await room.post("Ana", "Hello all")
    everyone = [*names, "Zoe"]
    # A named next-speaker agent takes the turn.
    chosen, p, rule = room._next_speaker_turn("new_message", latest, prediction("Ben", everyone))
    assert chosen == "Ben"
    assert p == pytest.approx(0.5)
    assert "Ben takes the turn" in rule
    # A human or an Inner Thoughts agent predicted: the next-speaker agents wait for them.
    for other in ("Zoe", "Dev"):
        chosen, _, rule = room._next_speaker_turn(
            "new_message", latest, prediction(other, everyone)
        )
        assert chosen is None
        assert f"they wait for {other}" in rule
    # "anyone", or the agent who just spoke: uniform among the next-speaker agents who did not
    # just speak (never the last speaker, never an Inner Thoughts agent).
    for label in (domain.ANYONE, "Ana"):
        picks: Counter[str] = Counter()
        for step in range(600):
            room.step = step
            chosen, _, rule = room._next_speaker_turn(
                "new_message", latest, prediction(label, everyone)
            )
            picks[chosen or ""] += 1
        assert set(picks) == {"Ben", "Chloe"}
        assert 240 <= picks["Ben"] <= 360, picks  # uniform: 300 ± 5 standard deviations
    assert "drawn uniformly among Ben, Chloe" in rule
    # After a pause the floor opens the same way.
    chosen, _, rule = room._next_speaker_turn("pause", latest, None)
    assert chosen in {"Ben", "Chloe"}
    assert "after a pause" in rule


@pytest.mark.asyncio
async def test_a_next_speaker_room_records_predictions_and_the_chosen_agent_answers(embedder, db):
    people = library(3)
    room, _, seen = await build(offline_settings(), embedder, people, db=db, policy="next-speaker")
    await room.post("Ana", "What did you do last weekend?", origin="icebreaker")
    for _ in range(4):
        msg = await room.step_once()
        assert msg is not None  # a next-speaker room always has someone to answer
        pred = [e for e in seen if isinstance(e, events.NextSpeakerPredicted)][-1]
        assert pred.chosen == msg.speaker
        assert pred.prediction.message_id == msg.id - 1
        assert msg.speaker != room.messages[-2].speaker
    rows = db.execute(
        "SELECT message_id, predicted, chosen, method, probabilities FROM predictions"
    ).fetchall()
    assert len(rows) == 4
    assert {r[3] for r in rows} == {"offline-heuristic"}
    assert all(abs(sum(json.loads(r[4]).values()) - 1) < 1e-4 for r in rows)
    assert db.execute("SELECT DISTINCT condition FROM sessions").fetchall() == [("next-speaker",)]
    # No thoughts, no retrieval, no interpretation: the baseline answers from its persona.
    kinds = {e.kind for e in seen}
    assert not kinds & {"thought_formed", "memories_retrieved", "message_interpreted"}


@pytest.mark.asyncio
async def test_a_mixed_room(embedder, db):
    people = library(4)
    policies = {
        "Ana": "inner-thoughts",
        "Ben": "next-speaker",
        "Chloe": "next-speaker",
        "Dev": "reactive",
    }
    room, _, seen = await build(offline_settings(), embedder, people, db=db, policies=policies)
    assert db.execute("SELECT condition FROM sessions").fetchone()[0] == "mixed"
    assert dict(db.execute("SELECT name, policy FROM participants").fetchall()) == policies
    await room.post("Dev", "Hey! What did you all do last weekend?", origin="icebreaker")
    for _ in range(5):
        await room.step_once(silent_steps=0)
    by_policy = {
        d.decision.agent: d.decision.policy for d in seen if isinstance(d, events.DecisionMade)
    }
    assert by_policy == policies
    # Ana thinks; the others do not.
    assert {e.thought.agent for e in seen if isinstance(e, events.ThoughtFormed)} == {"Ana"}
    room.set_policy("Ana", "next-speaker")
    assert (
        db.execute("SELECT policy FROM participants WHERE name = 'Ana'").fetchone()[0]
        == "next-speaker"
    )
    with pytest.raises(Exception, match="unknown turn-taking policy"):
        room.set_policy("Ana", "telepathy")


def _d(agent: str, policy: str, turn_type: str, score: float | None) -> domain.Decision:
    return domain.Decision(
        agent=agent, step=1, trigger="new_message", action="speak", policy=policy,
        turn_type=turn_type, score=score, reason="",
    )  # fmt: skip


def test_arbitration_between_policies():
    rng = random.Random(0)
    it_open = _d("Ana", "inner-thoughts", "open", 4.2)
    ns_pick = _d("Ben", "next-speaker", "open", None)
    it_interrupt = _d("Cy", "inner-thoughts", "allocated-other", 4.9)
    reactive_addressee = _d("Dev", "reactive", "allocated-self", None)
    assert floor.arbitrate([it_open, ns_pick], rng) is ns_pick
    assert floor.arbitrate([it_open, ns_pick], rng, prediction_first=False) is it_open
    assert floor.arbitrate([ns_pick, reactive_addressee], rng) is reactive_addressee
    assert floor.arbitrate([ns_pick, reactive_addressee, it_interrupt], rng) is it_interrupt
    lost = floor.outcome(it_open, ns_pick, None)
    assert lost.action == "silent"
    assert "whom the next-speaker predictor picked" in lost.reason


def test_an_experiment_through_the_openai_client_against_the_loopback_server(llm_server, tmp_path):
    db = tmp_path / "x.db"
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["experiment", "--engine", "openai", "--base-url", llm_server.base_url, "--api-key", "k",
         "--model", "fake-model", "--conditions", "inner-thoughts,next-speaker,reactive",
         "--conversations", "1", "--agents", "3", "--turns", "4", "--db", str(db),
         "--concurrency", "3", "--no-progress"],
        out=out, err=err,
    )  # fmt: skip
    assert code == 0, err.getvalue()
    d = open_database(db)
    rows = d.execute(
        "SELECT condition, status, calls, prompt_tokens FROM sessions ORDER BY condition"
    ).fetchall()
    assert [r[:2] for r in rows] == [
        ("inner-thoughts", "finished"),
        ("next-speaker", "finished"),
        ("reactive", "finished"),
    ]
    # Each conversation counted its own calls on the shared client; together they are every
    # chat call the server answered, except the one probe made when the engine was built.
    chats = [r for r in llm_server.requests if r["_path"].endswith("/chat/completions")]
    assert sum(r[2] for r in rows) == len(chats) - 1
    assert all(r[2] > 0 for r in rows)
    preds = d.execute("SELECT method, origin FROM predictions").fetchall()
    assert preds
    assert {p[0] for p in preds} <= {"logprobs", "parsed"}
    assert {p[1] for p in preds} == {"fake-model"}
    # The predictor read only the last 5 messages and the names.
    asked = [r for r in chats if "next" in json.dumps(r.get("response_format", "")).lower()]
    assert asked
    d.close()


@pytest.mark.asyncio
async def test_a_fork_keeps_each_agents_policy_as_it_stood(embedder, db):
    from playground.history import fork
    from playground.history.recording import Recording

    people = library(3)
    policies = {"Ana": "next-speaker", "Ben": "inner-thoughts", "Chloe": "reactive"}
    room, engine, _ = await build(offline_settings(), embedder, people, db=db, policies=policies)
    await room.post("Ana", "What did you do last weekend?", origin="icebreaker")
    await room.step_once()
    rec = Recording.load(db, room.session_id)
    at = rec.moments[-1].seq
    room.set_policy("Ben", "next-speaker")  # after the fork moment: not carried over
    room.finish("interrupted", "stopped")
    rec = Recording.load(db, room.session_id)
    assert fork.state_at(rec, at).policies == policies
    child, _ = await fork.fork(
        offline_settings(), engine, recording=rec, seq=at, db=db, bus=events.EventBus()
    )
    assert {a.name: a.policy for a in child.agents} == policies
    assert (
        db.execute("SELECT condition FROM sessions WHERE id = ?", [child.session_id]).fetchone()[0]
        == "mixed"
    )
    assert domain.condition_of(["reactive", "reactive"]) == "reactive"
