"""The raters' page as raters see it, in a real browser (Debian's Chromium under Playwright),
against a real server on 127.0.0.1 and a real SQLite plan: a conversation longer than the
screen, on a laptop and on a phone.

What the screenshots of scripts/rater_screenshots.py showed: the message being typed went on
below the bottom of the list, out of sight (the list did not follow it, and after "Show all"
the last message was cut off); and on a phone the whole page scrolled, the conversation's
"Show all" and progress with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from playground.storage import open_database
from testbed.raters import live_raters, make_plan
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio

#: The last message is in sight within its list, and the list within the window.
IN_SIGHT = """() => {
  const list = document.querySelector('.messages');
  const last = [...list.querySelectorAll('.msg')].pop().getBoundingClientRect();
  const box = list.getBoundingClientRect();
  return last.bottom <= box.bottom + 1 && last.top >= box.top - 1
    && box.bottom <= window.innerHeight + 1;
}"""


def _lengthen(path: Path, copies: int) -> None:
    """Each session's messages repeated ``copies`` more times (new ids): longer than a screen."""
    db = open_database(path)
    cols = [c.name for c in db["messages"].columns]
    others = ", ".join(c for c in cols if c != "id")
    with db.conn:
        for k in range(1, copies + 1):
            db.execute(
                f"INSERT INTO messages (id, {others}) SELECT id + ?, {others} FROM messages"
                " WHERE id < 1000",
                [1000 * k],
            )
    db.close()


async def _within(page: Any, selector: str, height: int) -> bool:
    """Whether ``selector`` is wholly within the window's ``height``."""
    box = await page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


@contextlib.asynccontextmanager
async def _reading(
    rater_db: Any, copies: int, width: int, height: int
) -> AsyncIterator[tuple[Any, list[str]]]:
    """A one-rater plan over sessions lengthened ``copies`` times, served; its page open in a
    window of ``width`` × ``height``, and the page's errors."""
    path, ids = rater_db
    _lengthen(path, copies)
    plan_id = make_plan(path, "conversation", ["R-ANN"], 1, ids)
    async with live_raters(path, plan_id, cps=400) as server, chromium() as browser:
        context = await browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(server.rater_links()[0][1])
        await page.wait_for_selector("#status:has-text('Connected')")
        yield page, errors


async def test_the_list_follows_the_message_being_typed_and_ends_on_the_last(
    rater_db: Any,
) -> None:
    async with _reading(rater_db, 3, 1100, 600) as (page, errors):
        await page.wait_for_selector(".msg >> nth=12")
        assert await page.evaluate(IN_SIGHT)  # being typed: in sight
        # A rater who scrolls up to read again is left there while typing goes on, even when the
        # typing moves on before the page has heard of the scroll (held back here: a busy machine).
        await page.evaluate(
            "(l => { l.addEventListener('scroll', e => e.stopImmediatePropagation(),"
            " {capture: true, once: true}); l.scrollTop = 0; })"
            "(document.querySelector('.messages'))"
        )
        count = await page.locator(".msg").count()
        await page.wait_for_selector(f".msg >> nth={count + 1}")
        assert await page.evaluate("document.querySelector('.messages').scrollTop") == 0
        await page.click(".show-all")
        await page.wait_for_selector("#statements:not([hidden])")
        assert await page.evaluate(IN_SIGHT)  # "Show all" ends on the last message
        # What the rater writes is in the page's own type, not the browser's small monospace.
        fonts = await page.evaluate(
            "['body', '.comment', '#reason'].map(s => {"
            " const c = getComputedStyle(document.querySelector(s));"
            " return c.fontFamily + ' ' + c.fontSize; })"
        )
        assert fonts == [fonts[0]] * 3, fonts
        assert errors == []


async def test_on_a_phone_the_header_and_show_all_stay_while_the_list_scrolls(
    rater_db: Any,
) -> None:
    async with _reading(rater_db, 5, 390, 844) as (page, errors):
        await page.wait_for_selector(".msg >> nth=20")
        assert await page.evaluate(IN_SIGHT)
        # The page itself does not scroll: the list does, inside one screen.
        sizes = await page.evaluate(
            "[document.scrollingElement.scrollHeight, window.innerHeight,"
            " document.querySelector('.messages').scrollHeight,"
            " document.querySelector('.messages').clientHeight]"
        )
        assert sizes[0] <= sizes[1] + 1, sizes
        assert sizes[2] > sizes[3] >= 200, sizes
        for selector in ("header", ".show-all", ".progress", "#speed"):
            assert await _within(page, selector, 844), selector
        await page.click(".show-all")
        await page.wait_for_selector("#statements:not([hidden])")
        # Answering: the page scrolls again, to the statements and the submit button.
        await page.locator("#submit-ratings").scroll_into_view_if_needed()
        assert await _within(page, "#submit-ratings", 844)
        assert errors == []
