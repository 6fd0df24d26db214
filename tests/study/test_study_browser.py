"""The participant's page in a real browser (Debian's Chromium under Playwright).

Two people and an offline agent in one room, each in their own browser context (as on two
machines): joining, talking, the agent's reply at typing speed, the one-click question, private
notes, hostile text rendered as text, a dropped connection catching up, and the study's end.
After the conversation: the review message by message, the questions about the agent, the
agents' thoughts as a condition, and a whole study plan to its final questions.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import sqlite_utils

from playground.rating.user_study import STYLES, USER_STUDY_METRICS
from playground.storage import study_rows
from playground.study import protocol
from testbed.study import Study, live_plan, live_study
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
XSS_NAME = '<img src=x onerror="window.__pwned=1">'
XSS_TEXT = "<script>window.__pwned=2</script><b>bold?</b>"
XSS_NOTE = '<img src=x onerror="window.__pwned=3">'


def _check_frames(page, errors: list[str]) -> None:
    """Every frame the page receives and sends must be one of the protocol's (a frame that
    does not fit is reported as an error of the page)."""

    def check(adapter, payload, direction: str) -> None:
        try:
            adapter.validate_json(payload, strict=direction == "sent")
        except ValueError as exc:
            errors.append(f"{direction} frame outside the protocol: {payload[:200]}: {exc}")

    def on_socket(ws) -> None:
        ws.on("framereceived", lambda p: check(protocol.SERVER_FRAMES, p, "received"))
        ws.on("framesent", lambda p: check(protocol.PAGE_FRAMES, p, "sent"))

    page.on("websocket", on_socket)


async def _page(browser, link: str, viewport: dict, *, sockets: list | None = None):
    """A new browser context on ``link``, connected. With ``sockets``, the page's sockets pass
    through Playwright's router, and the server's end of each is appended there (a test can
    send a frame the page would not)."""
    context = await browser.new_context(viewport=viewport)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    _check_frames(page, errors)
    if sockets is not None:
        await page.route_web_socket("**/ws", lambda ws: sockets.append(ws.connect_to_server()))
    await page.goto(link)
    await page.wait_for_selector("#status:has-text('Connected')")
    return page, errors


async def _join(page, name: str) -> None:
    await page.fill("#join-name", name)
    await page.click("#join button")
    await page.wait_for_selector("#composer:not([hidden])")


async def _say(page, text: str) -> None:
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


def _short(speaker: str, text: str, message_id: int) -> str:
    """A message as the review's "after which message?" list shows it."""
    text = " ".join(text.split())
    return f"#{message_id} {speaker}: {text[:60] + '…' if len(text) > 60 else text}"


