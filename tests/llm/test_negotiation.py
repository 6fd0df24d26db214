"""Capability negotiation against servers that refuse what real servers refuse, with their bodies.

The stand-ins (testbed/llm_server.py profiles) answer as the GPT-5.x models are documented
to (400 for max_tokens, a temperature other than 1, logprobs), as a JSON-mode-only provider does,
as llama-cpp-python does (500 for a json_schema response format) and as a server that refuses
numeric and length keywords in a schema. Every LLM path must complete on each, learning each
capability once: after the first rejection of a kind, no request repeats it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import BaseModel, Field

from playground import errors
from playground.cognition import utterance
from playground.llm import capabilities
from playground.llm.client import ChatClient, ChatResult
from playground.settings import LLMSettings, parse_pins
from testbed.llm_server import FakeLLMServer, server_bodies
from tests.support.cli import openai_flags, run_cli

pytestmark = pytest.mark.timeout(300)
MSGS = [{"role": "user", "content": "Rate how much you want to talk about sailing boats."}]


class Rated(BaseModel):
    reasons_for: list[str]
    reasons_against: list[str]
    rating: int = Field(ge=1, le=5)


def client_for(srv: FakeLLMServer, **kw: object) -> ChatClient:
    settings = LLMSettings(
        base_url=srv.base_url, api_key="k", model="fake-model", retry_base_delay=0.0, **kw
    )
    raw = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
    return ChatClient(raw, settings, seed=7)


def chats(srv: FakeLLMServer) -> list[dict]:
    return [r for r in srv.requests if r["_path"].endswith("/chat/completions")]


#: What each refusal of the stand-ins is about (their reference case keys).
REFUSED = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "logprobs": "logprobs",
    "json_schema": "json_schema",
    "schema_keyword": "json_schema",
    "stop": "stop",
}


def repeated_after_rejection(srv: FakeLLMServer) -> list[str]:
    """Capabilities a request carried after the server had refused that capability once (at
    most one request in flight at the moment of the refusal excepted: the client starts at 2
    calls in flight for a server on this machine)."""
    carries = {
        "max_tokens": lambda r: "max_tokens" in r,
        "temperature": lambda r: r.get("temperature") not in (None, 1),
        "logprobs": lambda r: bool(r.get("logprobs")) or "top_logprobs" in r,
        "json_schema": lambda r: (r.get("response_format") or {}).get("type") == "json_schema",
        "stop": lambda r: "stop" in r,
    }
    sent = chats(srv)
    bad = []
    for name, carried in carries.items():
        refused = [
            i
            for i, r in enumerate(sent)
            if any(k in r.get("_refused", "") and v == name for k, v in REFUSED.items())
        ]
        if refused and sum(1 for r in sent[refused[0] + 1 :] if carried(r)) > 1:
            bad.append(name)
    return bad


@pytest.fixture(autouse=True)
def _fresh_profiles():
    """Each test meets its servers anew (profiles are shared per server in one process)."""
    from playground.llm import transport

    transport._PROFILES.clear()
    yield
    transport._PROFILES.clear()


# -- the client ------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_gpt5_rejections_are_learned_once_and_never_repeated():
    with FakeLLMServer(profile="gpt5") as srv:
        c = client_for(srv)
        assert await c.probe() is False  # logprobs refused
        res = await c.chat_json("evaluation", MSGS, Rated, logprobs=True)
        text = await c.chat_text("articulation", MSGS)
        await c.close()
        assert isinstance(res.parsed, Rated)
        assert text.text
        kinds = [k for _, k in srv.rejections]
        # One refusal of each kind, all during the probe; the later calls carried none of them.
        assert sorted(kinds) == sorted(set(kinds))
        assert {"openai_max_tokens_unsupported", "openai_logprobs_unsupported"} <= set(kinds)
        assert any("temperature" in k for k in kinds)
        after_probe = chats(srv)[len(srv.rejections) + 1 :]
        assert after_probe
        for r in after_probe:
            assert "max_tokens" not in r
            assert "logprobs" not in r
            assert "temperature" not in r
            assert "max_completion_tokens" in r
        p = c.profile
        assert (p.tokens, p.temperature, p.logprobs) == ("max_completion_tokens", False, False)
        assert c.counts.retries == 0  # an adaptation is not a transient failure
        assert c.usage.server_profile
        assert json.loads(c.usage.server_profile)["learned"]


@pytest.mark.asyncio
async def test_single_flight_calls_in_flight_follow_the_first_decision():
    with FakeLLMServer(profile="json-object-only", latency=0.05) as srv:
        c = client_for(srv)
        results = await asyncio.gather(*(c.chat_json("evaluation", MSGS, Rated) for _ in range(12)))
        await c.close()
        assert all(isinstance(r.parsed, Rated) for r in results)
        sent_schema = [
            r for r in chats(srv) if (r.get("response_format") or {}).get("type") == "json_schema"
        ]
        # Only the calls already in flight when the first refusal came (the client starts at 2
        # in flight for a server on this machine) carried json_schema; none failed.
        assert 1 <= len(sent_schema) <= 2
        assert c.profile.structured in ("json_object_schema", "json_object")
        # Every other call (in whatever order a busy machine sent them) used JSON mode.
        for r in (r for r in chats(srv) if r not in sent_schema):
            assert (r.get("response_format") or {}).get("type") == "json_object"
            assert "JSON schema" in r["messages"][-1]["content"]  # the schema is in the prompt


@pytest.mark.asyncio
async def test_llama_cpp_python_500_for_json_schema_is_an_adaptation_not_a_failure():
    with FakeLLMServer(profile="llama-cpp-python") as srv:
        c = client_for(srv, max_retries=0)
        res = await c.chat_json("evaluation", MSGS, Rated)
        await c.close()
        assert isinstance(res.parsed, Rated)
        assert c.profile.structured == "json_object_schema"
        last = chats(srv)[-1]["response_format"]
        assert last["type"] == "json_object"
        assert last["schema"]["properties"]["rating"]
        assert srv.rejections == [(500, "llama_cpp_python_json_schema")]


@pytest.mark.asyncio
async def test_schema_keywords_refused_then_left_out():
    with FakeLLMServer(profile="no-schema-keywords") as srv:
        c = client_for(srv)
        res = await c.chat_json("evaluation", MSGS, Rated, lengths={"reasons_for": 2})
        await c.close()
        assert isinstance(res.parsed, Rated)
        assert c.profile.structured == "json_schema_loose"
        schema = chats(srv)[-1]["response_format"]["json_schema"]["schema"]
        text = json.dumps(schema)
        assert not any(f'"{k}"' in text for k in capabilities.SCHEMA_KEYWORDS)


@pytest.mark.asyncio
async def test_pinned_capabilities_are_never_probed():
    with FakeLLMServer(profile="gpt5") as srv:
        pins = "structured=json_object,tokens=max_completion_tokens,temperature=no,logprobs=no"
        c = client_for(srv, pins=pins)
        await c.probe()
        await c.chat_json("evaluation", MSGS, Rated, logprobs=True)
        await c.close()
        assert srv.rejections == []
        assert all(
            (r.get("response_format") or {}).get("type") != "json_schema" for r in chats(srv)
        )


def test_pins_are_checked_and_name_what_is_allowed():
    assert parse_pins("logprobs=no, structured=text") == {
        "logprobs": "no",
        "structured": "text",
    }
    with pytest.raises(ValueError, match="unknown capability 'colour'"):
        parse_pins("colour=red")
    with pytest.raises(ValueError, match="structured cannot be 'xml'"):
        parse_pins("structured=xml")


def test_a_rejection_is_blamed_only_on_a_field_that_was_sent():
    p = capabilities.ServerProfile()
    body = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model."
            " Use 'max_completion_tokens' instead.",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
    r = capabilities.Rejection.of(400, body)
    change = capabilities.adaptation(p, {"max_tokens": 5}, r)
    assert change is not None
    assert change[:2] == (
        "tokens",
        "max_completion_tokens",
    )
    assert capabilities.adaptation(p, {"temperature": 0.7}, r) is None
    # A pydantic error list printed as text (llama-cpp-python) is read without its echoed input.
    text = (
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format',"
        " 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
    )
    r = capabilities.Rejection.of(500, {"error": {"message": text}})
    sent = {"response_format": {"type": "json_schema"}, "temperature": 0.7}
    change = capabilities.adaptation(p, sent, r)
    assert change is not None
    assert change[:2] == ("structured", "json_object_schema")


@pytest.mark.asyncio
async def test_a_timeout_skips_the_call_while_the_server_answers_others_and_names_the_flags():
    with FakeLLMServer() as srv:
        c = client_for(srv, timeout=0.3, max_retries=0)
        await c.chat_text("articulation", MSGS)  # the server answers
        srv.hang_next(2.0)
        with pytest.raises(errors.LLMTimeout) as exc:
            await c.chat_text("articulation", MSGS)
        await c.close()
    assert not isinstance(exc.value, errors.LLMServerGone)
    assert "--timeout" in str(exc.value)
    assert "--llm-concurrency" in str(exc.value)


@pytest.mark.asyncio
async def test_a_server_that_never_answers_is_gone():
    with FakeLLMServer() as srv:
        c = client_for(srv, timeout=0.2, max_retries=1)
        srv.hang_next(2.0, count=2)
        with pytest.raises(errors.LLMServerGone, match="answered nothing"):
            await c.chat_text("articulation", MSGS)
        await c.close()


@pytest.mark.asyncio
async def test_a_cut_json_answer_is_asked_again_with_a_higher_limit():
    with FakeLLMServer() as srv:
        c = client_for(srv)
        srv.cut_next(1, "json")
        res = await c.chat_json("evaluation", MSGS, Rated, max_tokens=100)
        await c.close()
        limits = [r["max_tokens"] for r in chats(srv)]
        assert limits == [100, 200]
        assert isinstance(res.parsed, Rated)
        assert c.usage.cut == 1


async def cut_answer(
    srv: FakeLLMServer, c: ChatClient, text: str, *, cuts: int = 2, **ask: Any
) -> ChatResult:
    """``c``'s plain-text answer (limit 50) when ``srv`` answers ``text``, cut at the token limit
    the next ``cuts`` times; ``c`` is closed after."""
    srv.set_responder(lambda body: text)
    srv.cut_next(cuts, "text")
    try:
        return await c.chat_text("articulation", MSGS, max_tokens=50, **ask)
    finally:
        await c.close()


@pytest.mark.asyncio
async def test_cut_text_is_trimmed_to_a_full_sentence_and_never_posted_mid_word():
    with FakeLLMServer() as srv:
        res = await cut_answer(srv, client_for(srv), "I went sailing. Then we tried the new harb")
    assert res.cut
    assert res.text == "I went sailing."


@pytest.mark.asyncio
async def test_an_invalid_value_gets_one_repair_quoting_the_error_then_is_dropped():
    with FakeLLMServer() as srv:
        srv.invalid_next(2)
        c = client_for(srv)
        with pytest.raises(errors.LLMOutputError, match="rating"):
            await c.chat_json("evaluation", MSGS, Rated)
        await c.close()
        repair = chats(srv)[-1]["messages"][-1]["content"]
        assert "rating" in repair
        assert "could not be read" in repair
        assert c.usage.dropped == 1


@pytest.mark.asyncio
async def test_sampled_ratings_use_n_where_the_server_takes_it():
    from playground.llm import rating

    with FakeLLMServer(profile="gpt5") as srv:
        c = client_for(srv)
        await c.probe()
        got = await rating.final_distribution(
            c, "evaluation", MSGS, '{"rating": 4}', rating.resolve(c, "auto"), samples=5
        )
        await c.close()
        assert got is not None
        dist, method, samples = got
        assert method == "sampled"
        assert samples == 5
        assert abs(sum(dist.values()) - 1) < 1e-9
        assert chats(srv)[-1]["n"] == 5  # one request for all five samples


# -- every LLM path, end to end --------------------------------------------------------------


def table(db: Path, name: str) -> list[sqlite3.Row]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return list(con.execute(f"SELECT * FROM {name}"))
    finally:
        con.close()


def sessions(db: Path) -> list[sqlite3.Row]:
    return table(db, "sessions")


def thoughts(db: Path) -> list[sqlite3.Row]:
    return table(db, "thoughts")


@pytest.mark.parametrize("profile", ["gpt5", "json-object-only"])
def test_simulate_completes_and_records_the_profile(profile: str, tmp_path: Path):
    db = tmp_path / "s.db"
    with FakeLLMServer(profile=profile) as srv:
        code, _out, err = run_cli(
            "simulate", *openai_flags(srv.base_url), "--agents", "3", "--turns", "5",
            "--rating-samples", "4", "--db", str(db),
        )  # fmt: skip
        assert code == 0, err
        assert repeated_after_rejection(srv) == []
    (s,) = sessions(db)
    assert s["status"] == "finished"
    profile_row = json.loads(s["server_profile"])
    if profile == "gpt5":
        assert profile_row["tokens"] == "max_completion_tokens"
        assert profile_row["temperature"] is False
        assert profile_row["logprobs"] is False
        rated = [t for t in thoughts(db) if t["score"] is not None]
        assert rated
        assert all(t["method"] == "sampled" and t["samples"] for t in rated)
    else:
        assert profile_row["structured"] in ("json_object_schema", "json_object")
    shown = run_cli("show", s["id"], "--db", str(db))[1]
    assert "Server: " in shown
    # The profile travels with the session: export, import into another database, show.
    exported = tmp_path / "s.jsonl"
    assert run_cli("export", "--all", "--db", str(db), "--output", str(exported))[0] == 0
    other = tmp_path / "other.db"
    assert run_cli("import", str(exported), "--db", str(other))[0] == 0
    (t,) = sessions(other)
    assert json.loads(t["server_profile"]) == profile_row
    assert "Server: " in run_cli("show", t["id"], "--db", str(other))[1]
    assert "Traceback" not in err


def test_an_experiment_completes_on_a_gpt5_like_server(tmp_path: Path):
    db = tmp_path / "x.db"
    with FakeLLMServer(profile="gpt5") as srv:
        code, _out, err = run_cli(
            "experiment", *openai_flags(srv.base_url), "--conditions",
            "inner-thoughts,next-speaker", "--conversations", "1", "--agents", "2",
            "--turns", "3", "--rating-samples", "3", "--db", str(db), "--no-progress",
        )  # fmt: skip
        assert code == 0, err
        assert repeated_after_rejection(srv) == []
    rows = sessions(db)
    assert len(rows) == 2
    assert all(r["status"] == "finished" and r["server_profile"] for r in rows)
    # The summary splits the ratings by method: all sampled on a server without logprobs.
    from playground.experiments import results as experiment_report
    from playground.storage import open_database

    database = open_database(db)
    try:
        (exp,) = [r["id"] for r in table(db, "experiments")]
        summary = {r.condition: r for r in experiment_report.summarise(database, exp)}
        text = experiment_report.format_summary(list(summary.values()))
    finally:
        database.close()
    assert set(summary["inner-thoughts"].methods) == {"sampled"}
    assert "inner-thoughts ratings by method: sampled" in text


def test_a_storm_run_completes_on_a_json_object_only_server(tmp_path: Path):
    db = tmp_path / "storm.db"
    with FakeLLMServer(profile="json-object-only") as srv:
        code, _out, err = run_cli(
            "storm", *openai_flags(srv.base_url), "--profiles", "1", "--turns", "2",
            "--db", str(db), "--no-progress",
        )  # fmt: skip
        assert code == 0, err
        assert repeated_after_rejection(srv) == []
    assert any(r["status"] == "finished" for r in sessions(db))


@pytest.mark.parametrize("profile", ["gpt5", "json-object-only"])
def test_judge_completes(profile: str, tmp_path: Path):
    db = tmp_path / "j.db"
    with FakeLLMServer(profile=profile) as srv:
        code, out, err = run_cli(
            "simulate", "--engine", "offline", "--agents", "2", "--turns", "4", "--db", str(db),
            "--quiet",
        )  # fmt: skip
        assert code == 0, err
        sid = out.strip().splitlines()[-1]
        code, out, err = run_cli(
            "judge", sid, *openai_flags(srv.base_url), "--rating-samples", "3", "--db", str(db)
        )
        assert code == 0, err
        assert repeated_after_rejection(srv) == []
    con = sqlite3.connect(db)
    methods = [m for (m,) in con.execute("SELECT method FROM judge_scores")]
    con.close()
    assert len(methods) == 7
    if profile == "gpt5":
        assert all(m.startswith("sampled") for m in methods), methods


def test_eval_next_speaker_completes_on_a_gpt5_like_server():
    corpus = Path(__file__).parents[1] / "data" / "next_speaker_corpus.jsonl"
    with FakeLLMServer(profile="gpt5") as srv:
        code, out, err = run_cli(
            "eval-next-speaker", str(corpus), *openai_flags(srv.base_url), "--limit", "3",
            "--rating-samples", "3", "--format", "json",
        )  # fmt: skip
        assert code == 0, err
        assert repeated_after_rejection(srv) == []
    assert json.loads(out)


def test_a_weak_model_never_fails_a_session_and_nothing_cut_or_placeholder_is_posted(
    tmp_path: Path,
):
    db = tmp_path / "weak.db"
    with FakeLLMServer() as srv:
        srv.invalid_next(6)
        srv.placeholder_next(6)
        srv.cut_next(6)
        code, _out, err = run_cli(
            "simulate", *openai_flags(srv.base_url), "--agents", "3", "--turns", "6",
            "--preset", "non-stop-chatter", "--db", str(db),
        )  # fmt: skip
    assert code == 0, err
    (s,) = sessions(db)
    assert s["status"] == "finished", s["end_reason"]
    con = sqlite3.connect(db)
    texts = [t for (t,) in con.execute("SELECT text FROM messages")]
    thought_texts = [t for (t,) in con.execute("SELECT text FROM thoughts")]
    con.close()
    for t in texts:
        assert t.strip() not in ("", "...", "…"), t
        assert not t.lstrip().startswith("{"), t
    assert "..." not in [t.strip() for t in thought_texts]
    assert s["dropped"] + s["cut"] > 0
    # Sloppy answers are not capability refusals: the profile stays as it was.
    assert json.loads(s["server_profile"])["structured"] == "json_schema"


def test_a_simulated_users_cut_json_answer_is_never_posted_raw():
    from playground.storm import parse

    with pytest.raises(errors.LLMOutputError, match="cannot be read"):
        parse.parse_user_answer('{ "message": "The conversation so far: the user wants a trip to')
    # A plain message is still read as before.
    assert parse.parse_user_answer("I want a cheap trip to Lisbon in May.").text


def test_the_digit_written_counts_even_when_it_is_not_among_the_alternatives():
    """A grammar can force a digit outside the model's top alternatives (SmolLM2 puts quotes and
    brackets there): the written digit's own logprob still counts, so a rating of 5 never reads
    as a certain 1."""
    import math

    from playground.llm import rating
    from playground.llm.client import ChatResult
    from playground.llm.responses import TokenLogprob

    half = math.log(0.5)
    res = ChatResult(
        text='{"rating": 5}',
        tokens=[
            TokenLogprob('{"rating": ', 0.0, [('{"rating": ', 0.0)]),
            TokenLogprob("5", half, [('"', math.log(0.3)), ("1", math.log(0.2)), ("[", -3.0)]),
            TokenLogprob("}", 0.0, [("}", 0.0)]),
        ],
    )
    (alts,) = res.rating_alternatives()
    dist = rating.distribution_from_alternatives(alts, 1, 5)
    assert dist is not None
    assert dist[5] == pytest.approx(0.5 / 0.7)
    assert dist[1] == pytest.approx(0.2 / 0.7)


# -- stop sequences --------------------------------------------------------------------------
# Sent where the server takes them, dropped for good where it refuses them (OpenAI's own
# refusal, server_bodies.json ``openai_stop_unsupported``) or where the model then stops before
# it says anything. The stand-in honours ``stop`` as real servers do.

UTTERANCE_MSGS = [{"role": "user", "content": "Write your next chat message."}]
STOPS = ("\n\n", "[message:")
RUN_ON = "Count me in!\n\nWhat's your next message?\n\n[message:4] Ben: Great"
#: Where an utterance runs on, as the LLM mind tells the client.
ENDS = functools.partial(utterance.scaffolding_start, names=["Ana", "Ben"])


@pytest.mark.asyncio
async def test_stop_sequences_are_sent_and_end_the_answer_on_the_server():
    with FakeLLMServer() as srv:
        srv.set_responder(lambda body: RUN_ON)
        c = client_for(srv)
        res = await c.chat_text("articulation", UTTERANCE_MSGS, stop=STOPS)
        plain = await c.chat_text("interpretation", UTTERANCE_MSGS)
        await c.close()
    first, second = chats(srv)
    assert first["stop"] == list(STOPS)
    assert "stop" not in second  # only the calls that ask for them
    assert res.text == "Count me in!"
    assert res.finish_reason == "stop"
    assert plain.text == RUN_ON.strip()


@pytest.mark.asyncio
async def test_no_more_than_four_stop_sequences_are_sent():
    with FakeLLMServer() as srv:
        c = client_for(srv)
        await c.chat_text("articulation", UTTERANCE_MSGS, stop=("a1", "b2", "c3", "d4", "e5"))
        await c.close()
    assert chats(srv)[0]["stop"] == ["a1", "b2", "c3", "d4"]


@pytest.mark.asyncio
async def test_a_server_that_refuses_stop_has_it_dropped_and_the_call_succeeds():
    # Pinned so that the only refusal is the one of stop (gpt-5.x refuses max_tokens and a
    # temperature too).
    with FakeLLMServer(profile="gpt5") as srv:
        srv.set_responder(lambda body: RUN_ON)
        c = client_for(srv, pins="tokens=max_completion_tokens,temperature=no")
        res = await c.chat_text("articulation", UTTERANCE_MSGS, stop=STOPS, run_on=ENDS)
        again = await c.chat_text("articulation", UTTERANCE_MSGS, stop=STOPS)
        await c.close()
    assert srv.rejections == [(400, "openai_stop_unsupported")]
    refused, sent, later = chats(srv)
    assert refused["stop"] == list(STOPS)
    assert "stop" not in sent  # learned once, never repeated
    assert "stop" not in later
    assert res.text == "Count me in!"  # cut on the client instead
    assert again.text
    assert c.profile.stop is False
    assert capabilities.STOP_REFUSED in c.profile.learned
    assert c.counts.retries == 0  # an adaptation is not a transient failure
    assert c.profile.summary().endswith("· no stop")


def test_the_refusal_body_is_openais():
    case = server_bodies()["openai_stop_unsupported"]
    rejection = capabilities.Rejection.of(case["status"], case["body"])
    profile = capabilities.ServerProfile()
    change = capabilities.adaptation(profile, {"stop": ["\n\n"], "seed": 1}, rejection)
    assert change is not None
    assert change[:2] == ("stop", False)
    # A refusal that names stop is never blamed on it when the request did not carry it.
    assert capabilities.adaptation(profile, {"seed": 1}, rejection) is None


@pytest.mark.asyncio
async def test_a_pinned_stop_is_never_dropped():
    with FakeLLMServer(profile="gpt5") as srv:
        c = client_for(srv, pins="tokens=max_completion_tokens,temperature=no,stop=yes")
        with pytest.raises(errors.LLMServerError, match="stop"):
            await c.chat_text("articulation", UTTERANCE_MSGS, stop=STOPS)
        await c.close()
    assert c.profile.stop is True


@pytest.mark.asyncio
async def test_a_model_that_stops_before_it_answers_gets_no_more_stop_sequences():
    # A model that opens with a blank line (or thinks aloud first) meets "\n\n" before its
    # message: the answer is empty. It is asked again without stops, and never gets them again.
    with FakeLLMServer() as srv:
        srv.set_responder(lambda body: "\n\nHappy to help with the picnic.")
        c = client_for(srv)
        res = await c.chat_text("articulation", UTTERANCE_MSGS, stop=STOPS)
        await c.chat_text("articulation", UTTERANCE_MSGS, stop=STOPS)
        await c.close()
    sent = chats(srv)
    assert [("stop" in r) for r in sent] == [True, False, False]
    assert res.text == "Happy to help with the picnic."
    assert c.profile.stop is False
    assert c.profile.learned == [capabilities.STOP_SILENCES]


@pytest.mark.asyncio
async def test_a_run_on_cut_at_the_token_limit_is_complete_and_not_asked_again():
    with FakeLLMServer() as srv:
        c = client_for(srv)
        text = "Sure.\nBen: what about the weather tomorrow and the day after that"
        res = await cut_answer(srv, c, text, cuts=1, run_on=ENDS)
    assert len(chats(srv)) == 1
    assert res.finish_reason == "length"
    assert (res.text, res.cut) == ("Sure.", False)
    assert c.usage.cut == 0  # nothing of the message was lost


@pytest.mark.asyncio
async def test_an_answer_cut_before_its_first_sentence_is_unusable_not_fatal():
    from playground.room.state import FATAL

    with FakeLLMServer() as srv:
        c = client_for(srv)
        with pytest.raises(errors.LLMUnusableText, match=r"cut at the token limit \(100\)") as exc:
            await cut_answer(srv, c, "so I was thinking that maybe we could all go together")
    assert isinstance(exc.value, errors.LLMOutputError)
    assert not isinstance(exc.value, FATAL)
    assert c.usage.dropped == 1
