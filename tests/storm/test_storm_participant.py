"""Simulated users in the room (offline engine, real MiniLM, real SQLite): turn taking, hidden
states recorded per message, and export/import, fork and replay carrying them."""

from __future__ import annotations

import io
import json

import pytest

from playground import errors, events, factory
from playground.domain.simulated_user import Difficulty, TaskProfile, UserProfile
from playground.history import fork
from playground.history import snapshot as history
from playground.history.recording import Recording
from playground.room import loops
from playground.room import simulated as participant
from playground.room.participants import SimulatedUser
from playground.storage import SessionReader, open_database
from playground.storm.user import simulator_for
from playground.transfer import export, importer
from tests.conftest import offline_settings
from tests.support.rooms import build, library, of, persona

pytestmark = pytest.mark.asyncio


def user_profile(pid: str, name: str, task: str, requirements: list[str]) -> UserProfile:
    return UserProfile(
        id=pid,
        name=name,
        task=TaskProfile(
            category="technology",
            task=task,
            attributes={"budget": "under 600 euros", "brand": "none in mind"},
            requirements=requirements,
            success_criteria=["It works for years"],
        ),
        difficulty=Difficulty(style=3, length=2, content=3, tone=2),
        uncertainty=40,
        unknown=["task.brand"],
    )


MIA = user_profile("mia", "Mia", "Buy a smartphone", ["Long battery life", "A good camera"])
LEO = user_profile("leo", "Leo", "Find a laptop for school", ["Light to carry", "Quiet fan"])


async def _group(embedder, db, *, turns: int = 12, seed: int = 4):
    settings = offline_settings(max_turns=turns, max_silent_steps=6, seed=seed)
    room, engine, seen = await build(settings, embedder, library(1), db=db)
    mind = simulator_for(engine, seed=seed)
    room.add_simulated_user(MIA, mind)
    room.add_simulated_user(LEO, mind, speak_probability=0.5)
    await room.simulated_turn("Mia")
    await loops.run_simulation(room)
    return room, seen


async def test_two_simulated_users_and_an_agent_record_a_hidden_state_per_simulated_message(
    embedder, db
):
    room, _seen = await _group(embedder, db)
    sid = room.session_id
    assert room.status == "finished"
    assert room.step >= 8
    messages = SessionReader(db).load(sid)["messages"]
    states = SessionReader(db).hidden_states(sid)
    simulated = [m["id"] for m in messages if m["speaker_kind"] == "simulated"]
    agents = [m["id"] for m in messages if m["speaker_kind"] == "ai"]
    assert simulated
    assert agents  # both kinds spoke
    assert [h["message_id"] for h in states] == simulated  # one each, none for the agent
    by_user: dict[str, list[int]] = {}
    for h in states:
        by_user.setdefault(h["participant"], []).append(h["turn"])
    assert by_user == {u: list(range(len(t))) for u, t in by_user.items()}  # 0, 1, 2...
    assert all(h["format"] == "offline" and h["origin"] == "offline engine" for h in states)
    assert {m["origin"] for m in messages if m["speaker_kind"] == "simulated"} == {"offline engine"}
    assert all(20 <= len(m["text"]) <= 100 for m in messages if m["speaker_kind"] == "simulated")
    # The profile is snapshotted with the participant.
    rows = {p["name"]: p for p in SessionReader(db).participants(sid)}
    assert rows["Mia"]["kind"] == "simulated"
    assert UserProfile(**rows["Mia"]["profile"]) == MIA
    assert rows["Leo"]["proactivity"] == {"speak_probability": 0.5}
    assert rows[library(1)[0].name]["profile"] is None


async def test_simulated_users_decide_in_the_decision_strip_with_reasons(embedder, db):
    _room, seen = await _group(embedder, db)
    mine = [e.decision for e in of(events.DecisionMade, seen) if e.decision.policy == "simulated"]
    assert {d.agent for d in mine} == {"Mia", "Leo"}
    spoke = [d for d in mine if d.action == "speak"]
    assert any("spoke with probability" in d.reason and "(drew 0." in d.reason for d in spoke)
    assert any("silent (drew" in d.reason for d in mine if d.action == "silent")
    assert all(d.probability in (0.3, 0.5) for d in mine if d.turn_type != "allocated-self")
    # Each simulated message came right before its hidden state.
    kinds = [(type(e).__name__, getattr(e, "message", None)) for e in seen]
    for i, e in enumerate(seen):
        if isinstance(e, events.HiddenStateRecorded):
            before = seen[i - 1]
            assert isinstance(before, events.MessagePosted)
            assert before.message.id == e.message_id
            assert before.message.kind == "simulated"
    assert kinds


