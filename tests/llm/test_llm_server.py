"""Tests for the fake OpenAI-compatible server, driven by the real ``openai`` client.

The tests are synchronous and call ``asyncio.run`` themselves, so they need no
async pytest plugin.
"""

from __future__ import annotations

import asyncio
import json
import math
import re

import openai
import pytest
from pydantic import BaseModel, Field

from testbed.llm_server import FakeLLMServer, tokenize

MODEL = "fake-model"
PROMPT = "Please review the story about a brave little robot exploring the garden."


class Point(BaseModel):
    """Nested object used inside a list."""

    label: str
    weight: int


class Review(BaseModel):
    """A small structured-output model: string, bounded int, list of objects."""

    summary: str
    rating: int = Field(ge=1, le=5)
    points: list[Point]


def review_format(strict: bool = False) -> dict:
    """A ``json_schema`` response_format for :class:`Review`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "Review", "schema": Review.model_json_schema(), "strict": strict},
    }


def client_for(srv: FakeLLMServer, api_key: str = "test-key", **kw) -> openai.AsyncOpenAI:
    """The real async client pointed at ``srv`` with retries disabled."""
    return openai.AsyncOpenAI(base_url=srv.base_url, api_key=api_key, max_retries=0, **kw)


async def chat(client: openai.AsyncOpenAI, prompt: str = PROMPT, **kw):
    """One chat completion with a single user message."""
    return await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": prompt}], **kw
    )


def run_with_client(srv: FakeLLMServer, body, **client_kw):
    """Run ``body(client)`` in a fresh event loop, always closing the client."""

    async def main():
        client = client_for(srv, **client_kw)
        try:
            return await body(client)
        finally:
            await client.close()

    return asyncio.run(main())


@pytest.fixture
def srv():
    """A default server, stopped after the test."""
    with FakeLLMServer() as server:
        yield server


def test_json_schema_reply_validates(srv):
    """1. A json_schema reply parses with the pydantic model it came from."""
    resp = run_with_client(srv, lambda c: chat(c, response_format=review_format()))
    content = resp.choices[0].message.content
    review = Review.model_validate_json(content)
    assert 1 <= review.rating <= 5
    assert len(review.points) == 2
    assert 4 <= len(review.summary.split()) < 15
    assert resp.model == MODEL
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage.completion_tokens == len(tokenize(content))
    assert resp.usage.prompt_tokens == len(PROMPT.split())
    # Deterministic: the same request gives the same answer.
    again = run_with_client(srv, lambda c: chat(c, response_format=review_format()))
    assert again.choices[0].message.content == content
    assert srv.chat_calls == 2
    assert srv.requests[0]["_path"] == "/v1/chat/completions"
    assert srv.requests[0]["response_format"]["json_schema"]["name"] == "Review"


def test_parse_helper_with_strict_schema(srv):
    """The client's own ``parse()`` helper (strict schema with $refs) works too."""

    async def body(c):
        return await c.chat.completions.parse(
            model=MODEL, messages=[{"role": "user", "content": PROMPT}], response_format=Review
        )

    resp = run_with_client(srv, body)
    parsed = resp.choices[0].message.parsed
    assert isinstance(parsed, Review)
    assert 1 <= parsed.rating <= 5


