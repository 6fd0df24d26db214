"""An utterance the room cannot use leaves its agent silent for the step; the session goes on.

A weak model's articulation can be empty or cut before its first sentence ends (SmolLM2-135M on
llama.cpp's server ran on through the prompt until the token limit). That once failed the whole
session; now the agent sits the step out, the error is recorded, and the run continues.
"""

from __future__ import annotations

from typing import Any

import pytest

from playground import events
from playground.room import loops
from playground.settings import PRESETS
from testbed.llm_server import FakeLLMServer
from tests.conftest import server_settings
from tests.support.rooms import build, library, of
from tests.support.turns import scripted

pytestmark = pytest.mark.asyncio


async def test_an_empty_articulation_is_a_silent_step_not_a_failed_session(embedder: Any) -> None:
    keen = scripted({"Ana": 5, "Ben": 5, "Chloe": 5})

    def respond(body: dict[str, Any]) -> str | None:
        if "Write your next chat message" in body["messages"][-1]["content"]:
            return ""  # the model said nothing usable
        return keen(body)

    with FakeLLMServer() as srv:
        srv.set_responder(respond)
        settings = server_settings(
            srv, seed=1, max_turns=4, max_silent_steps=2, llm_concurrency="8"
        ).model_copy(update={"proactivity": PRESETS["non-stop-chatter"]})
        room, _, seen = await build(settings, embedder, library(3))
        status = await loops.run_simulation(room, icebreaker="Hey!")
    assert status == "finished"
    assert len(room.messages) == 1  # only the icebreaker: nobody could word a message
    errors = [e for e in of(events.ErrorOccurred, seen) if e.where.endswith("articulation")]
    assert errors
    assert all("empty" in e.message for e in errors)
    finished = of(events.SessionFinished, seen)[-1]
    assert finished.status == "finished"
