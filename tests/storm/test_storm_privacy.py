"""A simulated user's hidden state and profile never reach another participant's prompt: checked
on every request the real openai client sent to the loopback server."""

from __future__ import annotations

import json

import pytest

from playground import events
from playground.domain.simulated_user import TaskProfile, UserProfile
from playground.room import loops
from playground.storage import SessionReader
from playground.storm.user import simulator_for
from tests.conftest import server_settings
from tests.support.rooms import build, library, of

pytestmark = pytest.mark.asyncio

MARK = "ZQX-PRIVATE-7731"
SECRET_BRAND = "Brandolino-9000"
SECRET_AGE = "age-bracket-xyz"


def _user_request(body: dict) -> bool:
    fmt = body.get("response_format") or {}
    named = fmt.get("json_schema", {}).get("name") == "UserAnswerOut"
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    return named or "You are Mia, a person" in prompt


def responder(body: dict) -> str | None:
    if not _user_request(body):
        return None  # the server's generic answers for the agents and the predictor
    n = sum(1 for m in body["messages"] if m["role"] == "user")
    return json.dumps(
        {
            "message": f"I still want a phone with a long battery, answer {n}.",
            "inner_thoughts": f"They will never learn {MARK} inner",
            "satisfaction": {"score": 0.4, "explanation": f"{MARK} satisfaction"},
            "clarity": {"score": 0.5, "explanation": f"{MARK} clarity"},
            "emotion": "wary",
            "intent": "testing",
        }
    )


async def test_hidden_state_and_unknown_profile_values_reach_no_other_prompt(
    llm_server, embedder, db
):
    llm_server.set_responder(responder)
    settings = server_settings(llm_server, max_turns=9, max_silent_steps=4, seed=3)
    people = library(2)
    policies = {people[0].name: "inner-thoughts", people[1].name: "next-speaker"}
    room, engine, seen = await build(settings, embedder, people, db=db, policies=policies)
    profile = UserProfile(
        id="mia",
        name="Mia",
        base={"age_group": SECRET_AGE, "tech_experience": "some"},
        task=TaskProfile(
            category="technology",
            task="Buy a smartphone",
            attributes={"brand": SECRET_BRAND, "budget": "under 500"},
            requirements=["Long battery life"],
        ),
        uncertainty=40,
        unknown=["task.brand", "base.age_group"],
    )
    room.add_simulated_user(profile, simulator_for(engine), speak_probability=0.6)
    try:
        await room.simulated_turn("Mia")
        await loops.run_simulation(room)
    finally:
        await engine.close()

    said = [m for m in room.messages if m.speaker == "Mia"]
    others = [m for m in room.messages if m.speaker != "Mia"]
    assert len(said) >= 2
    assert others  # the user spoke again after hearing the others
    chats = [r for r in llm_server.requests if r["_path"].endswith("/chat/completions")]
    mine = [r for r in chats if _user_request(r)]
    theirs = [r for r in chats if not _user_request(r) and r.get("max_tokens") != 1]
    assert len(mine) == len(said)
    assert theirs
    # The marker is in the user's own later requests (its earlier states), so this can fail ...
    assert all(MARK in json.dumps(r) for r in mine[1:])
    # ... and in no request made for anyone else: interpretation, turn type, thoughts,
    # evaluations, articulation, the next-speaker prediction and the baseline's reply.
    leaked = [r for r in theirs if MARK in json.dumps(r)]
    assert leaked == []
    kinds = {(r.get("response_format") or {}).get("json_schema", {}).get("name", "text") for r in theirs}  # fmt: skip
    assert {"ThoughtsOut", "TurnTypeOut"} <= kinds  # the agents really were asked things
    # The unknown share of the profile is shown to nobody, the user itself included.
    assert not any(SECRET_BRAND in json.dumps(r) or SECRET_AGE in json.dumps(r) for r in chats)
    # The researcher still has it all.
    states = SessionReader(db).hidden_states(room.session_id)
    assert len(states) == len(said)
    assert all(MARK in h["inner_thoughts"] for h in states)
    assert {e.participant for e in of(events.HiddenStateRecorded, seen)} == {"Mia"}