async def test_in_a_dyad_every_message_addresses_the_other_and_no_turn_type_is_predicted(
    embedder, db
):
    settings = offline_settings(max_turns=7, seed=2)
    room, engine, seen = await build(settings, embedder, [persona("Bot", ["I help people shop."])], db=db, policy="reactive")  # fmt: skip
    room.add_simulated_user(MIA, simulator_for(engine, seed=2), speak_probability=0.0)
    await room.simulated_turn("Mia")
    await loops.run_simulation(room)
    speakers = [m.speaker for m in room.messages]
    assert speakers == ["Mia", "Bot"] * 3 + ["Mia"]  # each answers the other, always
    turns = of(events.TurnTypePredicted, seen)
    assert turns
    assert all(t.turn_type.origin == "dyad rule" for t in turns)
    assert [t.turn_type.addressee for t in turns] == ["Bot", "Mia"] * 3
    reasons = [
        e.decision.reason for e in of(events.DecisionMade, seen) if e.decision.agent == "Mia"
    ]
    assert reasons
    assert all("addressed by Bot (a dyad" in r for r in reasons)


async def test_an_addressed_simulated_user_wins_the_floor_over_an_open_turn_agent(embedder):
    settings = offline_settings(seed=1)
    room, engine, _ = await build(settings, embedder, library(2), policy="reactive")
    room.add_simulated_user(MIA, simulator_for(engine), speak_probability=0.0)
    ana = room.agents[0].name
    await room.post(ana, "Mia, which phone do you have now?")
    wishes = []
    room.bus.subscribe(lambda e: wishes.append(e) if isinstance(e, events.DecisionMade) else None)
    msg = await room.step_once()
    assert msg is not None
    assert msg.speaker == "Mia"
    assert msg.kind == "simulated"
    mia = next(e.decision for e in wishes if e.decision.agent == "Mia")
    assert mia.turn_type == "allocated-self"
    assert f"addressed by {ana}" in mia.reason


async def test_seating_a_simulated_user_is_checked(embedder):
    room, engine, _ = await build(offline_settings(), embedder, library(1))
    mind = simulator_for(engine)
    room.add_simulated_user(MIA, mind)
    with pytest.raises(errors.PlaygroundError, match="already taken"):
        room.add_simulated_user(MIA, mind)
    with pytest.raises(errors.PlaygroundError, match="not between 0 and 1"):
        room.add_simulated_user(LEO, mind, speak_probability=1.5)
    with pytest.raises(errors.PlaygroundError, match="not a simulated user"):
        await room.simulated_turn(room.agents[0].name)
    room.finish("finished", "done")
    with pytest.raises(errors.SessionEnded):
        room.add_simulated_user(LEO, mind)


async def test_export_import_round_trip_keeps_hidden_states_and_profiles(embedder, db, tmp_path):
    room, _ = await _group(embedder, db, turns=9)
    sid = room.session_id
    path = tmp_path / "out.jsonl"
    out = io.StringIO()
    export.write_records(db, [sid], out, "jsonl")
    path.write_text(out.getvalue(), encoding="utf-8")
    record = json.loads(path.read_text().splitlines()[0])
    assert len(record["hidden_states"]) == len(SessionReader(db).hidden_states(sid)) > 0
    fresh = open_database(tmp_path / "fresh.db")
    try:
        assert importer.import_file(fresh, path) == [(sid, sid)]

        def rows(database):
            r = SessionReader(database)
            return r.hidden_states(sid), [p["profile"] for p in r.participants(sid)]

        assert rows(fresh) == rows(db)
    finally:
        fresh.close()


async def test_a_fork_carries_the_simulated_users_and_their_hidden_states(embedder, db):
    room, _ = await _group(embedder, db, turns=10)
    rec = Recording.load(db, room.session_id)
    fourth = rec.message_seq[4]
    before = [h for h in SessionReader(db).hidden_states(room.session_id) if h["message_id"] <= 4]
    settings = offline_settings(max_turns=14, seed=4)
    engine = await factory.build_engine(settings, embedder=embedder)
    child, _ = await fork.fork(
        settings, engine, recording=rec, seq=fourth, db=db, bus=events.EventBus()
    )
    users = {u.name: u for u in child.simulated_users}
    assert set(users) == {"Mia", "Leo"}
    assert users["Leo"].speak_probability == 0.5
    assert users["Mia"].profile == MIA
    carried = SessionReader(db).hidden_states(child.session_id)
    strip = ("session_id", "recorded_at", "step")
    assert [{k: v for k, v in h.items() if k not in strip} for h in carried] == [
        {k: v for k, v in h.items() if k not in strip} for h in before
    ]
    assert sum(len(u.states) for u in users.values()) == len(before)
    await loops.run_simulation(child)
    after = SessionReader(db).hidden_states(child.session_id)
    assert len(after) == sum(1 for m in child.messages if m.kind == "simulated")


