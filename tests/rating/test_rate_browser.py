"""A rater's page in a real browser (Debian's Chromium under Playwright), against a real server
on 127.0.0.1 and a real SQLite plan.

The whole flow: the conversation typed out, a turn marked with a comment, a reload mid-
conversation that resumes where it left off (mark included), "Show all", the seven statements
only once everything was shown, the next assignment, a pairwise choice whose reason is
required, and the completion code. Every frame the page receives is a protocol frame carrying
no condition, engine, model, origin or session id, and hostile text stays text.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from playground.rating.web import protocol
from playground.storage import open_database
from testbed.raters import forbidden, live_raters, make_plan
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio

XSS = '<img src=x onerror="window.__pwned=1">'


async def _open(browser: Any, link: str) -> tuple[Any, list[str], list[dict[str, Any]]]:
    context = await browser.new_context(viewport={"width": 1100, "height": 800})
    page = await context.new_page()
    errors: list[str] = []
    frames: list[dict[str, Any]] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: frames.append(json.loads(payload))),
    )
    await page.goto(link)
    await page.wait_for_selector("#status:has-text('Connected')")
    return page, errors, frames


async def _answer_statements(page: Any) -> None:
    for i, row in enumerate(await page.query_selector_all(".statement")):
        await (await row.query_selector(f"input[value='{1 + i % 7}']")).check()


async def _stored(path: Path, sql: str, row: tuple[Any, ...]) -> None:
    """Wait (up to 10 s) until the database holds ``row`` as the first row of ``sql``."""
    async with asyncio.timeout(10):
        while True:
            db = open_database(path)
            try:
                got = db.execute(sql).fetchone()
            finally:
                db.close()
            if got is not None and tuple(got) == row:
                return
            await asyncio.sleep(0.05)


def _check_frames(frames: list[dict[str, Any]], secret: list[str]) -> None:
    assert frames
    for frame in frames:
        protocol.server_frame.validate_python(frame)
        text = json.dumps(frame, ensure_ascii=False)
        assert not [s for s in secret if s in text], frame


async def test_a_rater_reads_marks_reloads_resumes_rates_and_gets_a_code(rater_db: Any) -> None:
    path, ids = rater_db
    db = open_database(path)
    with db.conn:  # hostile text in a message stays text on the page
        db.execute(
            "UPDATE messages SET text = ? WHERE (session_id, id) IN"
            " (SELECT session_id, MIN(id) FROM messages GROUP BY session_id)",
            [XSS],
        )
    db.close()
    plan_id = make_plan(path, "conversation", ["R-ANN"], 2, ids)
    secret = forbidden(path)
    async with live_raters(path, plan_id, cps=40) as server, chromium() as browser:
        link = server.rater_links()[0][1]
        page, errors, frames = await _open(browser, link)
        assert await page.text_content("#position") == "1 of 2"
        await page.wait_for_selector(".msg >> nth=1")  # the second message is being typed
        assert await page.is_hidden("#statements")
        first = page.locator(".msg").first
        await first.locator(".flag").click()
        await first.locator(".comment").fill("too quick")
        await first.locator(".comment").press("Enter")
        typed_before = await page.locator(".msg").count()
        assert typed_before < len(frames[1]["conversations"][0]["lines"])
        await _stored(path, "SELECT comment FROM turn_marks", ("too quick",))
        # The reload, mid-conversation: what was shown is back at once, the mark too.
        await page.reload()
        await page.wait_for_selector("#status:has-text('Connected')")
        await page.wait_for_selector(f".msg >> nth={typed_before - 1}")
        first = page.locator(".msg").first
        assert await first.get_attribute("class") == "msg marked"
        assert await first.locator(".comment").input_value() == "too quick"
        assert await page.is_hidden("#statements")
        assert await first.locator(".text").text_content() == XSS  # shown as text
        await page.click(".show-all")
        await page.wait_for_selector("#statements:not([hidden])")
        lines = [f for f in frames if f["kind"] == "task"][-1]["conversations"][0]["lines"]
        assert await page.locator(".msg").count() == len(lines)
        assert await page.locator("#submit-ratings").is_disabled()
        await _answer_statements(page)
        await page.click("#submit-ratings")
        await page.wait_for_selector("#position:has-text('2 of 2')")
        await page.click(".show-all")
        await _answer_statements(page)
        await page.click("#submit-ratings")
        await page.wait_for_selector("#finished:not([hidden])")
        code = await page.text_content("#code")
        assert await page.is_hidden("#speed")  # nothing left to type out
        assert await page.evaluate("window.__pwned") is None
        assert errors == []
        _check_frames(frames, secret)
    db = open_database(path)
    marks = db.execute("SELECT rater, comment FROM turn_marks").fetchall()
    ratings = db.execute("SELECT COUNT(*), COUNT(DISTINCT session_id) FROM ratings").fetchone()
    stored = db.execute("SELECT code FROM rater_links WHERE rater = 'R-ANN'").fetchone()[0]
    db.close()
    assert [tuple(m) for m in marks] == [("R-ANN", "too quick")]
    assert tuple(ratings) == (14, 2)
    assert code == stored


async def test_a_pairwise_choice_needs_a_reason_and_a_second_tab_takes_over(rater_db: Any) -> None:
    path, ids = rater_db
    plan_id = make_plan(path, "pairwise", ["R-BEN"], 1, ids)
    secret = forbidden(path)
    async with live_raters(path, plan_id, cps=200) as server, chromium() as browser:
        link = server.rater_links()[0][1]
        page, errors, frames = await _open(browser, link)
        assert await page.locator(".conversation h2").all_text_contents() == [
            "Conversation A",
            "Conversation B",
        ]
        assert await page.is_hidden("#choice")
        for button in await page.query_selector_all(".show-all"):
            await button.click()
        await page.wait_for_selector("#choice:not([hidden])")
        await page.check("input[name='choice'][value='B']")
        await page.click("#submit-choice")
        assert "a reason is required" in (await page.text_content("#error") or "")
        # The same link in a second tab: it goes on, the first is told why it stops.
        other, other_errors, _ = await _open(browser, link)
        await page.wait_for_selector("#stopped:not([hidden])")
        assert "another tab" in (await page.text_content("#stopped-text") or "")
        for button in await other.query_selector_all(".show-all"):
            if await button.is_enabled():
                await button.click()
        await other.wait_for_selector("#choice:not([hidden])")
        await other.check("input[name='choice'][value='A']")
        await other.fill("#reason", "the replies followed on naturally")
        await other.click("#submit-choice")
        await other.wait_for_selector("#finished:not([hidden])")
        assert errors == []
        assert other_errors == []
        _check_frames(frames, secret)
    db = open_database(path)
    row = db.execute("SELECT first_id, chosen_id, reason FROM preferences").fetchone()
    db.close()
    assert row[0] == row[1]
    assert row[2] == "the replies followed on naturally"


async def test_a_worker_back_from_the_platforms_site_is_the_same_rater(rater_db: Any) -> None:
    """The open link clicked again from another site (the platform's page): the browser sends
    the open link's cookie on that cross-site navigation, so the worker resumes as before."""
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["R-ONE", "R-TWO"], 1, ids)
    async with live_raters(path, plan_id) as server, chromium() as browser:
        open_link = server.open_link()
        page, errors, frames = await _open(browser, open_link)
        first = page.url
        assert frames[0]["rater"] == "R-ONE"
        # Another site: a page of localhost (another site than 127.0.0.1) holding the link.
        origin = open_link.replace("127.0.0.1", "localhost").split("/open/")[0]
        await page.goto(f"{origin}/static/style.css")
        await page.set_content(f'<a id="go" href="{open_link}">Start the task</a>')
        await page.click("#go")
        await page.wait_for_selector("#status:has-text('Connected')")
        assert page.url == first
        assert [f["rater"] for f in frames if f["kind"] == "welcome"] == ["R-ONE", "R-ONE"]
        # The stand-in site has no favicon (a 404 in the console); nothing else may go wrong.
        assert [e for e in errors if "Failed to load resource" not in e] == []
