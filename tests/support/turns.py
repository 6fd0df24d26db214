"""A scripted responder for turn-taking tests: who is addressed, and how keen each agent is.

The loopback server answers every other call generically; this one makes the calls that decide
the floor predictable, as a real model following the prompts would:

- turn type: the latest message hands the turn to the name it starts with ("Ben, ..."), else
  the turn is open;
- evaluation: each agent rates every thought with its scripted rating (per-thought or batched),
  and gives it again when the rating alone is asked for (sampled: every sample the same);
- articulation: a plain statement that addresses nobody;
- thoughts: one System-1 and two System-2 thoughts, as asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from testbed.responders import faithful_responder

_LINE = re.compile(r"^\[message:\d+\] [^:]+: (.*)$", flags=re.M)


def scripted(
    ratings: Mapping[str, int], default: int = 1
) -> Callable[[dict[str, Any]], str | None]:
    """A responder rating every thought of agent ``name`` at ``ratings[name]`` (else ``default``)."""

    def respond(body: dict[str, Any]) -> str | None:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        system = body["messages"][0]["content"]
        prompt = body["messages"][-1]["content"]
        agent = re.match(r"You are (\w+)", system)
        rating = ratings.get(agent.group(1), default) if agent else default
        reasons = {"reasons_for": ["it fits", "it is new"], "reasons_against": ["wait", "no"]}
        if name == "TurnTypeOut":
            latest = _LINE.findall(prompt.split("Last messages:")[-1])[-1]
            addressed = re.match(r"(\w+), ", latest)
            return json.dumps({"next_speaker": addressed.group(1) if addressed else "anyone"})
        if name == "EvaluationOut":
            return json.dumps({**reasons, "rating": rating})
        if name == "RatingOut":  # the rating alone, asked after the reasons (sampled here)
            return json.dumps({"rating": rating})
        if name == "EvaluationsOut":
            ids = re.findall(r"^\[(\d+)\] ", prompt.split("Thoughts:")[-1], flags=re.M)
            items = [{"thought_id": int(i), **reasons, "rating": rating} for i in ids]
            return json.dumps({"evaluations": items})
        if name is None and "Write your next chat message" in prompt:
            return "I spent the weekend repairing an old bicycle, which was fun."
        return faithful_responder(body)

    return respond
