"""A user-study plan run for real: three conversations over real sockets on 127.0.0.1, the
review and the questionnaire after each, the final questions, counter-balancing, and resuming a
plan that was stopped while people were talking or reviewing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from playground import personas
from playground.rating.user_study import STYLES, USER_STUDY_METRICS
from playground.study.plan import ORDERS, assignments
from playground.study.server import CLOSE_NEXT
from testbed.study import Browser, live_plan, open_browser

ALL_SEVEN = {m.key: 7 for m in USER_STUDY_METRICS}


def test_six_groups_see_every_order_of_the_conditions_once():
    library = personas.load_personas()
    orders = []
    for group in range(6):
        steps = assignments(library, group, seed=1)
        assert {s["condition"] for s in steps} == {s.key for s in STYLES}
        assert len({s["persona"] for s in steps}) == 3
        assert [s["position"] for s in steps] == [1, 2, 3]
        orders.append(tuple(s["condition"] for s in steps))
    assert len(set(orders)) == 6 == len(ORDERS)
    assert assignments(library, 6, seed=1) == assignments(library, 6, seed=1)
    assert [s["condition"] for s in assignments(library, 6, seed=1)] == list(orders[0])


async def _phase(browser: Browser, phase: str) -> dict[str, Any]:
    return await browser.until(lambda p: p["type"] == "phase" and p["phase"] == phase, 60)


async def _next_conversation(browser: Browser, link: str, origin: str) -> tuple[Browser, dict]:
    """The server closes the page with CLOSE_NEXT; the page reconnects from the start."""
    frame = await asyncio.wait_for(browser.ws.receive(), 60)
    while frame.type.name == "TEXT":
        frame = await asyncio.wait_for(browser.ws.receive(), 60)
    assert (frame.type.name, frame.data) == ("CLOSE", CLOSE_NEXT)
    await browser.session.close()
    return await open_browser(link, origin)


@pytest.mark.asyncio
async def test_a_plan_runs_three_conversations_with_reviews_ratings_and_final_answers(
    tmp_path, embedder
):
    async with live_plan(tmp_path, embedder, humans=2) as plan:
        steps = plan.rows(
            "SELECT position, condition, persona FROM plan_steps WHERE plan_id = ? ORDER BY 1",
            (plan.plan_id,),
        )
        agents = [s[2] for s in steps]
        ivy, hello = await open_browser(plan.links[0], plan.origin)
        assert hello["phase"] == "talk"
        assert hello["study"] == {
            "position": 1,
            "of": 3,
            "topic": "hobbies and interests",
            "agent": agents[0],
        }
        assert hello["questionnaire"]["agent"] == agents[0]
        assert hello["final"] is None
        assert hello["thoughts_shown"] is False
        # Not the name of this conversation's agent (a later one's is free: test_names.py).
        await ivy.send(type="join", name=agents[0])
        error = await ivy.until(lambda p: p["type"] == "error")
        assert error["message"] == f"Someone in this study is already called {agents[0]}."
        await ivy.send(type="join", name="Ivy")
        await ivy.until(lambda p: p["type"] == "you")
        kai, _ = await open_browser(plan.links[1], plan.origin)
        await kai.send(type="join", name="ivy")  # nor another person's
        assert "already called" in (await kai.until(lambda p: p["type"] == "error"))["message"]
        await kai.send(type="join", name="Kai")
        await ivy.send(type="say", text="I love climbing on weekends.")
        await ivy.until(lambda p: p["type"] == "message" and p["message"]["speaker"] == "Ivy")
        # The review is closed while the conversation is on.
        await ivy.send(type="retro", message_id=1, thinking="x")
        error = await ivy.until(lambda p: p["type"] == "error")
        assert "when the conversation is over" in error["message"]

        await ivy.until(lambda p: p["type"] == "ended", 60)
        await _phase(ivy, "review")
        own = await _retro(ivy, kai)
        assert own["entry"]["wanted"] == "yes"
        # A rating with a statement missing names it; nothing is saved.
        partial = {k: v for k, v in ALL_SEVEN.items() if k != "response_timing"}
        await ivy.send(type="questionnaire", answers=partial)
        error = await ivy.until(lambda p: p["type"] == "error")
        assert "Response timing" in error["message"]
        assert plan.rows("SELECT COUNT(*) FROM ratings WHERE instrument = 'participant'") == [(0,)]
        for browser in (ivy, kai):
            await browser.send(type="questionnaire", answers=ALL_SEVEN)
            await browser.until(lambda p: p["type"] == "answered")
            await _phase(browser, "wait")

        for position in (2, 3):
            ivy, hello = await _next_conversation(ivy, plan.links[0], plan.origin)
            kai, _ = await _next_conversation(kai, plan.links[1], plan.origin)
            assert hello["study"]["position"] == position
            assert hello["study"]["agent"] == agents[position - 1]
            assert hello["you"] == "Ivy"
            assert hello["phase"] == "talk"
            assert {p["name"] for p in hello["participants"]} >= {"Ivy", "Kai"}
            assert hello["messages"] == [] or hello["messages"][0]["id"] == 1
            for browser in (ivy, kai):
                await browser.until(lambda p: p["type"] == "ended", 60)
                await _phase(browser, "review")
                await browser.send(type="questionnaire", answers=ALL_SEVEN)
                last = await browser.until(lambda p: p["type"] == "phase", 30)
                assert last["phase"] == ("wait" if position == 2 else "final")
        final = last["final"]
        assert final["agents"] == agents
        assert [s["key"] for s in final["styles"]] == [s.key for s in STYLES]
        truth = {s[2]: s[1] for s in steps}
        await kai.send(type="final", answers={f"match:{agents[0]}": truth[agents[0]]})
        error = await kai.until(lambda p: p["type"] == "error")
        assert agents[1] in error["message"]
        for browser in (ivy, kai):
            answers = {f"match:{a}": truth[a] for a in agents} | {"favourite": agents[1]}
            await browser.send(type="final", answers=answers)
            await _phase(browser, "done")
        await asyncio.wait_for(plan.task, 30)

    assert plan.rows("SELECT status FROM study_plans") == [("done",)]
    done = plan.rows("SELECT status, session_id FROM plan_steps ORDER BY position")
    assert [d[0] for d in done] == ["done"] * 3
    assert all(d[1] for d in done)
    statuses = plan.rows("SELECT status FROM sessions ORDER BY created_at")
    assert statuses == [("finished",)] * 3
    assert plan.rows("SELECT COUNT(*) FROM ratings WHERE instrument = 'participant'") == [
        (2 * 10 * 3,)
    ]
    assert plan.rows("SELECT COUNT(*) FROM plan_answers") == [(2 * 4,)]
    assert plan.rows("SELECT author, message_id, wanted FROM retrospective") == [("Ivy", 1, "yes")]
    # Each conversation's people are its participants, remote.
    for (sid,) in plan.rows("SELECT session_id FROM plan_steps"):
        people = plan.rows(
            "SELECT name FROM participants WHERE session_id = ? AND remote = 1 ORDER BY name",
            (sid,),
        )
        assert people == [("Ivy",), ("Kai",)]


async def _retro(ivy: Browser, kai: Browser) -> dict[str, Any]:
    """Ivy reviews her message; the saved entry comes back to her only."""
    await ivy.send(
        type="retro",
        message_id=1,
        thinking="whether anyone else climbs",
        wanted="yes",
        why="to find a partner",
        timing="immediately",
    )
    own = await ivy.until(lambda p: p["type"] == "retro")
    await ivy.send(type="retro", message_id=1, timing="after", after_message_id=1)
    error = await ivy.until(lambda p: p["type"] == "error")
    assert "later one" in error["message"]
    await kai.send(type="typing")  # a frame that makes the server answer nothing to kai
    await asyncio.sleep(0.3)
    assert not any(p["type"] == "retro" for p in kai.received)
    return own


@pytest.mark.asyncio
async def test_a_stopped_plan_resumes_with_the_same_links(tmp_path, embedder):
    async with live_plan(tmp_path, embedder) as plan:
        first_links = plan.links
        ivy, _ = await open_browser(plan.links[0], plan.origin)
        await ivy.send(type="join", name="Ivy")
        await ivy.until(lambda p: p["type"] == "you")
        # Stopped while talking.
    steps = plan.rows("SELECT status, session_id FROM plan_steps ORDER BY position")
    assert steps[0][0] == "talking"
    interrupted = steps[0][1]
    assert plan.rows("SELECT status FROM sessions WHERE id = ?", (interrupted,)) == [
        ("interrupted",)
    ]

    async with live_plan(tmp_path, embedder, plan_id=plan.plan_id) as again:
        assert [link.rsplit("/", 1)[1] for link in again.links] == [
            link.rsplit("/", 1)[1] for link in first_links
        ]
        ivy, hello = await open_browser(again.links[0], again.origin)
        assert hello["you"] == "Ivy"
        assert hello["phase"] == "talk"
        await ivy.until(lambda p: p["type"] == "ended", 60)
        await _phase(ivy, "review")
        # Stopped while reviewing.
    steps = again.rows("SELECT status, session_id FROM plan_steps ORDER BY position")
    assert steps[0][0] == "reviewing"
    assert steps[0][1] != interrupted
    reviewed = steps[0][1]

    async with live_plan(tmp_path, embedder, plan_id=plan.plan_id) as third:
        ivy, hello = await open_browser(third.links[0], third.origin)
        assert hello["phase"] == "review"
        assert hello["study"]["position"] == 1
        await ivy.send(type="questionnaire", answers=ALL_SEVEN)
        await _phase(ivy, "wait")
        ivy, hello = await _next_conversation(ivy, third.links[0], third.origin)
        assert hello["study"]["position"] == 2
    assert third.rows("SELECT DISTINCT session_id FROM ratings") == [(reviewed,)]
