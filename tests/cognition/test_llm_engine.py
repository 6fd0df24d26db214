"""End to end: simulations through the real openai client against a loopback OpenAI-compatible server."""

import pytest

from playground import errors, events
from playground.room import loops
from playground.storage import SessionReader
from testbed.llm_server import FakeLLMServer
from testbed.responders import faithful_responder
from tests.conftest import server_settings
from tests.support.rooms import build, library, listener_count, of

pytestmark = pytest.mark.asyncio


async def _simulate(srv, embedder, db, **overrides):
    settings = server_settings(srv, max_turns=6, seed=5, **overrides)
    room, engine, seen = await build(settings, embedder, library(4), db=db)
    try:
        await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    finally:
        await engine.close()
    return room, engine, seen


async def test_simulation_with_logprobs_scores_every_thought_from_the_distribution(
    llm_server, embedder, db
):
    room, engine, seen = await _simulate(llm_server, embedder, db)
    assert room.status == "finished"
    evaluated = of(events.ThoughtEvaluated, seen)
    assert evaluated
    assert all(e.evaluation.method == "logprobs" for e in evaluated)
    assert any(
        max(e.evaluation.distribution.values()) < 1.0 for e in evaluated
    )  # a real distribution, not a point
    data = SessionReader(db).load(room.session_id)
    assert data["session"]["logprobs_supported"] == 1
    assert data["session"]["model"] == "fake-model"
    assert data["session"]["calls"] == engine.client.usage.calls
    assert all(t["method"] == "logprobs" for t in data["thoughts"] if t["score"] is not None)
    assert all(
        m["interpretation"] and m["turn_type"] in ("open", "allocated")
        for m in data["messages"][:-1]
    )
    # Every structured request carried a JSON schema; rating requests asked for top-5 logprobs.
    chats = [
        r
        for r in llm_server.requests
        if r["_path"].endswith("/chat/completions") and r.get("max_tokens") != 1
    ]
    structured = [r for r in chats if "response_format" in r]
    assert structured
    assert all(r["response_format"]["type"] == "json_schema" for r in structured)
    assert any(r.get("top_logprobs") == 20 for r in structured)  # the final rating calls


async def test_batched_mode_makes_2_plus_3L_calls_per_message_plus_the_speaker(
    llm_server, embedder, db
):
    # One evaluation per listed thought, as a real model answers.
    llm_server.set_responder(faithful_responder)
    room, engine, seen = await _simulate(llm_server, embedder, db, evaluation_mode="batched")
    counts = engine.client.counts.by_label
    understood = len(of(events.MessageInterpreted, seen))
    listeners = listener_count(seen)
    assert counts["interpretation"] == counts["turn type"] == understood
    # Each listener: its System-1 thoughts, its System-2 thoughts, one evaluation for all.
    assert counts["System-1 thoughts"] == counts["System-2 thoughts"] == listeners
    assert counts["evaluation"] == listeners
    assert counts["articulation"] == len(room.messages) - 1  # every message but the icebreaker
    assert llm_server.embedding_calls == 0  # local embeddings: no remote embedding requests


async def test_per_thought_mode_is_the_default_and_matches_the_papers_call_pattern(
    llm_server, embedder, db
):
    room, engine, seen = await _simulate(llm_server, embedder, db)  # no mode given
    assert engine.cognition.mode == "per-thought"
    counts = engine.client.counts.by_label
    evaluated = len(of(events.ThoughtEvaluated, seen))
    listeners = listener_count(seen)
    assert counts["System-1 thoughts"] == counts["System-2 thoughts"] == listeners
    assert counts["evaluation"] == evaluated > listeners  # one call per thought, not one per agent
    config = SessionReader(db).load(room.session_id)["session"]["config"]
    assert config["engine"]["evaluation_mode"] == "per-thought"  # the record says which ran


