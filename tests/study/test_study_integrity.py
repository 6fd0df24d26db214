"""A page's socket across a crash, a pause and a second window, on real servers and SQLite.

After a kill, a resumed study plan runs its conversation again as a new session on the same
links: a page that reconnects by itself must be given the new conversation from its start, and
nothing it sends about the old one may be stored against the new one. A stopped plan is a
pause, not an end. A link opened twice says so to its first page and to the researcher.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from playground.study import protocol
from playground.study.hub import PAUSED
from testbed.study import Browser, live_plan, live_study, open_browser, rerun

pytestmark = pytest.mark.asyncio


async def _error(browser: Browser) -> str:
    return str((await browser.until(lambda p: p["type"] == "error"))["message"])


async def test_a_page_reconnecting_to_a_rerun_conversation_starts_afresh_and_misfiles_nothing(
    tmp_path, embedder
):
    async with live_study(tmp_path, embedder, humans=1) as study:
        old = study.room.session_id
        ana, hello = await open_browser(study.links[0], study.origin)
        assert hello["session"] == old
        await ana.send(type="join", name="Ana")
        await ana.until(lambda p: p["type"] == "you")
        for text in ("First in the old one", "Second in the old one", "Third in the old one"):
            await ana.send(type="say", text=text)
            await ana.until(lambda p, t=text: p["type"] == "message" and p["message"]["text"] == t)
        last = max(m.id for m in study.room.messages)
        await ana.close()  # the process was killed: the page's socket dropped

        async with rerun(study, embedder) as (server, new):
            assert server.listening is not None
            link = server.link(study.seats[0])
            origin = server.listening.origin
            # Before the page is back, Ana's seat speaks in the new conversation.
            first, _ = await open_browser(link, origin)
            await first.send(type="say", text="Ana again, in the rerun")
            await first.until(lambda p: p["type"] == "message")
            await first.close()
            # The page reconnects by itself, naming the old conversation and its last message.
            ana, hello = await open_browser(link, origin, after=last, conversation=old)
            assert hello["session"] == new
            assert hello["you"] == "Ana"
            saved = study.rows(
                "SELECT id, text FROM messages WHERE session_id = ? ORDER BY id", (new,)
            )
            assert [(m["id"], m["text"]) for m in hello["messages"]] == saved
            assert saved[0] == (1, "Ana again, in the rerun")  # her own, id ≤ the old last id
            assert hello["notes"] == []
            # A reason written on the old page, naming the old conversation: refused.
            await ana.send(type="note", session=old, message_id=2, text="about the old one")
            assert "earlier conversation" in await _error(ana)
            await ana.send(type="label", session=old, message_id=1, answer="Helpful")
            assert "earlier conversation" in await _error(ana)
            await ana.send(type="retro", session=old, message_id=1, thinking="x")
            assert "earlier conversation" in await _error(ana)
            # A message the new conversation does not have: refused.
            await ana.send(type="note", session=new, message_id=last + 5, text="?")
            assert f"no message #{last + 5}" in await _error(ana)
            # No conversation named at all: refused, saying what is missing.
            await ana.ws.send_json({"type": "note", "message_id": 1, "text": "which one?"})
            assert "which conversation" in await _error(ana)
            assert study.rows("SELECT COUNT(*) FROM annotations") == [(0,)]
            assert study.rows("SELECT COUNT(*) FROM labels") == [(0,)]
            # The reason on her own message of the new conversation is filed as a reason there.
            await ana.send(type="note", session=new, message_id=1, text="why I said it")
            note = await ana.until(lambda p: p["type"] == "note")
            assert note["note"] == {"message_id": 1, "kind": "reason", "text": "why I said it"}
            assert study.rows("SELECT session_id, message_id, kind, author FROM annotations") == [
                (new, 1, "reason", "Ana")
            ]
            await ana.close()


async def test_a_page_naming_its_own_conversation_catches_up_from_its_last_message(
    tmp_path, embedder
):
    async with live_study(tmp_path, embedder, humans=1) as study:
        ana, hello = await open_browser(study.links[0], study.origin)
        await ana.send(type="join", name="Ana")
        await ana.send(type="say", text="One")
        await ana.until(lambda p: p["type"] == "message")
        await ana.close()
        last = max(m.id for m in study.room.messages)
        again, hello = await open_browser(
            study.links[0], study.origin, after=last, conversation=hello["session"]
        )
        assert hello["messages"] == []
        # A page that names no conversation cannot be trusted with ``after``: it gets everything.
        other, hello = await open_browser(study.links[0], study.origin, after=last)
        assert [m["id"] for m in hello["messages"]] == [m.id for m in study.room.messages]
        await again.close()
        await other.close()


async def test_a_pause_says_so_and_closes_with_the_pause_code(tmp_path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study:
        ana, _ = await open_browser(study.links[0], study.origin)
        await study.server.pause()
        paused = await ana.until(lambda p: p["type"] == "paused")
        assert paused["reason"] == PAUSED
        assert not any(p["type"] == "ended" for p in ana.received)
        frame = await ana.ws.receive(timeout=10)
        assert frame.type == aiohttp.WSMsgType.CLOSE
        assert frame.data == protocol.CloseCode.PAUSED
        await ana.session.close()


async def test_a_link_opened_twice_tells_the_first_page_and_the_researcher(tmp_path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study:
        seat = study.seats[0]
        hub = study.server.hub
        first, hello = await open_browser(study.links[0], study.origin)
        assert hello["pages"] == 1
        assert hub.pages(seat) == 1
        second, hello = await open_browser(study.links[0], study.origin)
        assert hello["pages"] == 2
        told = await first.until(lambda p: p["type"] == "pages")
        assert told == {"type": "pages", "count": 2}
        assert hub.pages(seat) == 2
        await second.close()
        told = await first.until(lambda p: p["type"] == "pages")
        assert told == {"type": "pages", "count": 1}
        for _ in range(100):
            if hub.pages(seat) == 1:
                break
            await asyncio.sleep(0.02)
        assert hub.pages(seat) == 1
        await first.close()


async def test_a_stopped_plan_pauses_its_pages_and_only_a_finished_one_says_it_is_over(
    tmp_path, embedder
):
    async with live_plan(tmp_path, embedder, seconds=60) as plan:
        ivy, _ = await open_browser(plan.links[0], plan.origin)
        await ivy.send(type="join", name="Ivy")
        await ivy.until(lambda p: p["type"] == "you")
        plan.task.cancel()  # what Ctrl-C, SIGTERM and the window's Stop do to the runner
        paused = await ivy.until(lambda p: p["type"] == "paused")
        assert paused["reason"] == PAUSED
        frame = await ivy.ws.receive(timeout=10)
        while frame.type == aiohttp.WSMsgType.TEXT:
            frame = await ivy.ws.receive(timeout=10)
        assert frame.data == protocol.CloseCode.PAUSED
        assert not [p for p in ivy.received if p["type"] == "ended"]
        await ivy.session.close()
    # The conversation cut short is saved as interrupted; the plan goes on when resumed.
    assert plan.rows("SELECT status FROM sessions") == [("interrupted",)]
    assert plan.rows("SELECT status FROM study_plans") != [("done",)]
