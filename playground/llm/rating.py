"""A rating's distribution, the three ways a server allows it (shared by the mind and the judge).

* ``logprobs``: the top-5 alternatives of the rating token, as the papers do.
* ``sampled``: without logprobs, G-Eval's own answer: the rating sampled N times at temperature 1
  (``n`` where the server takes it, else concurrent requests), the empirical distribution used.
* ``parsed``: the rating as written, with probability 1 (the cheap option).

The reasons come first, in a call without logprobs; the distribution is read from a short final
call that asks for the rating alone (``{"rating": N}``, about 6 tokens), so only those tokens are
scored or sampled: a server such as llama-cpp-python computes logprobs for every generated token
(~170 ms each for SmolLM2 on 2 cores), and the reasons are most of an evaluation's tokens.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Literal, get_args

from pydantic import BaseModel, Field, create_model

from playground import errors, settings
from playground.llm.client import ChatClient

#: A rating method as resolved for one server (``auto`` becomes one of these).
Method = Literal["logprobs", "sampled", "parsed"]
METHODS: tuple[settings.RatingMethod, ...] = get_args(settings.RatingMethod)
_RESOLVED: dict[str, Method] = {m: m for m in get_args(Method)}
#: Room for ``{"rating": 4}`` and the whitespace some servers add.
RATING_TOKENS = 16


def resolve(client: ChatClient, wanted: str) -> Method:
    """The method to use with this client's server: ``auto`` is logprobs where the server gives
    them, else sampled; logprobs asked of a server that refuses them become sampled."""
    logprobs = client.profile.logprobs
    if wanted == "auto":
        return "logprobs" if logprobs is not False else "sampled"
    if wanted == "logprobs" and logprobs is False:
        return "sampled"
    method = _RESOLVED.get(wanted)
    if method is None:
        raise errors.SettingsError(f"rating method: {wanted!r} is not one of {', '.join(METHODS)}")
    return method


def distribution_from_alternatives(
    top: list[tuple[str, float]], low: int, high: int
) -> dict[int, float] | None:
    """The distribution over ``low..high`` from a rating token's alternatives (``"4"`` and
    ``" 4"`` merged, other tokens left out, the rest renormalised); None without a rating."""
    probs: dict[int, float] = {}
    for token, logprob in top:
        m = re.match(r'\s*"?(\d)(?![0-9])', token)
        if m and low <= int(m.group(1)) <= high:
            r = int(m.group(1))
            probs[r] = probs.get(r, 0.0) + math.exp(logprob)
    total = sum(probs.values())
    if total <= 0:
        return None
    return {r: probs.get(r, 0.0) / total for r in range(low, high + 1)}


@functools.lru_cache(maxsize=8)
def rating_schema(low: int, high: int) -> type[BaseModel]:
    """``{"rating": <low..high>}`` as a pydantic model."""
    model: type[BaseModel] = create_model("RatingOut", rating=(int, Field(ge=low, le=high)))
    return model


async def final_distribution(
    client: ChatClient,
    label: str,
    messages: list[dict[str, str]],
    answer: str,
    method: Method,
    *,
    samples: int = 20,
    low: int = 1,
    high: int = 5,
    subject: str = "your rating",
    alternatives: int = 20,
) -> tuple[dict[int, float], Method, int | None] | None:
    """Ask for the rating alone after ``answer`` (the reasons and rating the model gave) and read
    its distribution by ``method``: ``(distribution, method used, samples read)``, or None when
    nothing could be read (the caller keeps the parsed rating). ``parsed`` asks nothing.

    The answer asked for is ``{"rating": N}``: a handful of tokens, the digit among them. A bare
    digit in plain text reads worse: small models open with ``{"`` and the first token's
    alternatives then hold one digit at most (SmolLM2-135M: always "1"). ``alternatives`` top
    logprobs are asked for the rating token (20: the most OpenAI, vLLM and Ollama give): a weak
    model's top 5 at that point are mostly quotes and brackets, and the digits left out of them
    are unknown, not improbable. The digit written always counts with its own logprob.
    """
    if method == "parsed":
        return None
    schema = rating_schema(low, high)
    follow = [
        *messages,
        {"role": "assistant", "content": answer[:4000]},
        {
            "role": "user",
            "content": f"Now {subject} alone, a whole number from {low} to {high}, as a JSON"
            ' object with the one field "rating".',
        },
    ]
    if method == "logprobs":
        try:
            res = await client.chat_json(
                f"{label} rating",
                follow,
                schema,
                logprobs=True,
                max_tokens=RATING_TOKENS,
                top_logprobs=alternatives,
            )
        except errors.LLMOutputError:
            return None
        alts = res.rating_alternatives()
        dist = distribution_from_alternatives(alts[0], low, high) if alts else None
        if dist is not None:
            return dist, "logprobs", None
        # No logprobs came back after all: sample instead (the profile now knows).
    got = await client.sample_json(
        f"{label} rating", follow, schema, samples=samples, max_tokens=RATING_TOKENS
    )
    ratings = [int(getattr(r, "rating")) for r in got]  # noqa: B009 - a dynamic model
    if not ratings:
        return None
    return (
        {r: ratings.count(r) / len(ratings) for r in range(low, high + 1)},
        "sampled",
        len(ratings),
    )