def _user_prompt(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


async def test_system1_thoughts_come_from_the_conversation_alone_and_schemas_state_lengths(
    llm_server, embedder, db
):
    """System-1 thoughts are formed in their own request, without retrieved memories or earlier
    thoughts; System-2 thoughts get them. Every schema whose array length is known says it."""
    llm_server.set_responder(faithful_responder)
    await _simulate(llm_server, embedder, db, saliency_threshold=0.0)  # everything is salient
    chats = [r for r in llm_server.requests if r["_path"].endswith("/chat/completions")]

    def forming(system: int) -> list[dict]:
        return [r for r in chats if f"System-{system} thought(s):" in _user_prompt(r)]

    quick, deliberate = forming(1), forming(2)
    assert quick
    assert deliberate
    assert not set(map(id, quick)) & set(map(id, deliberate))
    for r in quick:
        block = _user_prompt(r).split("What comes to mind")[1]
        assert "[memory:" not in block
        assert "[thought:" not in block
    assert any("[memory:" in _user_prompt(r).split("What comes to mind")[1] for r in deliberate)
    for requests, n in ((quick, 1), (deliberate, 2)):  # the default counts per trigger
        for r in requests:
            thoughts = r["response_format"]["json_schema"]["schema"]["properties"]["thoughts"]
            assert thoughts["minItems"] == thoughts["maxItems"] == n
    evaluations = [
        r
        for r in chats
        if "response_format" in r
        and "reasons_for" in r["response_format"]["json_schema"]["schema"].get("properties", {})
    ]
    assert evaluations
    for r in evaluations:
        schema = r["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["reasons_for"]["minItems"] == 2
        assert schema["properties"]["reasons_against"]["maxItems"] == 2
        assert "logprobs" not in r  # the reasons are not scored: only the final rating call is
    finals = [r for r in chats if r.get("top_logprobs") == 20]
    assert finals
    assert all(
        set(r["response_format"]["json_schema"]["schema"]["properties"]) == {"rating"}
        for r in finals
    )


async def test_inline_rating_call_scores_the_whole_evaluation_answer(embedder, db):
    with FakeLLMServer() as srv:
        _room, _, seen = await _simulate(srv, embedder, db, rating_call="inline")
        chats = [r for r in srv.requests if r["_path"].endswith("/chat/completions")]
    evaluated = of(events.ThoughtEvaluated, seen)
    assert evaluated
    assert all(e.evaluation.method == "logprobs" for e in evaluated)
    rated = [r for r in chats if r.get("top_logprobs") == 5 and r.get("max_tokens") != 1]
    assert rated
    assert all(
        "reasons_for" in r["response_format"]["json_schema"]["schema"]["properties"] for r in rated
    )


async def test_server_without_logprobs_samples_the_rating_by_default(embedder, db):
    with FakeLLMServer(logprobs=False) as srv:
        room, _, seen = await _simulate(srv, embedder, db, rating_samples=5)
    evaluated = of(events.ThoughtEvaluated, seen)
    assert evaluated
    assert all(e.evaluation.method == "sampled" for e in evaluated)
    assert all(e.evaluation.samples and 1 <= e.evaluation.samples <= 5 for e in evaluated)
    for e in evaluated:  # an empirical distribution over the samples that were read
        assert abs(sum(e.evaluation.distribution.values()) - 1) < 1e-6
        assert all(
            round(p * e.evaluation.samples, 6).is_integer()
            for p in e.evaluation.distribution.values()
        )
    data = SessionReader(db).load(room.session_id)
    assert {ev["samples"] for t in data["thoughts"] for ev in t["evaluations"]} <= set(range(1, 6))


async def test_parsed_rating_method_makes_no_rating_call(embedder, db):
    with FakeLLMServer(logprobs=False, response_format_mode="ignore") as srv:
        room, _, seen = await _simulate(srv, embedder, db, rating_method="parsed")
    evaluated = of(events.ThoughtEvaluated, seen)
    assert evaluated
    assert all(e.evaluation.method == "parsed" for e in evaluated)
    assert all(max(e.evaluation.distribution.values()) == 1.0 for e in evaluated)
    assert SessionReader(db).load(room.session_id)["session"]["logprobs_supported"] == 0


async def test_server_failure_mid_run_fails_the_session_but_keeps_what_was_saved(
    llm_server, embedder, db
):
    settings = server_settings(llm_server, max_turns=10, seed=5, max_retries=1)
    room, engine, seen = await build(settings, embedder, library(3), db=db)
    llm_server.fail_next(500, count=1000)
    with pytest.raises(errors.LLMServerError):
        await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    await engine.close()
    data = SessionReader(db).load(room.session_id)
    assert data["session"]["status"] == "failed"
    assert "500" in data["session"]["end_reason"]
    assert [m["text"] for m in data["messages"]] == ["What did you do last weekend?"]
    assert of(events.ErrorOccurred, seen)


async def test_api_key_never_reaches_the_database_or_logs(embedder, db, db_path, caplog):
    secret = "sk-test-DO-NOT-STORE-4242"
    with FakeLLMServer(api_key=secret) as srv:
        caplog.set_level("DEBUG")
        settings = server_settings(srv, api_key=secret, max_turns=4)
        room, engine, _ = await build(settings, embedder, library(2), db=db)
        await loops.run_simulation(room, icebreaker="Hey!")
        await engine.close()
        base_url = srv.base_url
    db.conn.commit()
    blob = b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
    assert secret.encode() not in blob
    assert secret not in caplog.text
    config = SessionReader(db).load(room.session_id)["session"]["config"]
    assert "api_key" not in config["llm"]
    assert config["llm"]["base_url"] == base_url


async def test_thoughts_a_model_skipped_are_asked_for_once_more(llm_server, embedder, db):
    # The generic server answers every batch with two evaluations, however many thoughts were listed.
    _room, engine, seen = await _simulate(llm_server, embedder, db)
    counts = engine.client.counts.by_label
    listeners = listener_count(seen)
    assert counts["evaluation"] > listeners  # follow-up calls for the skipped thoughts
    assert not of(events.ErrorOccurred, seen)
    formed = {e.thought.id for e in of(events.ThoughtFormed, seen)}
    assert formed <= {e.evaluation.thought_id for e in of(events.ThoughtEvaluated, seen)}


async def test_an_unknown_evaluation_mode_is_refused_when_the_mind_is_made(llm_server):
    """A typo must not quietly select the batched evaluation."""
    from playground import factory
    from playground.cognition.llm import LLMCognition

    client = factory.make_chat_client(server_settings(llm_server))
    try:
        with pytest.raises(errors.SettingsError, match="'per_thought' is not one of"):
            LLMCognition(client, evaluation_mode="per_thought")  # type: ignore[arg-type]  # misspelt, on purpose
        assert LLMCognition(client, evaluation_mode="batched").mode == "batched"
    finally:
        await client.close()
