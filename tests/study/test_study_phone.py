"""The participant's page on a phone, in a real browser (Debian's Chromium under Playwright).

A conversation longer than the screen (60 messages, saved and served by a real StudyServer
over real SQLite): at 360–430 px wide the header, the people and the composer stay in view
while only the message list scrolls, and new messages keep it at the bottom. The same page at
laptop sizes keeps its side-by-side layout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from testbed.study import Study, live_study, open_browser
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio

PHONES = [
    {"width": 390, "height": 844},
    {"width": 360, "height": 740},
    {"width": 430, "height": 932},
]
#: A 390×844 phone with its keyboard open: the page asks for the keyboard to shrink the
#: layout (interactive-widget=resizes-content), so this is the page's whole height then.
KEYBOARD = {"width": 390, "height": 450}
LAPTOPS = [{"width": 1024, "height": 700}, {"width": 1440, "height": 900}]
MESSAGES = 60

#: Where the page's fixed parts and its list are, as the browser lays them out.
LAYOUT_JS = """() => {
  const box = (selector) => {
    const r = document.querySelector(selector).getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};
  };
  const list = document.getElementById('messages');
  const people = document.getElementById('people').getBoundingClientRect();
  const names = [...document.querySelectorAll('#people-list li')].map((li) => {
    const r = li.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + Math.min(r.width / 2, 20), r.top + r.height / 2);
    return {
      text: li.textContent, top: r.top, bottom: r.bottom, left: r.left, right: r.right,
      inside: r.top >= people.top - 0.5 && r.bottom <= people.bottom + 0.5,
      seen: hit !== null && li.contains(hit),
      font: parseFloat(getComputedStyle(li).fontSize),
    };
  });
  const last = list.lastElementChild.getBoundingClientRect();
  const doc = document.scrollingElement;
  return {
    width: innerWidth, height: innerHeight,
    header: box('body > header'), people: box('#people'), chat: box('#chat'),
    composer: box('#composer'), send: box('#composer button'), list: box('#messages'), names,
    scrollHeight: list.scrollHeight, clientHeight: list.clientHeight, scrollTop: list.scrollTop,
    lastBottom: last.bottom, pageScroll: doc.scrollHeight - doc.clientHeight,
  };
}"""


CARD_JS = """() => {
  const r = document.getElementById('card').getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height};
}"""


async def _layout(page: Any) -> dict[str, Any]:
    return dict(await page.evaluate(LAYOUT_JS))


def _in_view(box: dict[str, float], layout: dict[str, Any], what: str) -> None:
    assert box["height"] > 0, f"{what} is not shown"
    assert box["top"] >= -0.5, f"{what} starts above the screen: {box}"
    assert box["bottom"] <= layout["height"] + 0.5, f"{what} ends below the screen: {box}"
    assert box["left"] >= -0.5, f"{what} starts left of the screen: {box}"
    assert box["right"] <= layout["width"] + 0.5, f"{what} ends right of the screen: {box}"


def _at_bottom(layout: dict[str, Any]) -> bool:
    end = layout["scrollTop"] + layout["clientHeight"]
    return layout["scrollHeight"] - end < 2 and layout["lastBottom"] <= layout["list"]["bottom"] + 1


def _check_fixed_parts(layout: dict[str, Any], people: list[str]) -> None:
    """Header, people and composer on screen; every name whole, readable and not covered."""
    for what in ("header", "people", "composer", "send", "list"):
        _in_view(layout[what], layout, what)
    assert layout["people"]["height"] >= 24, f"the people bar shrank: {layout['people']}"
    shown = {n["text"].split(" ")[0].split("·")[0].strip(): n for n in layout["names"]}
    assert set(people) <= set(shown), (people, layout["names"])
    for name in people:
        item = shown[name]
        assert item["inside"], f"{name} is cut off by the people bar: {item} {layout['people']}"
        assert item["seen"], f"{name} is covered or off screen: {item}"
        assert item["font"] >= 13, f"{name} is too small to read: {item}"
    # Only the list scrolls: the page itself does not.
    assert layout["pageScroll"] <= 1, f"the page scrolls by {layout['pageScroll']} px"
    assert layout["scrollHeight"] > layout["clientHeight"], "the list does not scroll"


async def _post_until(study: Study, page: Any, speaker: str, text: str) -> None:
    await study.room.post_human_message(speaker, text)
    await page.wait_for_selector(f".msg .text:text-is('{text}')")


@contextlib.asynccontextmanager
async def long_conversation(
    tmp_path: Path,
    embedder: Any,
    viewport: dict[str, int],
    *,
    agents: int = 1,
    show_thoughts: bool = False,
    names: tuple[str, str] = ("Ana", "Ben"),
    **context: Any,
) -> AsyncIterator[tuple[Study, Any, list[str], list[str]]]:
    """The first of ``names`` on a page of ``viewport`` size, the second from their own socket,
    ``agents`` offline agents and 60 messages; the study, the page, everyone's names and the
    page's errors."""
    me, other = names
    async with (
        live_study(tmp_path, embedder, agents=agents, show_thoughts=show_thoughts) as study,
        chromium() as browser,
    ):
        page = await (await browser.new_context(viewport=viewport, **context)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        await page.goto(study.links[0])
        await page.fill("#join-name", me)
        await page.click("#join button")
        await page.wait_for_selector("#composer:not([hidden])")
        socket, _ = await open_browser(study.links[1], study.origin)
        try:
            await socket.send(type="join", name=other)
            await socket.until(lambda p: p["type"] == "you")
            # Much longer than any screen. A seat may send 20 messages a minute over its
            # socket, so they are posted through the room the server serves, as the hub does.
            for i in range(MESSAGES):
                text = f"Message {i + 1} of the long talk"
                await study.room.post_human_message(names[i % 2], text)
                await asyncio.sleep(0.02)
            await page.locator("#messages .msg").nth(MESSAGES - 1).wait_for()
            agent_names = [a.name for a in study.room.agents]
            for agent in agent_names:
                await page.wait_for_selector(f"#people-list li:has-text('{agent}')")
            # An agent has had its say and the person is asked how they took it; from here on
            # only the people talk, so that no new question appears while the test measures.
            await page.wait_for_selector("#card:not([hidden])", timeout=60_000)
            study.loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await study.loop_task
            assert len(study.rows("SELECT id FROM messages")) >= MESSAGES
            yield study, page, [me, other, *agent_names], errors
        finally:
            await socket.close()


async def test_on_a_phone_the_header_people_and_composer_stay_while_the_list_scrolls(
    tmp_path: Path, embedder
):
    phone: dict[str, Any] = {"viewport": PHONES[0], "is_mobile": True, "has_touch": True}
    async with long_conversation(tmp_path, embedder, **phone) as (study, ana, people, errors):
        # The one-click question takes room under the list: everything still fits.
        await _post_until(study, ana, "Ben", "While the question is open")
        layout = await _layout(ana)
        _check_fixed_parts(layout, people)
        _in_view(dict(await ana.evaluate(CARD_JS)), layout, "the question")
        assert _at_bottom(layout), layout
        await ana.click("#card-answers button:text-is('Interesting')")
        await ana.wait_for_selector("#card", state="hidden")
        assert "interactive-widget=resizes-content" in str(
            await ana.get_attribute("meta[name=viewport]", "content")
        )
        for size in [*PHONES, KEYBOARD]:
            await ana.set_viewport_size(size)
            await _post_until(study, ana, "Ben", f"Ben at {size['width']}x{size['height']}")
            layout = await _layout(ana)
            _check_fixed_parts(layout, people)
            # Stacked: the people above the conversation, the composer at the bottom.
            assert layout["people"]["bottom"] <= layout["list"]["top"] + 0.5
            assert layout["list"]["bottom"] <= layout["composer"]["top"] + 0.5
            assert layout["composer"]["bottom"] >= layout["height"] - 120, layout["composer"]
            assert _at_bottom(layout), layout
            assert layout["clientHeight"] >= 150, f"the list has {layout['clientHeight']} px"
            # Ana's own message, typed on the phone, lands at the bottom too.
            text = f"Ana types at {size['width']}x{size['height']}"
            await ana.fill("#text", text)
            await ana.press("#text", "Enter")
            await ana.wait_for_selector(f".msg.mine .text:text-is('{text}')")
            assert _at_bottom(await _layout(ana))
        # Scrolling over the list moves the list, not the page: the fixed parts stay.
        before = await _layout(ana)
        box = before["list"]
        await ana.mouse.move(box["left"] + 40, box["top"] + 60)
        await ana.mouse.wheel(0, -600)
        for _ in range(100):  # the page's policy allows no string evaluation: poll instead
            scrolled = await _layout(ana)
            if scrolled["scrollTop"] < before["scrollTop"] - 100:
                break
            await asyncio.sleep(0.05)
        assert scrolled["scrollTop"] < before["scrollTop"] - 100, (before, scrolled)
        _check_fixed_parts(scrolled, people)
        assert scrolled["header"] == before["header"]
        assert scrolled["composer"] == before["composer"]
        # Someone who scrolled up to read stays where they are when a message arrives.
        await _post_until(study, ana, "Ben", "Said while Ana reads back")
        reading = await _layout(ana)
        assert abs(reading["scrollTop"] - scrolled["scrollTop"]) < 2, (scrolled, reading)
        assert not _at_bottom(reading)
        # Back at the bottom, the next message keeps it there, even when it arrives before the
        # page has heard of the scroll (a busy machine): the scroll event is held back here.
        await ana.evaluate(
            "(l => { l.addEventListener('scroll', e => e.stopImmediatePropagation(),"
            " {capture: true, once: true}); l.scrollTop = l.scrollHeight; })"
            "(document.querySelector('#messages'))"
        )
        await _post_until(study, ana, "Ben", "One more after scrolling back")
        assert _at_bottom(await _layout(ana))
        await ana.screenshot(path=str(tmp_path / "phone-keyboard.png"))
        assert errors == []


async def test_on_a_laptop_the_people_stay_beside_the_conversation(tmp_path: Path, embedder):
    async with long_conversation(tmp_path, embedder, LAPTOPS[0]) as (study, ana, people, errors):
        await ana.click("#card-close")
        for size in LAPTOPS:
            await ana.set_viewport_size(size)
            await _post_until(study, ana, "Ben", f"Ben at {size['width']}x{size['height']}")
            layout = await _layout(ana)
            _check_fixed_parts(layout, people)
            # The people are a 190 px column on the left, beside the conversation.
            assert layout["people"]["right"] <= layout["chat"]["left"] + 0.5, layout
            assert layout["people"]["right"] - layout["people"]["left"] == pytest.approx(190, 1)
            assert layout["people"]["top"] == pytest.approx(layout["chat"]["top"], abs=1)
            assert layout["composer"]["bottom"] >= layout["height"] - 120, layout["composer"]
            assert _at_bottom(layout), layout
        assert errors == []


async def test_on_a_phone_the_agents_thoughts_give_way_to_the_conversation(
    tmp_path: Path, embedder
):
    """The thoughts condition with three agents: five names, the question and the thoughts
    panel still leave the list room for two messages or so, and the composer on screen."""
    async with long_conversation(
        tmp_path, embedder, PHONES[1], agents=3, show_thoughts=True, names=("Maya", "Tom")
    ) as (study, maya, people, errors):
        await maya.locator("#thoughts-list li").nth(2).wait_for()
        for size in PHONES[1], PHONES[0]:
            await maya.set_viewport_size(size)
            await _post_until(study, maya, "Tom", f"Tom at {size['width']}x{size['height']}")
            layout = await _layout(maya)
            _check_fixed_parts(layout, people)
            _in_view(dict(await maya.evaluate(CARD_JS)), layout, "the question")
            side = dict(await maya.evaluate(CARD_JS.replace("'card'", "'side'")))
            assert side["top"] >= layout["composer"]["bottom"] - 0.5, (side, layout)
            assert side["height"] >= 70, f"the thoughts are squeezed out: {side}"
            assert side["bottom"] <= layout["height"] + 0.5, side
            assert layout["clientHeight"] >= 100, f"the list has {layout['clientHeight']} px"
            assert _at_bottom(layout), layout
        await maya.screenshot(path=str(tmp_path / "thoughts-390.png"))
        assert errors == []