def test_rating_digit_logprobs(srv):
    """2. The rating digit carries a distribution over 1-5 summing to ~1."""
    resp = run_with_client(
        srv, lambda c: chat(c, response_format=review_format(), logprobs=True, top_logprobs=5)
    )
    choice = resp.choices[0]
    content = choice.message.content
    entries = choice.logprobs.content
    assert "".join(e.token for e in entries) == content

    rating = json.loads(content)["rating"]
    # Find the digit token that follows the "rating" key.
    offset = 0
    rating_entry = None
    key_pos = content.index('"rating"')
    for e in entries:
        if offset > key_pos and e.token.isdigit():
            rating_entry = e
            break
        offset += len(e.token)
    assert rating_entry is not None
    assert rating_entry.token == str(rating)
    top = rating_entry.top_logprobs
    assert len(top) == 5
    assert sorted(t.token for t in top) == ["1", "2", "3", "4", "5"]
    assert math.isclose(sum(math.exp(t.logprob) for t in top), 1.0, rel_tol=1e-9)
    assert top[0].token == rating_entry.token
    assert rating_entry.logprob == top[0].logprob
    assert [t.logprob for t in top] == sorted((t.logprob for t in top), reverse=True)
    # Every other token has exactly the requested number of alternatives.
    assert all(len(e.top_logprobs) == 5 for e in entries)


def test_logprobs_disabled_server():
    """3. A server created with logprobs=False never returns logprobs."""
    with FakeLLMServer(logprobs=False) as srv:
        resp = run_with_client(srv, lambda c: chat(c, logprobs=True, top_logprobs=3))
    assert resp.choices[0].logprobs is None


def test_fail_next_rate_limit_then_success(srv):
    """4. fail_next(429) makes one call raise RateLimitError; the next succeeds."""
    srv.fail_next(429, retry_after=0.5)

    async def body(c):
        with pytest.raises(openai.RateLimitError) as info:
            await chat(c)
        assert info.value.response.headers["retry-after"] == "0.5"
        assert isinstance(info.value.body, dict)
        assert info.value.body["type"] == "rate_limit_exceeded"
        return await chat(c)

    resp = run_with_client(srv, body)
    assert resp.choices[0].message.content
    assert srv.chat_calls == 2


def test_wrong_api_key_is_rejected():
    """5. A server with api_key rejects other keys with 401."""
    with FakeLLMServer(api_key="right-key") as srv:

        async def body(c):
            with pytest.raises(openai.AuthenticationError):
                await chat(c)

        run_with_client(srv, body, api_key="wrong-key")
        ok = run_with_client(srv, chat, api_key="right-key")
    assert ok.choices[0].message.content


def test_ignore_mode_returns_fenced_json():
    """6. 'ignore' mode wraps the JSON in prose and a ```json fence."""
    with FakeLLMServer(response_format_mode="ignore") as srv:
        resp = run_with_client(srv, lambda c: chat(c, response_format=review_format()))
    content = resp.choices[0].message.content
    assert content.startswith("Sure!")
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)
    match = re.search(r"```json\n(.*?)\n```", content, re.DOTALL)
    assert match is not None
    Review.model_validate_json(match.group(1))


def test_malformed_once_then_honour():
    """'malformed_once' returns prose for the first json_schema call only."""
    with FakeLLMServer(response_format_mode="malformed_once") as srv:

        async def body(c):
            first = await chat(c, response_format=review_format())
            second = await chat(c, response_format=review_format())
            return first, second

        first, second = run_with_client(srv, body)
    with pytest.raises(json.JSONDecodeError):
        json.loads(first.choices[0].message.content)
    Review.model_validate_json(second.choices[0].message.content)


def test_embeddings(srv):
    """7. Embeddings are deterministic, unit length and 384-dimensional."""

    async def body(c):
        return await c.embeddings.create(
            model="fake-embed", input=["a cat sat", "a cat sat", "stock market"]
        )

    resp = run_with_client(srv, body)
    vecs = [d.embedding for d in resp.data]
    assert len(vecs) == 3
    assert all(len(v) == 384 for v in vecs)
    assert vecs[0] == vecs[1]
    for v in vecs:
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-5)
    assert srv.embedding_calls == 1
    # Shared words give positive similarity (server-side helper, float64).
    a, b = FakeLLMServer.embed("the cat sat"), FakeLLMServer.embed("a cat slept")
    assert sum(x * y for x, y in zip(a, b, strict=True)) > 0


