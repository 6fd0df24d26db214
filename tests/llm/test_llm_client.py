"""ChatClient through the real openai client and real HTTP to a loopback server."""

import numpy as np
import openai
import pytest
from pydantic import BaseModel, Field

from playground import errors, factory
from playground.llm.client import ChatClient
from playground.llm.schemas import parse_json_reply
from playground.settings import LLMSettings
from testbed.llm_server import FakeLLMServer

pytestmark = pytest.mark.asyncio
MSGS = [{"role": "user", "content": "Rate how much you want to talk about sailing boats."}]


class Rated(BaseModel):
    reasons_for: list[str]
    reasons_against: list[str]
    rating: int = Field(ge=1, le=5)


def client_for(srv: FakeLLMServer, **kw) -> ChatClient:
    settings = LLMSettings(
        base_url=srv.base_url, api_key="test-key", model="fake-model", retry_base_delay=0.0, **kw
    )
    raw = openai.AsyncOpenAI(
        base_url=srv.base_url, api_key="test-key", max_retries=0, timeout=settings.timeout
    )
    return ChatClient(raw, settings)


async def test_structured_call_sends_json_schema_and_reads_rating_logprobs(llm_server):
    c = client_for(llm_server)
    res = await c.chat_json("evaluation", MSGS, Rated, logprobs=True)
    await c.close()
    body = llm_server.requests[-1]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False
    assert body["logprobs"] is True
    assert body["top_logprobs"] == 5
    assert isinstance(res.parsed, Rated)
    alts = res.rating_alternatives()
    assert len(alts) == 1
    assert {t for t, _ in alts[0]} == {"1", "2", "3", "4", "5"}
    assert max(alts[0], key=lambda a: a[1])[0] == str(res.parsed.rating)
    assert c.usage.calls == 1
    assert c.usage.prompt_tokens > 0


async def test_probe_detects_logprob_support():
    with FakeLLMServer(logprobs=True) as yes, FakeLLMServer(logprobs=False) as no:
        a, b = client_for(yes), client_for(no)
        assert await a.probe() is True
        assert await b.probe() is False
        assert yes.requests[-1]["max_tokens"] == 1
        assert yes.requests[-1]["top_logprobs"] == 5
        await a.close()
        await b.close()


async def test_429_then_success_is_retried_with_backoff(llm_server):
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    c = client_for(llm_server)
    c._sleep = sleep  # observe the back-off without waiting
    llm_server.fail_next(429, retry_after=0.5)
    res = await c.chat_json("evaluation", MSGS, Rated)
    await c.close()
    assert isinstance(res.parsed, Rated)
    assert llm_server.chat_calls == 2
    assert c.retries == 1
    assert sleeps == [0.5]


async def test_5xx_is_retried_then_reported_clearly(llm_server):
    c = client_for(llm_server, max_retries=2)
    llm_server.fail_next(503, count=3)
    with pytest.raises(errors.LLMServerError, match="503 after 3 attempts"):
        await c.chat_text("articulation", MSGS)
    await c.close()


async def test_persistent_429_becomes_rate_limited_error(llm_server):
    c = client_for(llm_server, max_retries=1)
    llm_server.fail_next(429, count=2)
    with pytest.raises(errors.LLMRateLimited, match="429"):
        await c.chat_text("articulation", MSGS)
    await c.close()


async def test_server_ignoring_response_format_is_parsed_from_prose():
    with FakeLLMServer(response_format_mode="ignore", logprobs=False) as srv:
        c = client_for(srv)
        res = await c.chat_json("evaluation", MSGS, Rated, logprobs=True)
        await c.close()
    assert "```" in res.text
    assert isinstance(res.parsed, Rated)
    assert (
        res.rating_alternatives() == []
    )  # no logprobs: the caller falls back to the parsed rating


async def test_malformed_answer_gets_one_corrective_retry():
    with FakeLLMServer(response_format_mode="malformed_once") as srv:
        c = client_for(srv)
        res = await c.chat_json("evaluation", MSGS, Rated)
        await c.close()
        assert srv.chat_calls == 2
        assert "could not be read" in srv.requests[-1]["messages"][-1]["content"]
    assert isinstance(res.parsed, Rated)


