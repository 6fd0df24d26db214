"""An articulation that runs on into the prompt's scaffolding is said up to where the scaffolding
starts: the LLM mind through the real openai client and real HTTP to the stand-in server (which
honours ``stop`` as real servers do, or refuses it as OpenAI's reasoning models do)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import openai
import pytest

from playground import errors
from playground.cognition import prompts
from playground.cognition.llm import LLMCognition
from playground.llm import transport
from playground.llm.client import ChatClient
from playground.room.state import FATAL
from playground.settings import LLMSettings
from testbed.llm_server import FakeLLMServer
from tests.support import minds

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

#: The second message of the issue, as SmolLM2-135M wrote it behind llama.cpp's server.
ISSUE_RUN_ON = (
    "Oh nice, I'm actually going to the gym tonight.\n\nWhat's your next message?\n\n"
    "Lemon-flavored beer is the best thing about summer"
)
SAID = "Oh nice, I'm actually going to the gym tonight."


@pytest.fixture(autouse=True)
def _fresh_profiles() -> Iterator[None]:
    transport._PROFILES.clear()
    yield
    transport._PROFILES.clear()


def _mind(srv: FakeLLMServer, **kw: object) -> LLMCognition:
    settings = LLMSettings(
        base_url=srv.base_url, api_key="k", model="fake-model", retry_base_delay=0.0, **kw
    )
    raw = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
    return LLMCognition(ChatClient(raw, settings, seed=1))


THOUGHT = minds.articulation("Tell Ben about the gym.")


def _says(text: str):
    """A responder: ``text`` for the plain-text calls (utterances), the generic JSON otherwise."""
    return lambda body: text if "response_format" not in body else None


def _utterance_requests(srv: FakeLLMServer) -> list[dict]:
    return [
        r
        for r in srv.requests
        if r["_path"].endswith("/chat/completions") and "response_format" not in r
    ]


async def test_the_issues_run_on_is_said_up_to_the_blank_line_and_stop_is_sent():
    with FakeLLMServer() as srv:
        srv.set_responder(_says(ISSUE_RUN_ON))
        mind = _mind(srv)
        said = await mind.articulate(minds.chat_context(), THOUGHT)
        await mind.client.close()
    assert said == SAID
    (request,) = _utterance_requests(srv)
    assert request["stop"] == list(prompts.UTTERANCE_STOPS)


async def test_a_server_that_refuses_stop_still_gets_the_run_on_cut_on_the_client():
    with FakeLLMServer(profile="gpt5") as srv:
        srv.set_responder(_says(ISSUE_RUN_ON))
        mind = _mind(srv, pins="tokens=max_completion_tokens,temperature=no")
        said = await mind.articulate(minds.chat_context(), THOUGHT)
        await mind.client.close()
    assert said == SAID
    assert srv.rejections == [(400, "openai_stop_unsupported")]
    refused, answered = _utterance_requests(srv)
    assert "stop" in refused
    assert "stop" not in answered


async def test_a_run_on_into_another_participants_turn_is_cut_there():
    # A single line break is no stop sequence: the client cuts at "Ben:".
    with FakeLLMServer() as srv:
        srv.set_responder(_says("Gym, then pizza!\nBen: Nice, which gym?\nAna: The one on Elm"))
        mind = _mind(srv)
        said = await mind.articulate(minds.chat_context(), THOUGHT)
        await mind.client.close()
    assert said == "Gym, then pizza!"


async def test_a_baseline_reply_is_cut_the_same_way():
    with FakeLLMServer() as srv:
        srv.set_responder(_says("Ana: Sounds fun. [message:2] Chloe: I'm in"))
        mind = _mind(srv)
        said = await mind.respond(minds.chat_context())
        await mind.client.close()
    assert said == "Sounds fun."
    assert _utterance_requests(srv)[0]["stop"] == list(prompts.UTTERANCE_STOPS)


async def test_an_answer_that_is_only_scaffolding_is_unusable_and_not_fatal():
    with FakeLLMServer() as srv:
        srv.set_responder(_says("Conversation so far:\n[message:1] Ben: Any plans tonight?"))
        mind = _mind(srv)
        with pytest.raises(errors.LLMUnusableText, match="scaffolding") as exc:
            await mind.articulate(minds.chat_context(), THOUGHT)
        await mind.client.close()
    assert isinstance(exc.value, errors.LLMOutputError)
    assert not isinstance(exc.value, FATAL)  # the agent stays silent, the session goes on
    assert mind.client.usage.dropped == 1
    # The server stopped at once ("Conversation so far:" is a stop sequence); asked again
    # without stops, the model still said nothing of its own: the stops were not to blame.
    assert [("stop" in r) for r in _utterance_requests(srv)] == [True, False]
    assert mind.client.profile.stop is True


@pytest.mark.parametrize(
    "key",
    [
        "llama_server_stop_before_anything",
        "llama_server_length_mid_sentence",
        "llama_server_length_scaffolding",
    ],
)
async def test_llama_server_s_own_unusable_answers_are_unusable_not_fatal(key: str) -> None:
    """llama.cpp's llama-server, answering SmolLM2-135M's articulation as it really did (the
    bodies replayed byte for byte): a stop met before anything was said, a cut mid-sentence, a
    cut in the prompt's own layout. Each is an unusable utterance, never a fatal error."""
    from aiohttp import web

    from testbed.llm_server import server_bodies

    body = server_bodies()[key]["body"]
    seen: list[dict] = []

    async def chat(request: web.Request) -> web.Response:
        seen.append(await request.json())
        return web.json_response(body)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    assert isinstance(site._server, asyncio.Server)
    port = site._server.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    try:
        settings = LLMSettings(base_url=url, api_key="k", model="smollm2-135m", retry_base_delay=0)
        raw = openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0)
        mind = LLMCognition(ChatClient(raw, settings, seed=1))
        with pytest.raises(errors.LLMUnusableText) as got:
            await mind.articulate(minds.chat_context(), THOUGHT)
        await mind.client.close()
    finally:
        await runner.cleanup()
    assert not isinstance(got.value, FATAL)
    assert seen  # the requests went over HTTP