async def test_after_the_conversation_a_person_looks_back_at_it_message_by_message(
    tmp_path: Path, embedder
):
    async with live_study(tmp_path, embedder, humans=1) as study, chromium() as browser:
        sockets: list = []
        ana, errors = await _page(browser, study.links[0], LAPTOP, sockets=sockets)
        await _join(ana, "Ana")
        await _say(ana, "Any ideas for a weekend trip?")
        await ana.wait_for_selector(".msg:has-text('weekend trip')")
        await _say(ana, XSS_TEXT)
        await ana.wait_for_selector(".msg .text:has-text('window.__pwned=2')")
        study.room.finish("finished", "the time is up")
        await ana.wait_for_selector("#review:not([hidden])")
        assert await ana.locator("#composer").is_hidden()
        assert await ana.locator("#study").is_hidden()  # not part of a study plan
        assert await ana.locator("#rate").is_hidden()
        saved = study.rows("SELECT id, speaker, text FROM messages ORDER BY id")
        xss = next(i for i, (_, _, text) in enumerate(saved) if text == XSS_TEXT)
        assert await ana.locator(".msg").count() == len(saved)
        assert await ana.text_content("#review-position") == f"Message 1 of {len(saved)}"
        assert await ana.get_attribute("#m1", "aria-current") == "true"
        # Nothing typed: nothing is sent, and the page says why.
        await ana.click("#review-save")
        assert "Nothing to save" in await ana.text_content("#review-error")
        # "After a particular message" lists the later ones, hostile text as text.
        await ana.check("#r-timing-after")
        await ana.wait_for_selector("#r-after-row:not([hidden])")
        options = await ana.locator("#r-after option").all_text_contents()
        assert options == [_short(sp, text, i) for i, sp, text in saved[1:]]
        # Next: the hostile message is the current one, shown as text beside the form.
        for _ in range(xss):
            await ana.click("#review-next")
        assert await ana.text_content("#review-position") == f"Message {xss + 1} of {len(saved)}"
        assert await ana.text_content("#review-message .text") == XSS_TEXT
        assert await ana.text_content(".msg.current .text") == XSS_TEXT
        assert await ana.locator("#side script, #side b, #side img").count() == 0
        assert await ana.evaluate("window.__pwned") is None
        # What is typed and not saved stays when stepping away and back.
        await ana.fill("#r-thinking", "half a thought")
        for _ in range(xss):
            await ana.click("#review-prev")
        assert await ana.input_value("#r-thinking") == ""
        await ana.fill("#r-thinking", "Whether anyone had been to the coast")
        await ana.check("#r-wanted-yes")
        await ana.fill("#r-why", "I wanted plans for Saturday")
        await ana.check("#r-timing-after")
        await ana.select_option("#r-after", str(saved[xss][0]))
        await ana.click("#review-save")
        await ana.wait_for_selector("#m1 .retro-mark")
        await ana.wait_for_selector("#review-saved:text-is('Saved')")
        rows = study_rows.retrospective(study.db, study.room.session_id, "Ana")
        assert [{k: r[k] for k in study_rows.RETRO_COLUMNS} for r in rows] == [
            {
                "message_id": 1,
                "thinking": "Whether anyone had been to the coast",
                "wanted": "yes",
                "why": "I wanted plans for Saturday",
                "timing": "after",
                "after_message_id": saved[xss][0],
            }
        ]
        for _ in range(xss):
            await ana.click("#review-next")
        assert await ana.input_value("#r-thinking") == "half a thought"
        assert await ana.text_content("#review-saved") == "Not saved yet"
        # The server's refusals are shown next to the form (a save the test sends for a message
        # the conversation does not have).
        sockets[-1].send(
            json.dumps(
                {
                    "type": "retro",
                    "session": study.room.session_id,
                    "message_id": 999,
                    "thinking": "x",
                }
            )
        )
        await ana.wait_for_selector("#review-error:has-text('no such message')")
        # A new page: the saved note fills the form again, and its message is marked.
        await ana.reload()
        await ana.wait_for_selector("#review:not([hidden])")
        await ana.wait_for_selector("#review-saved:text-is('Saved')")
        assert await ana.input_value("#r-thinking") == "Whether anyone had been to the coast"
        assert await ana.input_value("#r-why") == "I wanted plans for Saturday"
        assert await ana.is_checked("#r-wanted-yes")
        assert await ana.is_checked("#r-timing-after")
        assert await ana.input_value("#r-after") == str(saved[xss][0])
        assert await ana.locator(".retro-mark").count() == 1
        assert await ana.evaluate("window.__pwned") is None
        assert errors == []


async def test_the_questions_about_the_agent_say_what_is_missing_and_save_every_answer(
    tmp_path: Path, embedder
):
    async with (
        live_study(tmp_path, embedder, humans=1, in_plan=True, show_thoughts=True) as study,
        chromium() as browser,
    ):
        ana, errors = await _page(browser, study.links[0], PHONE)
        agent = study.room.agents[0].name
        study_line = "Conversation 1 of 3 · Topic: hobbies and interests"
        assert await ana.text_content("#study") == study_line
        await _join(ana, "Ana")
        await _say(ana, "Any ideas for a weekend trip?")
        # The condition that shows the agent's thoughts: each one once, rated in place.
        await ana.wait_for_selector("#thoughts:not([hidden])")
        await ana.wait_for_selector(
            f".thought:has(.who:text-is('{agent}')) .motivation", timeout=60_000
        )
        shown = await ana.locator(".thought .text").all_text_contents()
        formed = [t for (t,) in study.rows("SELECT text FROM thoughts ORDER BY rowid")]
        assert shown
        assert set(shown) <= set(formed)
        assert len(shown) <= len(formed)
        study.room.finish("finished", "the time is up")
        await ana.wait_for_selector("#rate:not([hidden])")
        assert await ana.locator("#thoughts").is_hidden()
        assert agent in await ana.text_content("#rate-text")
        await ana.click("#rate-open")
        await ana.wait_for_selector("#questions:not([hidden])")
        assert await ana.locator("#chat").is_hidden()  # on a phone the questions take the page
        legends = await ana.locator("#questions legend").all_text_contents()
        assert legends == [f"{i}. {m.statement}" for i, m in enumerate(USER_STUDY_METRICS, 1)]
        chosen = {m.key: i % 7 + 1 for i, m in enumerate(USER_STUDY_METRICS)}
        for i, m in enumerate(USER_STUDY_METRICS):
            if i != 7:
                await ana.check(f"#q-{i}-{chosen[m.key]}")
        await ana.click("#questions button[type=submit]")
        assert "number 8 is not answered" in await ana.text_content("#questions-error")
        assert "missing" in (await ana.get_attribute("#q-7", "class") or "")
        assert study_rows.questionnaire(study.db, study.room.session_id) == []
        await ana.check(f"#q-7-{chosen[USER_STUDY_METRICS[7].key]}")
        await ana.click("#questions button[type=submit]")
        await ana.wait_for_selector("#phase-note:not([hidden])")
        thanks = "Thank you — please wait for the next conversation."
        assert await ana.text_content("#phase-text") == thanks
        rows = study_rows.questionnaire(study.db, study.room.session_id, "Ana")
        assert {r["item"]: r["value"] for r in rows} == chosen
        # The review stays open while waiting, without the questions.
        await ana.click("#phase-review")
        await ana.wait_for_selector("#review:not([hidden])")
        assert await ana.locator("#rate").is_hidden()
        await ana.click("#review-close")
        await ana.wait_for_selector("#phase-note:not([hidden])")
        await ana.reload()
        await ana.wait_for_selector("#phase-note:not([hidden])")
        assert await ana.text_content("#phase-text") == thanks
        assert errors == []


