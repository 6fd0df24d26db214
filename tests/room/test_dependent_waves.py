"""How many dependent rounds of model calls a posted message takes, counted by the server.

The stand-in adds the same latency to every call and logs when each arrived; calls that arrive
together form a wave, and a wave that starts after the previous one answered depends on it. With
the rating read from the evaluation answer, a message is four waves whatever the number of agents:
interpretation ∥ turn type → thoughts ∥ retained re-scores → each thought's evaluation →
articulation. No wave waits for another agent, and no agent for another's thoughts.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from playground import events
from playground.settings import PRESETS
from testbed.llm_server import FakeLLMServer
from testbed.llm_server_async import serve
from tests.conftest import server_settings
from tests.support.rooms import build, library
from tests.support.turns import scripted

pytestmark = pytest.mark.asyncio
LATENCY = 0.4


def waves(rows: list[dict[str, Any]]) -> int:
    """The longest chain of calls each sent after the one before it was answered: the dependent
    waves a message took. (Calls that merely arrive late, behind the client's own work, are not
    counted deeper unless they arrive after a whole call's latency.)"""
    depth: list[int] = []
    ordered = sorted(rows, key=lambda r: r["start"])
    for i, r in enumerate(ordered):
        before = [depth[j] for j, p in enumerate(ordered[:i]) if p["end"] <= r["start"]]
        depth.append(1 + max(before, default=0))
    return max(depth, default=0)


@pytest.mark.parametrize("agents", [4, 8])
async def test_a_message_is_four_dependent_waves_with_4_or_8_agents(
    embedder: Any, agents: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client takes the stand-in for a hosted API (as at api.openai.com): default settings
    # then read each rating from its evaluation answer.
    monkeypatch.setattr("playground.llm.transport.is_local", lambda url: False)
    fake = FakeLLMServer()
    fake.set_responder(scripted({}, default=5))  # everyone keen: an agent speaks
    log = io.StringIO()
    server = await serve(fake, LATENCY, log=log)
    port = server.sockets[0].getsockname()[1]
    fake._httpd = type("Bound", (), {"server_address": ("127.0.0.1", port)})()
    try:
        settings = server_settings(fake, seed=4, llm_concurrency="64").model_copy(
            update={"proactivity": PRESETS["non-stop-chatter"]}
        )
        room, _, seen = await build(settings, embedder, library(agents))
        room.add_human("Zoe")
        await room.post_human_message("Zoe", "What did you all do last weekend?")
        await room.embeddings_ready()
        log.seek(0)
        log.truncate()
        posted = await room.step_once()
        rows = [json.loads(line) for line in log.getvalue().splitlines()]
    finally:
        fake._httpd = None
        server.close()
    assert posted is not None
    assert posted.kind == "ai"
    # The room's own record agrees: at most one call per wave on its critical path (on a busy
    # machine the client's own work, embedding the thoughts, may be on it instead of a call).
    timed = [e for e in seen if isinstance(e, events.TriggerTimed)][-1]
    path = [s for s in timed.stages if s.critical]
    assert sum(s.calls for s in path) <= 4, [(s.stage, s.calls) for s in path]
    assert [s.stage for s in path][-2:] == ["articulation", "post"]
    assert path[0].stage in ("interpretation", "turn type")
    assert waves(rows) == 4, sorted(
        (round(r["start"] - rows[0]["start"], 2), r["kind"]) for r in rows
    )
