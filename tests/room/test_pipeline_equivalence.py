"""The trigger's pipeline changes when calls are made, never what they ask or what is recorded.

A scripted model (the loopback server, whose answers depend only on the request) gives the same
recording as the golden one made before the stages were pipelined (tests/data/
pipeline_golden.json): every event but times, and every request the server saw (its messages,
schema and logprobs flags, hashed), in any order. Regenerate only for a change meant to alter
what the agents see or record: ``PLAYGROUND_WRITE_GOLDEN=1 pytest tests/room/test_pipeline_equivalence.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from playground import events
from playground.room import loops
from testbed.llm_server import FakeLLMServer
from testbed.responders import faithful_responder
from tests.conftest import server_settings
from tests.support.rooms import build, library

pytestmark = pytest.mark.asyncio

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "pipeline_golden.json"
#: Fields that are times, or name the run rather than what happened in it (``seq`` counts the
#: usage events too, which are published as calls finish).
VOLATILE = {"seq", "at", "session_id", "posted_at", "decided_at", "created_at"}
#: Events made of times only (the trigger's stage timings), left out of the comparison.
TIMES_ONLY = (events.TriggerTimed,)


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in VOLATILE}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _request_key(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    asked = {
        "messages": body.get("messages"),
        "schema": (fmt.get("json_schema") or {}).get("name") if isinstance(fmt, dict) else None,
        "logprobs": body.get("logprobs"),
        "top_logprobs": body.get("top_logprobs"),
        "max_tokens": body.get("max_tokens"),
    }
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:16]


async def _record(embedder: Any, mode: str) -> dict[str, Any]:
    with FakeLLMServer() as srv:
        srv.set_responder(faithful_responder)
        settings = server_settings(
            srv,
            seed=3,
            max_turns=6,
            max_silent_steps=3,
            evaluation_mode=mode,
            rating_call="final",
            llm_concurrency="8",
        )
        room, _, seen = await build(settings, embedder, library(4))
        await loops.run_simulation(room, icebreaker="What did you do last weekend?")
        requests = [r for r in srv.requests if r.get("_path") == "/v1/chat/completions"]
        url = srv.base_url
    recorded = [
        json.loads(json.dumps(_strip(e.model_dump(mode="json"))).replace(url, "URL"))
        for e in seen
        if not isinstance(e, TIMES_ONLY) and not isinstance(e, events.UsageRecorded)
    ]
    usage = [e.usage.model_dump(mode="json") for e in seen if isinstance(e, events.UsageRecorded)]
    return {
        "events": recorded,
        "usage_calls": sum(u["calls"] for u in usage),
        "requests": sorted(Counter(_request_key(r) for r in requests).items()),
    }


@pytest.mark.parametrize("mode", ["per-thought", "batched"])
async def test_same_answers_give_the_same_recording(embedder: Any, mode: str) -> None:
    got = await _record(embedder, mode)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if os.environ.get("PLAYGROUND_WRITE_GOLDEN"):
        golden[mode] = got
        GOLDEN.write_text(json.dumps(golden, indent=0, sort_keys=True) + "\n")
    want = golden[mode]
    assert got["requests"] == [tuple(r) for r in want["requests"]], "the prompts sent changed"
    assert len(got["events"]) == len(want["events"])
    for i, (a, b) in enumerate(zip(got["events"], want["events"], strict=True)):
        assert a == b, f"event {i} differs"
    assert got["usage_calls"] == want["usage_calls"]