async def test_a_study_plan_runs_from_its_first_conversation_to_the_final_questions(
    tmp_path: Path, embedder
):
    async with chromium() as browser, live_plan(tmp_path, embedder, seconds=5) as plan:
        steps = plan.rows(
            "SELECT position, condition, persona, topic FROM plan_steps WHERE plan_id = ?"
            " ORDER BY position",
            (plan.plan_id,),
        )
        ivy, errors = await _page(browser, plan.links[0], LAPTOP)
        await _join(ivy, "Ivy")
        await _say(ivy, "Hello from the first conversation")
        for position, _, _, topic in steps:
            line = f"Conversation {position} of 3 · Topic: {topic}"
            await ivy.wait_for_selector(f"#study:text-is('{line}')", timeout=60_000)
            if position > 1:  # the page started afresh (close code 4001)
                assert await ivy.locator(".msg:has-text('first conversation')").count() == 0
            await ivy.wait_for_selector("#rate:not([hidden])", timeout=60_000)
            await ivy.click("#rate-open")
            for i in range(len(USER_STUDY_METRICS)):
                await ivy.check(f"#q-{i}-4")
            await ivy.click("#questions button[type=submit]")
            if position < 3:
                await ivy.wait_for_selector("#phase-note:not([hidden])")
        await ivy.wait_for_selector("#final:not([hidden])")
        agents = [s[2] for s in steps]
        legends = await ivy.locator("#final-list legend").all_text_contents()
        assert legends == [f"Which style did {a} have?" for a in agents]
        styles = [s.key for s in STYLES]
        # Only the first agent's style: the others and the favourite are named.
        await ivy.check(f"#f-0-{styles.index(steps[0][1])}")
        await ivy.click("#final button[type=submit]")
        error = await ivy.text_content("#final-error")
        assert agents[1] in error
        assert agents[2] in error
        assert "liked best" in error
        assert plan.rows("SELECT COUNT(*) FROM plan_answers") == [(0,)]
        # The last conversation can still be looked back at.
        await ivy.click("#final-review")
        await ivy.wait_for_selector("#review:not([hidden])")
        await ivy.click("#review-close:text-is('Back to the last questions')")
        for i, (_, condition, _, _) in enumerate(steps):
            await ivy.check(f"#f-{i}-{styles.index(condition)}")
        await ivy.check("#f-favourite-1")
        await ivy.click("#final button[type=submit]")
        await ivy.wait_for_selector("#phase-note:not([hidden])")
        done = "Thank you for taking part. You can close this page."
        assert await ivy.text_content("#phase-text") == done
        await asyncio.wait_for(plan.task, 30)
        await ivy.wait_for_selector("#banner:has-text('The study is over')")
        assert await ivy.text_content("#phase-text") == done
        assert errors == []
    answers = dict(plan.rows("SELECT item, value FROM plan_answers WHERE person = 'Ivy'"))
    assert answers == {f"match:{a}": c for _, c, a, _ in steps} | {"favourite": agents[1]}
    assert plan.rows("SELECT status FROM study_plans") == [("done",)]
    db = sqlite_utils.Database(plan.db_path)
    try:
        for (session_id,) in plan.rows("SELECT session_id FROM plan_steps"):
            rated = study_rows.questionnaire(db, session_id, "Ivy")
            assert {r["item"]: r["value"] for r in rated} == {m.key: 4 for m in USER_STUDY_METRICS}
    finally:
        db.close()