async def test_replay_shows_the_hidden_states_up_to_a_moment(embedder, db):
    room, _ = await _group(embedder, db, turns=8)
    rec = Recording.load(db, room.session_id)
    states = SessionReader(db).hidden_states(room.session_id)
    third = rec.message_seq[3]
    right_after = rec.seqs[rec.seqs.index(third) + 1]
    for seq, upto in ((third, 2), (right_after, 3)):  # the state comes right after its message
        shown = [e.message_id for e in history.state_at(rec, seq).events if e.kind == "hidden_state_recorded"]  # fmt: skip
        assert shown == [h["message_id"] for h in states if h["message_id"] <= upto]
    # The decision history's picture of the trigger that produced a simulated message ends at
    # its hidden state.
    hist = history.SessionHistory(rec)
    produced = [t for t in hist.triggers if t.produced in {h["message_id"] for h in states}]
    assert produced
    for t in produced:
        kinds = dict(zip(rec.seqs, rec.kinds, strict=True))
        assert kinds[t.seq_shown] == "hidden_state_recorded"


async def test_participant_decide_draws_only_when_not_addressed():
    import random

    from playground import domain

    user = SimulatedUser("Mia", MIA, simulator=None, speak_probability=0.3)  # type: ignore[arg-type]  # no model: only the decision to speak is tested
    to_me = domain.TurnType(message_id=3, kind="allocated", addressee="Mia")
    rng = random.Random(0)
    d = participant.decide(user, step=2, trigger="new_message", turn=to_me, speaker="Ana", rng=rng)
    assert (d.action, d.turn_type, d.policy) == ("speak", "allocated-self", "simulated")
    assert rng.random() == random.Random(0).random()  # nothing was drawn
    open_turn = domain.TurnType(message_id=3, kind="open")
    draws = [participant.decide(user, step=2, trigger="pause", turn=open_turn, speaker="", rng=random.Random(i)) for i in range(200)]  # fmt: skip
    share = sum(d.action == "speak" for d in draws) / len(draws)
    assert 0.2 < share < 0.4


async def test_the_turn_limit_counts_every_message_and_its_end_reason_says_so(embedder, db):
    """The cap and the end reason count the same messages, simulated users' included; the reason
    gives the count, not only the limit (messages posted outside the steps can pass it)."""
    settings = offline_settings(max_turns=3, max_silent_steps=6, seed=4)
    room, engine, _ = await build(settings, embedder, library(1), db=db)
    room.add_simulated_user(MIA, simulator_for(engine, seed=4))
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    for _ in range(3):
        await room.simulated_turn("Mia")  # the user speaks up outside the steps
    await loops.run_simulation(room)
    assert len(room.messages) == 4

    def reason(r) -> str:
        sql = "SELECT end_reason FROM sessions WHERE id = ?"
        return db.execute(sql, [r.session_id]).fetchone()[0]

    assert reason(room) == (
        "reached max turns 3: 4 messages (every message counts: the icebreaker, people's"
        " and simulated users' too)"
    )
    group, _ = await _group(embedder, db, turns=8)
    assert reason(group).startswith("reached max turns 8: 8 messages (every message counts")
    assert sum(m.kind == "simulated" for m in group.messages) >= 1


async def test_a_dyad_ends_saying_what_its_turns_count(embedder, db):
    from playground.storm import dyad

    settings = offline_settings(max_turns=4, max_silent_steps=4, seed=2)
    room, engine, _ = await build(settings, embedder, library(1), db=db)
    dyad.seat_user(room, MIA, simulator_for(engine, seed=2))
    await dyad.run_dialogue(room, user="Mia", turns=2)
    reason = db.execute(
        "SELECT end_reason FROM sessions WHERE id = ?", [room.session_id]
    ).fetchone()[0]
    said = sum(m.speaker == "Mia" for m in room.messages)
    replies = len(room.messages) - said
    assert said == 2
    assert reason == (
        f"2 user turns: Mia's 2 messages and {replies} repl{'y' if replies == 1 else 'ies'}"
        " (a turn is one message of the simulated user and the reply to it)"
    )
