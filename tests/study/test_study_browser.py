"""The participant's page in a real browser (Debian's Chromium under Playwright).

Two people and an offline agent in one room, each in their own browser context (as on two
machines): joining, talking, the agent's reply at typing speed, the one-click question, private
notes, hostile text rendered as text, a dropped connection catching up, and the study's end.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from testbed.study import Study, live_study
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
XSS_NAME = '<img src=x onerror="window.__pwned=1">'
XSS_TEXT = "<script>window.__pwned=2</script><b>bold?</b>"
XSS_NOTE = '<img src=x onerror="window.__pwned=3">'


async def _page(browser, link: str, viewport: dict):  # type: ignore[no-untyped-def]
    context = await browser.new_context(viewport=viewport)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(link)
    await page.wait_for_selector("#status:has-text('Connected')")
    return page, errors


async def _join(page, name: str) -> None:  # type: ignore[no-untyped-def]
    await page.fill("#join-name", name)
    await page.click("#join button")
    await page.wait_for_selector("#composer:not([hidden])")


async def _say(page, text: str) -> None:  # type: ignore[no-untyped-def]
    await page.fill("#text", text)
    await page.press("#text", "Enter")


def _saved_texts(study: Study) -> list[str]:
    return [t for (t,) in study.rows("SELECT text FROM messages ORDER BY id")]


async def test_two_people_talk_with_an_agent_answer_its_question_and_keep_notes(
    tmp_path: Path, embedder
):
    async with live_study(tmp_path, embedder) as study, chromium() as browser:
        ana, ana_errors = await _page(browser, study.links[0], LAPTOP)
        ben, ben_errors = await _page(browser, study.links[1], PHONE)
        await _join(ana, "Ana")
        await _join(ben, "Ben")
        await ben.wait_for_selector("#people-list li:has-text('Ana')")
        await _say(ana, "Hi both! Any ideas for a weekend trip?")
        await ben.wait_for_selector(".msg:has-text('Any ideas for a weekend trip?')")
        agent = study.room.agents[0].name
        # The agent's reply reaches both pages, and Ben is asked how he took it.
        await ben.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await ana.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await ben.wait_for_selector("#card:not([hidden])")
        assert agent in await ben.text_content("#card-question")
        await ben.click("#card-answers button:text-is('Interesting')")
        # Ben reacts privately to Ana's message; Ana gives her reason for hers.
        await ben.click(".msg:has-text('Any ideas for a weekend trip?') .text")
        await ben.fill(".msg form input", "Nice idea")
        await ben.click(".msg form button")
        await ben.wait_for_selector(".mynote:has-text('Nice idea')")
        await ana.click(".msg.mine .text")
        await ana.fill(".msg form input", "I wanted plans for Saturday")
        await ana.press(".msg form input", "Enter")
        await ana.wait_for_selector(".mynote:has-text('I wanted plans for Saturday')")
        await ana.screenshot(path=str(tmp_path / "study-laptop.png"))
        await ben.screenshot(path=str(tmp_path / "study-phone.png"))
        # Each note only on its author's page.
        assert "I wanted plans" not in await ben.content()
        assert "Nice idea" not in await ana.content()
        for _ in range(100):
            labels = study.rows("SELECT author, answer FROM labels")
            notes = study.rows("SELECT author, kind, text FROM annotations ORDER BY rowid")
            if labels and len(notes) == 2:
                break
            await asyncio.sleep(0.05)
        assert labels == [("Ben", "interesting")]
        assert notes == [
            ("Ben", "reaction", "Nice idea"),
            ("Ana", "reason", "I wanted plans for Saturday"),
        ]
        # What each page shows is what the database holds.
        for page in (ana, ben):
            shown = await page.locator(".msg .text").all_text_contents()
            assert shown == _saved_texts(study)[: len(shown)]
        assert ana_errors == []
        assert ben_errors == []


async def test_hostile_text_is_shown_as_text_everywhere(tmp_path: Path, embedder):
    async with live_study(tmp_path, embedder) as study, chromium() as browser:
        ana, _ = await _page(browser, study.links[0], LAPTOP)
        ben, _ = await _page(browser, study.links[1], LAPTOP)
        await _join(ana, XSS_NAME)
        await _say(ana, XSS_TEXT)
        await ben.wait_for_selector(".msg .text:has-text('window.__pwned=2')")
        await ana.click(".msg.mine .text")
        await ana.fill(".msg form input", XSS_NOTE)
        await ana.press(".msg form input", "Enter")
        await ana.wait_for_selector(".mynote:has-text('window.__pwned=3')")
        for page in (ana, ben):
            assert await page.evaluate("window.__pwned") is None
            assert await page.locator("#messages img, #messages script, #messages b").count() == 0
            assert await page.locator("#people-list img").count() == 0
        assert await ben.text_content(".msg .who") == XSS_NAME
        assert await ben.text_content(".msg .text") == XSS_TEXT
        assert XSS_NAME in await ben.locator("#people-list").text_content()


async def test_a_dropped_connection_reconnects_and_catches_up(tmp_path: Path, embedder):
    async with live_study(tmp_path, embedder) as study, chromium() as browser:
        ana, _ = await _page(browser, study.links[0], LAPTOP)
        ben, _ = await _page(browser, study.links[1], LAPTOP)
        await _join(ana, "Ana")
        await _join(ben, "Ben")
        await _say(ana, "Before the drop")
        await ben.wait_for_selector(".msg:has-text('Before the drop')")
        # Ben's network goes away: the server drops his socket while Ana goes on talking.
        await ben.context.set_offline(True)
        hub = study.server.hub
        for conn in [c for c in hub.connections if c.seat.name == "Ben"]:
            conn.close("dropped by the test")
        await ben.wait_for_selector("#status:has-text('reconnecting')")
        await _say(ana, "While Ben was away")
        await ana.wait_for_selector(".msg:has-text('While Ben was away')")
        await ben.context.set_offline(False)
        await ben.wait_for_selector(".msg:has-text('While Ben was away')", timeout=30_000)
        await ben.wait_for_selector("#status:has-text('Connected as Ben')")
        # No repeats and no gaps: the page's messages are the database's, in order.
        await asyncio.sleep(0.5)
        shown = await ben.locator(".msg .text").all_text_contents()
        assert shown == _saved_texts(study)[: len(shown)]
        assert len(set(await ben.locator(".msg").evaluate_all("ns => ns.map(n => n.id)"))) == len(
            shown
        )


async def test_the_end_of_the_study_is_shown_and_the_composer_closes(tmp_path: Path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study, chromium() as browser:
        ana, _ = await _page(browser, study.links[0], PHONE)
        await _join(ana, "Ana")
        await study.server.stop("The researcher ended the study. Thank you for taking part.")
        await ana.wait_for_selector("#banner:not([hidden])")
        # The end's reason arrives before the socket closes (not only a closed connection).
        assert "The researcher ended the study." in await ana.text_content("#banner")
        assert await ana.locator("#composer").is_hidden()
        await ana.screenshot(path=str(tmp_path / "study-ended.png"))