async def test_still_malformed_after_retry_names_the_problem(llm_server):
    llm_server.set_responder(lambda body: "Honestly I'd rate it a four.")
    c = client_for(llm_server)
    with pytest.raises(errors.LLMOutputError, match="not valid Rated JSON even after a retry"):
        await c.chat_json("evaluation", MSGS, Rated)
    await c.close()
    assert llm_server.chat_calls == 2


async def test_wrong_key_is_an_auth_error_without_the_key_in_the_message():
    with FakeLLMServer(api_key="right-key") as srv:
        settings = LLMSettings(base_url=srv.base_url, api_key="sk-wrong-SECRET", model="fake-model")
        c = ChatClient(
            openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-wrong-SECRET", max_retries=0),
            settings,
        )
        with pytest.raises(errors.LLMAuthError) as exc:
            await c.probe()
        await c.close()
    assert "refused the API key" in str(exc.value)
    assert "SECRET" not in str(exc.value)


async def test_unreachable_server_is_named():
    settings = LLMSettings(
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        model="m",
        max_retries=1,
        retry_base_delay=0.0,
    )
    c = ChatClient(
        openai.AsyncOpenAI(base_url=settings.base_url, api_key="k", max_retries=0), settings
    )
    with pytest.raises(errors.LLMUnreachable, match=r"cannot reach http://127.0.0.1:9/v1"):
        await c.probe()
    await c.close()


async def test_timeout_is_retried_then_reported(llm_server):
    c = client_for(llm_server, timeout=0.3, max_retries=1)
    llm_server.hang_next(2.0, count=2)
    with pytest.raises(errors.LLMTimeout, match=r"within 0\.3 s"):
        await c.chat_text("articulation", MSGS)
    await c.close()


async def test_concurrency_limit_bounds_calls_in_flight():
    with FakeLLMServer(latency=0.2) as srv:
        import asyncio
        import time

        c = client_for(srv, concurrency=2)
        t0 = time.perf_counter()
        await asyncio.gather(*(c.chat_text("articulation", MSGS) for _ in range(4)))
        elapsed = time.perf_counter() - t0
        await c.close()
    assert elapsed >= 0.4  # 4 calls, 2 at a time, 0.2 s each: at least two rounds


async def test_remote_embeddings_use_the_endpoint(llm_server):
    from playground.embedding.cache import CachingEmbedder
    from playground.embedding.openai_compat import OpenAIEmbedder

    c = client_for(llm_server)
    emb = CachingEmbedder(OpenAIEmbedder(c, "fake-embed"))
    v = await emb.embed(["a cat sat", "a cat sat", "stock market"])
    await emb.embed(["a cat sat"])
    await c.close()
    assert v.shape == (3, 384)
    assert llm_server.embedding_calls == 1
    assert c.usage.embedding_calls == 1


async def test_remote_embedder_takes_its_dimension_from_the_server():
    """A server whose vectors are not 384 wide: an empty batch has the server's width, after
    the first answer (no call) and before any (one call learns it)."""
    from playground.embedding.cache import CachingEmbedder
    from playground.embedding.openai_compat import OpenAIEmbedder

    class Wide(FakeLLMServer):
        def _embeddings(self, body):
            return super()._embeddings({**body, "dimensions": 768})

    with Wide() as srv:
        c = client_for(srv)
        emb = CachingEmbedder(OpenAIEmbedder(c, "fake-embed"))
        first = await emb.embed(["a cat sat", "stock market"])
        empty = await emb.embed([])
        calls_after_empty = srv.embedding_calls
        fresh = OpenAIEmbedder(c, "fake-embed")
        with pytest.raises(errors.PlaygroundError, match="not known before its first answer"):
            _ = fresh.dim
        before_any = await fresh.embed([])
        await c.close()
    assert first.shape == (2, 768)
    assert emb.dim == 768
    assert empty.shape == (0, 768)
    assert empty.dtype == np.float32
    assert calls_after_empty == 1  # the empty batch asked nothing
    assert before_any.shape == (0, 768)
    assert fresh.dim == 768
    assert srv.embedding_calls == 2


