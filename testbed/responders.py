"""Responders for the fake server that answer like an instruction-following model."""

from __future__ import annotations

import json
import re


def _systems_asked(body: dict, prompt: str) -> list[int]:
    """The systems of the thoughts a forming request asks for, as many as its schema says."""
    schema = body["response_format"]["json_schema"]["schema"]
    n = schema["properties"]["thoughts"].get("maxItems", 3)
    if "System-2 thought" not in prompt:
        return [1] * n
    if "System-1 thought" not in prompt:
        return [2] * n
    return [1, *([2] * (n - 1))]


def _rating_given(body: dict) -> int:
    """The rating the model gave in its evaluation answer (the assistant message before the
    request for the rating alone); for a batched answer, the one of the thought asked about."""
    answer = next(
        (m["content"] for m in reversed(body["messages"]) if m.get("role") == "assistant"), ""
    )
    asked = re.search(r"thought \[(\d+)\]", body["messages"][-1]["content"])
    try:
        data = json.loads(answer)
    except ValueError:
        return 3
    if asked and isinstance(data.get("evaluations"), list):
        for e in data["evaluations"]:
            if str(e.get("thought_id")) == asked.group(1):
                return int(e.get("rating", 3))
    return int(data.get("rating", 3)) if isinstance(data.get("rating"), int) else 3


def faithful_responder(body: dict, rating: int | None = None) -> str | None:
    """Answer thought and evaluation calls with exactly what was asked, as a real model would.

    The generic fake server picks array lengths and labels arbitrarily (2 items each); a real model
    returns the thoughts asked for and one evaluation per listed thought, and the benchmark
    should see the call pattern a real run would. Other calls get the server's generic answers.
    """
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    prompt = body["messages"][-1]["content"]
    h = sum(map(ord, prompt))
    if name == "ThoughtsOut":
        words = [w for w in prompt.split() if w.isalpha() and len(w) > 4][-12:] or ["chat"]
        items = [
            {
                "system": s,
                "text": f"I could say something about {words[(h + i) % len(words)]} here.",
                "stimuli": [],
            }
            for i, s in enumerate(_systems_asked(body, prompt))
        ]
        return json.dumps({"thoughts": items})
    if name == "EvaluationsOut":
        ids = [
            int(m) for m in re.findall(r"^\[(\d+)\] ", prompt.split("Thoughts:")[-1], flags=re.M)
        ]
        items = [
            {
                "thought_id": i,
                "reasons_for": ["it fits", "it is new"],
                "reasons_against": ["others may speak", "not urgent"],
                "rating": rating or 2 + (h + i) % 4,
            }
            for i in ids
        ]
        return json.dumps({"evaluations": items})
    if name == "RatingOut":  # the rating alone, after the evaluation: the one it gave
        return json.dumps({"rating": rating or _rating_given(body)})
    if name == "EvaluationOut" and rating is not None:  # one thought per call (per-thought mode)
        return json.dumps(
            {
                "reasons_for": ["it fits", "it is new"],
                "reasons_against": ["others may speak", "not urgent"],
                "rating": rating,
            }
        )
    return None