def test_concurrent_requests_overlap():
    """8. Requests are served concurrently (threaded server), not one by one."""
    with FakeLLMServer(latency=0.3) as srv:

        async def body(c):
            await chat(c)  # warm-up: connection and client start-up
            return await asyncio.gather(*(chat(c, f"prompt number {i}") for i in range(4)))

        results = run_with_client(srv, body)
    assert len(results) == 4
    assert srv.max_in_flight == 4, f"only {srv.max_in_flight} of 4 requests were served at once"


def test_probe_plain_text_models_and_404(srv):
    """Capability probe, plain replies varying with the prompt, /models and 404."""

    async def body(c):
        probe = await chat(c, max_tokens=1)
        a = await chat(c, "tell me about purple elephants dancing")
        b = await chat(c, "describe quantum tea kettles")
        models = await c.models.list()
        with pytest.raises(openai.NotFoundError):
            await c.post("/nowhere", body={"x": 1}, cast_to=object)
        return probe, a, b, models

    probe, a, b, models = run_with_client(srv, body)
    assert probe.choices[0].message.content == "OK"
    text_a, text_b = a.choices[0].message.content, b.choices[0].message.content
    assert text_a != text_b
    assert 8 <= len(text_a.split()) <= 16
    assert set(text_a.lower().replace(".", "").split()) & {"purple", "elephants", "dancing"}
    assert [m.id for m in models.data] == [MODEL]
    assert srv.requests[-1]["_path"] == "/v1/nowhere"


def test_hang_next_triggers_client_timeout(srv):
    """hang_next makes the client time out; later calls are unaffected."""
    srv.hang_next(2.0)

    async def body(c):
        with pytest.raises(openai.APITimeoutError):
            await chat(c, timeout=0.3)
        return await chat(c)

    resp = run_with_client(srv, body)
    assert resp.choices[0].message.content


def test_responder_override_and_seed():
    """set_responder supplies content; different seeds change fabricated values."""
    with FakeLLMServer() as srv:
        srv.set_responder(lambda body: "Rated 4 of 5." if "custom" in str(body) else None)

        async def body(c):
            custom = await chat(c, "custom please", logprobs=True, top_logprobs=2)
            normal = await chat(c, "normal please")
            return custom, normal

        custom, normal = run_with_client(srv, body)
    assert custom.choices[0].message.content == "Rated 4 of 5."
    toks = custom.choices[0].logprobs.content
    assert [t.token for t in toks][:4] == ["Rated", " ", "4", " "]
    assert [t.token for t in toks[2].top_logprobs] == ["4", "3"]
    assert normal.choices[0].message.content.startswith("Honestly")

    outputs = set()
    for seed in range(6):
        with FakeLLMServer(seed=seed) as s:
            r = run_with_client(s, lambda c: chat(c, response_format=review_format()))
        outputs.add(r.choices[0].message.content)
    assert len(outputs) > 1


def test_the_benchmark_server_serves_the_same_answers_from_one_event_loop():
    """testbed.llm_server_async (bench/bench_experiment.py's server): same answers, the
    latency added once per chat call and overlapping across calls, keep-alive connections."""
    from testbed.llm_server_async import serve

    async def main() -> None:
        fake = FakeLLMServer()
        server = await serve(fake, latency=0.2)
        port = server.sockets[0].getsockname()[1]
        client = openai.AsyncOpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0
        )
        answers = await asyncio.gather(
            *(
                client.chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": PROMPT}], logprobs=True
                )
                for _ in range(8)
            )
        )
        emb = await client.embeddings.create(model="e", input=["a cat", "a dog"])
        with pytest.raises(openai.NotFoundError):
            await client.models.retrieve("nope-not-served")
        await client.close()
        server.close()
        await server.wait_closed()
        assert fake.max_in_flight == 8  # 8 calls at once: one latency, not eight
        assert all(a.choices[0].message.content for a in answers)
        assert answers[0].choices[0].logprobs is not None
        assert len(emb.data) == 2

    asyncio.run(main())
