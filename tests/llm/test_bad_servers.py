"""Servers that answer, but not as an OpenAI-compatible API does, and retries made visible.

Everything goes through the real openai client and real HTTP to the loopback server, which can
answer with a web page, broken JSON, no choices, an error object sent with status 200, empty
content, a proxy's 502 page or plain text (``FakeLLMServer.garble_next``).
"""

import json
import os
import subprocess
import sys

import openai
import pytest

from playground import errors, events
from playground.llm.client import ChatClient
from playground.room import loops
from playground.settings import LLMSettings
from playground.storage import SessionReader, open_database
from testbed.llm_server import FakeLLMServer
from tests.conftest import server_settings
from tests.support.rooms import build, library, of

pytestmark = pytest.mark.asyncio
MSGS = [{"role": "user", "content": "Say something about sailing boats."}]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def client_for(srv: FakeLLMServer, sleeps: list[float] | None = None) -> ChatClient:
    settings = LLMSettings(
        base_url=srv.base_url, api_key="k", model="fake-model", retry_base_delay=0.5
    )
    raw = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)

    async def sleep(s: float) -> None:
        (sleeps if sleeps is not None else []).append(s)

    return ChatClient(raw, settings, sleep=sleep)


@pytest.mark.parametrize(
    ("garble", "said", "shown"),
    [
        ("html", "a web page (text/html)", "Open WebUI"),
        ("broken_json", "a body that is not JSON (application/json)", "chatcmpl-1"),
        ("no_choices", "no choices", '"object": "list"'),
        ("error_200", "an error", "model is loading"),
        ("text_plain", "a body that is not JSON (text/plain)", "OK"),
    ],
)
async def test_a_surprising_answer_names_the_server_and_what_came_back(
    llm_server, garble, said, shown
):
    c = client_for(llm_server)
    llm_server.garble_next(garble)
    with pytest.raises(errors.LLMBadResponse) as info:
        await c.chat_text("articulation", MSGS)
    await c.close()
    message = str(info.value)
    assert llm_server.base_url in message
    assert "articulation" in message
    assert said in message
    assert shown in message
    assert len(message) < 400  # a few characters of the body, not all of it
    # Fatal for a run (it is a server error), and not retried: the same answer would come back.
    assert isinstance(info.value, errors.LLMServerError)
    assert llm_server.chat_calls == 1


async def test_a_proxy_error_page_is_retried_then_named_with_a_few_characters(llm_server):
    sleeps: list[float] = []
    c = client_for(llm_server, sleeps)
    llm_server.garble_next("proxy_502", count=4)
    with pytest.raises(errors.LLMServerError) as info:
        await c.chat_text("articulation", MSGS)
    message = str(info.value)
    assert "502" in message
    assert "502 Bad Gateway" in message
    assert llm_server.base_url in message
    assert "<html>" in message
    assert len(message) < 400
    assert c.usage.retries == 3
    assert c.usage.rate_limit_waits == 0
    assert len(sleeps) == 3
    await c.close()


async def test_empty_content_is_an_output_error_and_a_structured_call_asks_again(llm_server):
    c = client_for(llm_server)
    llm_server.garble_next("empty_content")
    with pytest.raises(errors.LLMOutputError, match="empty answer"):
        await c.chat_text("articulation", MSGS)
    llm_server.garble_next("empty_content")
    from tests.llm.test_llm_client import Rated

    res = await c.chat_json("evaluation", MSGS, Rated)  # the corrective retry gets a real answer
    assert isinstance(res.parsed, Rated)
    assert llm_server.chat_calls == 3
    await c.close()


async def test_remote_embeddings_answered_with_a_web_page_name_the_server(llm_server):
    c = client_for(llm_server)
    llm_server.garble_next("html")
    with pytest.raises(errors.LLMBadResponse, match="embeddings with a web page"):
        await c.embed(["hello"], model="fake-embed")
    await c.close()


async def test_a_web_page_mid_run_fails_the_session_with_the_reason(llm_server, embedder, db):
    settings = server_settings(llm_server, max_turns=8, seed=5)
    room, engine, seen = await build(settings, embedder, library(3), db=db)

    def garble_after_first_reply(e: events.BaseEvent) -> None:
        if isinstance(e, events.MessagePosted) and e.message.id == 2:
            llm_server.garble_next("html", count=10_000)

    room.bus.subscribe(garble_after_first_reply)
    with pytest.raises(errors.LLMBadResponse):
        await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    await engine.close()
    session = SessionReader(db).load(room.session_id)["session"]
    assert session["status"] == "failed"  # not "interrupted"
    assert "web page" in session["end_reason"]
    assert llm_server.base_url in session["end_reason"]
    assert [e.error_type for e in of(events.ErrorOccurred, seen)] == ["LLMBadResponse"]


async def test_retries_after_429_are_counted_saved_and_shown(llm_server, embedder, db):
    settings = server_settings(llm_server, max_turns=3, seed=5, retry_base_delay=0.01)
    room, engine, seen = await build(settings, embedder, library(2), db=db)
    llm_server.fail_next(429, count=2, retry_after=0.05)
    llm_server.fail_next(500, count=1)
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    await engine.close()
    u = engine.client.usage
    assert (u.retries, u.rate_limit_waits) == (3, 2)
    assert u.rate_limit_seconds >= 0.1
    # The running count is published while the run goes on, not only at the end.
    published = [e.usage.retries for e in of(events.UsageRecorded, seen)]
    assert 1 in published
    assert 2 in published
    assert published[-1] == 3
    row = SessionReader(db).load(room.session_id)["session"]
    assert (row["retries"], row["rate_limit_waits"]) == (3, 2)
    assert row["rate_limit_seconds"] == pytest.approx(u.rate_limit_seconds)
    assert u.retry_text().startswith("3 retries, 2 after 429 (")


def _cli(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _server_args(srv: FakeLLMServer, db_path) -> list[str]:
    return [
        "--engine", "openai", "--base-url", srv.base_url, "--api-key", "k",
        "--model", "fake-model", "--db", str(db_path),
    ]  # fmt: skip


async def test_cli_against_a_web_page_says_so_in_one_line_without_a_traceback(llm_server, db_path):
    llm_server.garble_next("html", count=10_000)
    proc = _cli("simulate", "--agents", "2", "--turns", "3", *_server_args(llm_server, db_path))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "Traceback" not in proc.stdout
    assert "web page" in proc.stderr
    assert llm_server.base_url in proc.stderr


async def test_cli_shows_retries_in_the_progress_line_and_show_prints_them(llm_server, db_path):
    llm_server.fail_next(429, count=2, retry_after=0.05)
    proc = _cli(
        "simulate", "--agents", "2", "--turns", "3", "--seed", "3",
        *_server_args(llm_server, db_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "2 retries, 2 after 429 (" in proc.stderr  # the progress line
    assert "2 retries, 2 after 429 (" in proc.stdout  # the closing usage line
    session_id = proc.stdout.strip().splitlines()[-1]
    shown = _cli("show", session_id, "--db", str(db_path))
    assert shown.returncode == 0
    assert "2 retries, 2 after 429 (" in shown.stdout
    as_json = json.loads(_cli("show", session_id, "--db", str(db_path), "--json").stdout)
    assert as_json["session"]["retries"] == 2
    assert as_json["session"]["rate_limit_waits"] == 2
    db = open_database(db_path, create=False)
    assert db.execute("SELECT retries FROM sessions").fetchone()[0] == 2
    db.close()