async def test_tolerant_parser_handles_fences_and_prose():
    text = 'Sure!\n```json\n{"reasons_for": ["a"], "reasons_against": ["b"], "rating": 4}\n```'
    assert parse_json_reply(text, Rated).rating == 4
    assert (
        parse_json_reply(
            'blah {"reasons_for": [], "reasons_against": [], "rating": 2} blah', Rated
        ).rating
        == 2
    )
    with pytest.raises(ValueError, match="not JSON"):
        parse_json_reply("four", Rated)


async def test_factory_builds_a_client_that_never_retries_inside_openai(llm_server):
    from tests.conftest import server_settings

    engine = await factory.build_engine(server_settings(llm_server), embedder=None, probe=True)
    try:
        assert engine.logprobs_supported is True
        assert engine.client is not None
        assert engine.client._client.max_retries == 0
    finally:
        await engine.close()


# -- the HTTP library under the openai client ---------------------------------------------------


@pytest.mark.parametrize("http", factory.HTTP_LIBRARIES)
async def test_both_http_libraries_read_answers_retry_and_time_out_alike(llm_server, http):
    from playground.settings import Settings

    settings = Settings.model_validate(
        {
            "engine": {"engine": "openai"},
            "llm": {
                "base_url": llm_server.base_url,
                "api_key": "test-key",
                "model": "fake-model",
                "retry_base_delay": 0.0,
                "timeout": 0.3,
                "max_retries": 1,
            },
        }
    )
    c = factory.make_chat_client(settings, http=http)
    try:
        res = await c.chat_json("evaluation", MSGS, Rated, logprobs=True)
        assert isinstance(res.parsed, Rated)
        assert {t for t, _ in res.rating_alternatives()[0]} == {"1", "2", "3", "4", "5"}
        llm_server.fail_next(429, retry_after=0)
        assert await c.chat_text("articulation", MSGS)
        assert c.retries == 1
        llm_server.hang_next(2.0, count=2)
        with pytest.raises(errors.LLMTimeout, match=r"within 0\.3 s"):
            await c.chat_text("articulation", MSGS)
        llm_server.fail_next(401)
        with pytest.raises(errors.LLMAuthError):
            await c.chat_text("articulation", MSGS)
    finally:
        await c.close()
    assert llm_server.requests[0]["logprobs"] is True


async def test_an_unreachable_server_is_named_with_aiohttp_too():
    from playground.settings import Settings

    settings = Settings.model_validate(
        {
            "engine": {"engine": "openai"},
            "llm": {"base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "model": "m"},
        }
    )
    c = factory.make_chat_client(settings, http="aiohttp")
    with pytest.raises(errors.LLMUnreachable, match=r"cannot reach http://127.0.0.1:9/v1"):
        await c.probe()
    await c.close()


async def test_auto_picks_aiohttp_unless_a_proxy_is_set(monkeypatch):
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    assert factory.http_library("auto") == "aiohttp"
    assert factory.http_library("httpx") == "httpx"
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert factory.http_library("auto") == "httpx"  # aiohttp here would ignore the proxy


async def test_an_unknown_http_library_is_a_settings_error():
    from playground.settings import Settings

    with pytest.raises(errors.SettingsError, match="HTTP library: 'curl'"):
        factory.make_chat_client(Settings(), http="curl")


async def test_answers_with_non_standard_json_numbers_still_read():
    from playground.llm import responses

    body = (
        b'{"choices": [{"message": {"content": "4"}, "logprobs": {"content": [{"token": "4",'
        b' "logprob": -0.1, "top_logprobs": [{"token": "4", "logprob": -0.1},'
        b' {"token": "5", "logprob": -Infinity}]}]}}], "usage": {"prompt_tokens": 3}}'
    )
    got = responses.read_completion("srv", "rating", "application/json", body)
    assert got.text == "4"
    assert got.prompt_tokens == 3
    assert got.tokens is not None
    assert got.tokens[0].top == [("4", -0.1), ("5", float("-inf"))]
