"""The participant's page in real Chromium across a crash, a pause, a refused message, a link
opened twice, and with agents marked as agents in words.

Each page's frames are checked against the protocol (see test_study_browser._page)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from playground.study import hub as study_hub
from playground.study.hub import StudyHub
from playground.study.server import StudyServer
from testbed.study import live_plan, live_study, rerun
from tests.study.test_study_browser import LAPTOP, PHONE, _join, _page, _say
from tests.support.browser import chromium

pytestmark = pytest.mark.asyncio


async def _killed(server: StudyServer) -> int:
    """Stop ``server`` as a SIGKILL would: no frame, no close code the page knows; its port."""
    assert server.listening is not None
    assert server._runner is not None
    port = server.listening.port
    await server._runner.cleanup()
    server._runner = None
    return port


async def test_a_page_reconnecting_after_a_crash_shows_the_rerun_and_files_notes_there(
    tmp_path: Path, embedder
):
    async with live_study(tmp_path, embedder, humans=1) as study, chromium() as browser:
        ana, errors = await _page(browser, study.links[0], LAPTOP)
        await _join(ana, "Ana")
        for text in ("First in the old one", "Second in the old one", "Third in the old one"):
            await _say(ana, text)
            await ana.wait_for_selector(f".msg.mine:has-text('{text}')")
        old_last = max(m.id for m in study.room.messages)
        port = await _killed(study.server)
        await ana.wait_for_selector("#status:has-text('reconnecting')")
        async with rerun(study, embedder, port=port) as (_, new):
            # The page comes back by itself, to the conversation run again: nothing of the old.
            await ana.wait_for_selector("#status:has-text('Connected as Ana')", timeout=30_000)
            await ana.wait_for_selector(".msg:has-text('old one')", state="detached")
            await _say(ana, "Hello again, in the rerun")
            await ana.wait_for_selector(".msg.mine:has-text('in the rerun')")
            saved = study.rows("SELECT id, text FROM messages WHERE session_id = ?", (new,))
            assert saved[0] == (1, "Hello again, in the rerun")
            assert saved[0][0] <= old_last  # once dropped as "already shown"
            shown = await ana.locator(".msg .text").all_text_contents()
            assert shown == [t for _, t in saved][: len(shown)]
            # Her reason on her own message is filed there, as a reason.
            await ana.click(".msg.mine .text")
            await ana.fill(".msg form input", "why I said it")
            await ana.press(".msg form input", "Enter")
            await ana.wait_for_selector(".mynote:has-text('why I said it')")
            assert study.rows("SELECT session_id, message_id, kind, author FROM annotations") == [
                (new, 1, "reason", "Ana")
            ]
        assert errors == []


async def test_a_paused_study_says_so_and_the_page_continues_by_itself(tmp_path: Path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study, chromium() as browser:
        ana, errors = await _page(browser, study.links[0], PHONE)
        await _join(ana, "Ana")
        await _say(ana, "Before the pause")
        await ana.wait_for_selector(".msg.mine:has-text('Before the pause')")
        assert study.server.listening is not None
        port = study.server.listening.port
        await study.server.pause()
        await ana.wait_for_selector("#phase-note:not([hidden])")
        assert await ana.text_content("#phase-title") == "Paused"
        paused = "The study is paused; this page will continue by itself."
        assert await ana.text_content("#banner") == paused
        assert "over" not in (await ana.text_content("body") or "")
        assert await ana.locator("#composer").is_hidden()
        await ana.wait_for_selector("#status:has-text('Paused')")
        # The study resumes: a server on the same port serves the same links.
        again = StudyServer(StudyHub(study.room, study.server.hub.book), port=port)
        await again.start()
        try:
            await ana.wait_for_selector("#composer:not([hidden])", timeout=30_000)
            await ana.wait_for_selector("#status:has-text('Connected as Ana')")
            assert await ana.locator("#banner").is_hidden()
            await _say(ana, "After the pause")
            await ana.wait_for_selector(".msg.mine:has-text('After the pause')")
            await asyncio.sleep(0.3)
            shown = await ana.locator(".msg .text").all_text_contents()
            saved = [t for (t,) in study.rows("SELECT text FROM messages ORDER BY id")]
            assert shown == saved[: len(shown)]  # no repeats, no gaps
        finally:
            await again.stop()
        assert errors == []


async def test_a_refused_message_stays_in_the_composer_and_a_counter_shows_near_the_limit(
    tmp_path: Path, embedder, monkeypatch
):
    monkeypatch.setattr(study_hub, "MESSAGES_PER_MINUTE", 1)
    async with live_study(tmp_path, embedder, humans=1, agents=0) as study, chromium() as browser:
        ana, errors = await _page(browser, study.links[0], LAPTOP)
        await _join(ana, "Ana")
        await _say(ana, "The first one")
        await ana.wait_for_selector(".msg.mine:has-text('The first one')")
        assert await ana.input_value("#text") == ""
        await _say(ana, "A second one, refused")
        await ana.wait_for_selector("#error:has-text('at most 1 messages a minute')")
        assert await ana.input_value("#text") == "A second one, refused"
        assert study.rows("SELECT COUNT(*) FROM messages") == [(1,)]
        assert await ana.locator("#count").is_hidden()
        await ana.fill("#text", "x" * 1799)
        assert await ana.locator("#count").is_hidden()
        await ana.fill("#text", "y" * 1850)
        await ana.wait_for_selector("#count:not([hidden])")
        assert await ana.text_content("#count") == "1850 / 2000"
        # Too long (past the field's own limit, as a pasted text in another browser could be):
        # refused, and kept.
        await ana.evaluate("document.getElementById('text').removeAttribute('maxlength')")
        await ana.fill("#text", "z" * 2001)
        assert await ana.text_content("#count") == "2001 / 2000"
        await ana.press("#text", "Enter")
        await ana.wait_for_selector("#error:has-text('at most 2000 characters')")
        assert await ana.input_value("#text") == "z" * 2001
        assert study.rows("SELECT COUNT(*) FROM messages") == [(1,)]
        assert errors == []


async def test_a_link_opened_twice_says_so_and_agents_are_marked_as_agents(
    tmp_path: Path, embedder
):
    async with live_study(tmp_path, embedder, humans=1) as study, chromium() as browser:
        first, errors = await _page(browser, study.links[0], LAPTOP)
        await _join(first, "Ana")
        assert await first.locator("#elsewhere").is_hidden()
        second, _ = await _page(browser, study.links[0], PHONE)
        await first.wait_for_selector("#elsewhere:not([hidden])")
        assert "opened in another window" in (await first.text_content("#elsewhere") or "")
        assert await second.locator("#elsewhere").is_visible()
        assert study.server.hub.pages(study.seats[0]) == 2
        await second.context.close()
        await first.wait_for_selector("#elsewhere", state="hidden")
        # The agent is marked in words: in the people bar, on its messages, in the review.
        agent = study.room.agents[0].name
        person = first.locator(f"#people-list li:has-text('{agent}')")
        assert "AI agent" in (await person.text_content() or "")
        ana = first.locator("#people-list li:has-text('Ana')")
        assert "AI agent" not in (await ana.text_content() or "")
        await _say(first, "Hello, what should we cook tonight?")
        said = f".msg:has(.who:text-is('{agent}'))"
        await first.wait_for_selector(said, timeout=60_000)
        assert await first.text_content(f"{said} .tag") == "AI agent"
        assert await first.locator(".msg.mine .tag").count() == 0
        study.room.finish("finished", "the time is up")
        await first.wait_for_selector("#review:not([hidden])")
        agent_index = next(i for i, m in enumerate(study.room.messages) if m.speaker == agent)
        for _ in range(agent_index):
            await first.click("#review-next")
        assert "AI agent" in (await first.text_content("#review-message") or "")
        assert errors == []


async def test_a_stopped_plan_pauses_the_page_and_its_resumption_continues_it(
    tmp_path: Path, embedder
):
    async with chromium() as browser:
        async with live_plan(tmp_path, embedder, seconds=120) as plan:
            ivy, errors = await _page(browser, plan.links[0], LAPTOP)
            await _join(ivy, "Ivy")
            await _say(ivy, "Said before the stop")
            await ivy.wait_for_selector(".msg.mine:has-text('before the stop')")
            port = int(plan.origin.rsplit(":", 1)[1])
            plan.task.cancel()  # Ctrl-C, SIGTERM or the window's Stop
            with contextlib.suppress(asyncio.CancelledError):
                await plan.task
            await ivy.wait_for_selector("#phase-note:not([hidden])")
            assert await ivy.text_content("#phase-title") == "Paused"
            assert "will continue by itself" in (await ivy.text_content("#banner") or "")
            assert "over" not in (await ivy.text_content("#banner") or "")
        # `study resume` on the same address: the conversation cut short is run again.
        async with live_plan(tmp_path, embedder, plan_id=plan.plan_id, port=port, seconds=120):
            await ivy.wait_for_selector("#composer:not([hidden])", timeout=30_000)
            await ivy.wait_for_selector("#status:has-text('Connected as Ivy')")
            assert await ivy.locator(".msg:has-text('before the stop')").count() == 0
            assert (await ivy.text_content("#study") or "").startswith("Conversation 1 of 3")
            await _say(ivy, "Said after the resume")
            await ivy.wait_for_selector(".msg.mine:has-text('after the resume')")
        assert errors == []
        sessions = plan.rows("SELECT status FROM sessions ORDER BY rowid")
        assert sessions[0] == ("interrupted",)
        assert len(sessions) == 2
