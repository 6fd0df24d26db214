"""What a local server is spared: calls sent in the order of the prefix they share with the one
sent before it (the server reuses that prefix instead of evaluating it again)."""

from __future__ import annotations

import asyncio

import pytest

from playground.llm.limits import AdaptiveLimit, prompt_key


async def _granted(limit: AdaptiveLimit, first: str, waiting: list[str]) -> list[str]:
    """The order in which calls get the slot: ``first`` holds it while ``waiting`` ask for it, in
    that order; then it is freed."""
    order: list[str] = []
    release = asyncio.Event()

    async def call(key: str, hold: asyncio.Event | None = None) -> None:
        async with limit.slot(key):
            order.append(key)
            if hold is not None:
                await hold.wait()

    holder = asyncio.ensure_future(call(first, release))
    await asyncio.sleep(0)
    rest = [asyncio.ensure_future(call(k)) for k in waiting]
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(holder, *rest)
    return order


@pytest.mark.asyncio
async def test_a_freed_slot_goes_to_the_call_sharing_the_longest_prefix_with_the_last_one():
    limit = AdaptiveLimit(1, 1, adaptive=False, affinity=True)
    order = await _granted(
        limit,
        "agent A evaluates thought 1",
        ["agent B forms thoughts", "agent A forms thoughts", "agent A evaluates thought 2"],
    )
    assert order == [
        "agent A evaluates thought 1",
        "agent A evaluates thought 2",  # shares "agent A evaluates thought "
        "agent A forms thoughts",  # shares "agent A "
        "agent B forms thoughts",
    ]


@pytest.mark.asyncio
async def test_a_call_that_follows_from_the_answer_just_read_takes_the_slot_it_freed():
    limit = AdaptiveLimit(1, 1, adaptive=False, affinity=True)
    order: list[str] = []

    async def evaluation_then_rating() -> None:
        async with limit.slot("A: evaluate"):
            order.append("A: evaluate")
            await asyncio.sleep(0.01)
        async with limit.slot("A: evaluate, answer, now the rating"):  # no await in between
            order.append("A: rating")

    async def other() -> None:
        async with limit.slot("B: evaluate"):
            order.append("B: evaluate")

    first = asyncio.ensure_future(evaluation_then_rating())
    await asyncio.sleep(0)
    second = asyncio.ensure_future(other())  # waits for the slot, earlier than the rating
    await asyncio.gather(first, second)
    assert order == ["A: evaluate", "A: rating", "B: evaluate"]


@pytest.mark.asyncio
async def test_without_affinity_calls_go_in_the_order_they_asked():
    limit = AdaptiveLimit(1, 1, adaptive=False)
    order = await _granted(limit, "x 1", ["y", "x 2"])
    assert order == ["x 1", "y", "x 2"]


def test_prompt_keys_keep_the_prefixes_of_the_prompts():
    a = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    follow = [*a, {"role": "assistant", "content": "A"}, {"role": "user", "content": "Now"}]
    assert prompt_key(follow).startswith(prompt_key(a))
