"""The study server over real HTTP and WebSockets on 127.0.0.1, as browsers meet it.

Two invited people and an offline agent in one live room: what each socket receives (the
conversation, presence and their own notes, never anyone else's, never an agent's thoughts),
tokens and origins refused, limits, a reconnect's catch-up, a revoked seat, the study's end, and
that every message is in the database before any browser hears of it.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from playground import events
from playground.study import hub as study_hub
from playground.study.server import CLOSE_FOR_GOOD, FORBIDDEN, StudyServer
from testbed.study import Browser, live_study, open_browser
from tests.support.tls import self_signed

pytestmark = pytest.mark.asyncio

#: Everything a participant's socket may ever receive.
PUBLIC = {
    "hello",
    "message",
    "joined",
    "left",
    "typing",
    "presence",
    "you",
    "note",
    "label",
    "error",
    "ended",
    "revoked",
    "phase",
    "retro",
    "answered",
}


async def _join(link: str, origin: str, name: str) -> tuple[Browser, dict]:
    browser, hello = await open_browser(link, origin)
    await browser.send(type="join", name=name)
    await browser.until(lambda p: p["type"] == "you")
    return browser, hello


async def _get(url: str, **kw) -> tuple[int, str, dict]:
    async with aiohttp.ClientSession() as s, s.get(url, **kw) as r:
        return r.status, await r.text(), dict(r.headers)


async def test_two_people_and_an_agent_share_the_room_and_notes_stay_private(tmp_path, embedder):
    async with live_study(tmp_path, embedder) as study:
        ana, hello = await _join(study.links[0], study.origin, "Ana")
        assert hello["you"] is None
        assert [p["kind"] for p in hello["participants"]] == ["ai"]
        ben, hello_b = await _join(study.links[1], study.origin, "Ben")
        assert {p["name"]: p["online"] for p in hello_b["participants"]}["Ana"] is True
        await ana.send(type="say", text="Hi both, shall we plan a weekend trip?")
        first = await ben.until(lambda p: p["type"] == "message")
        assert first["message"]["speaker"] == "Ana"
        assert set(first["message"]) == {"id", "speaker", "text", "at", "kind"}
        # The agent answers; both see it.
        reply = await ben.until(lambda p: p["type"] == "message" and p["message"]["kind"] == "ai")
        await ana.until(
            lambda p: p["type"] == "message" and p["message"]["id"] == reply["message"]["id"]
        )
        # Ana's reason and Ben's reaction and answer: each reaches only its author.
        await ana.send(type="note", message_id=1, text="I wanted a plan for Saturday")
        await ben.send(type="note", message_id=1, text="Sounds fun")
        await ben.send(type="label", message_id=reply["message"]["id"], answer="Helpful")
        mine = await ana.until(lambda p: p["type"] == "note")
        assert mine["note"] == {
            "message_id": 1,
            "kind": "reason",
            "text": "I wanted a plan for Saturday",
        }
        theirs = await ben.until(lambda p: p["type"] == "label")
        assert theirs["label"]["answer"] == "helpful"
        # A trigger's time breakdown is research data: it never goes out (sent before the next
        # message, so any frame it made would be in by then).
        secret = "TIMING-SECRET"
        study.room.emit(
            events.TriggerTimed(trigger="pause", total=1.0, stages=[
                events.StageTiming(stage="floor", detail=secret, ready=0, started=0, took=1),
            ])
        )  # fmt: skip
        await ana.send(type="say", text="Any ideas?")
        await ben.until(lambda p: p["type"] == "message" and p["message"]["text"] == "Any ideas?")
        await ana.until(lambda p: p["type"] == "message" and p["message"]["text"] == "Any ideas?")
        # Saved as the window's human's are.
        assert study.rows("SELECT author, kind, text FROM annotations ORDER BY rowid") == [
            ("Ana", "reason", "I wanted a plan for Saturday"),
            ("Ben", "reaction", "Sounds fun"),
        ]
        assert study.rows("SELECT author, answer FROM labels") == [("Ben", "helpful")]
        assert study.rows("SELECT name, remote FROM participants WHERE kind = 'human'") == [
            ("Ana", 1),
            ("Ben", 1),
        ]
        # Nothing private went out: no other seat's note, no thought, no kind outside PUBLIC.
        for who, other in ((ana, "Sounds fun"), (ben, "I wanted a plan")):
            frames = json.dumps(who.received)
            assert other not in frames
            assert secret not in frames
            assert {p["type"] for p in who.received} <= PUBLIC
        thoughts = study.rows("SELECT text FROM thoughts")
        assert thoughts, "the agent thought"
        said = {m.text for m in study.room.messages}
        for (text,) in thoughts:
            if text not in said:  # a thought never expressed never reaches a browser
                assert text not in json.dumps(ana.received + ben.received)
        await ana.close()
        await ben.close()


async def test_every_message_is_saved_before_a_browser_hears_of_it(tmp_path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study:
        ana, _ = await _join(study.links[0], study.origin, "Ana")
        await ana.send(type="say", text="Tell me about your favourite food.")
        for _ in range(2):
            got = await ana.until(lambda p: p["type"] == "message")
            m = got["message"]
            assert study.rows(
                "SELECT speaker, text FROM messages WHERE session_id = ? AND id = ?",
                (study.room.session_id, m["id"]),
            ) == [(m["speaker"], m["text"])]
        await ana.close()


async def test_a_dropped_connection_catches_up_without_repeats(tmp_path, embedder):
    async with live_study(tmp_path, embedder) as study:
        ana, _ = await _join(study.links[0], study.origin, "Ana")
        ben, _ = await _join(study.links[1], study.origin, "Ben")
        await ana.send(type="say", text="First message")
        seen = await ben.until(lambda p: p["type"] == "message")
        last = seen["message"]["id"]
        await ben.close()  # Ben's connection drops
        await ana.until(
            lambda p: (
                p["type"] == "presence"
                and p == {"type": "presence", "name": "Ben", "online": False}
            )
        )
        await ana.send(type="say", text="Said while Ben was away")
        await ana.until(
            lambda p: p["type"] == "message" and p["message"]["text"].startswith("Said while")
        )
        ben, hello = await open_browser(
            study.links[1], study.origin, after=last, conversation=study.room.session_id
        )
        assert hello["you"] == "Ben"
        ids = [m["id"] for m in hello["messages"]]
        saved = [r[0] for r in study.rows("SELECT id FROM messages ORDER BY id")]
        assert ids == [i for i in saved if i > last]  # exactly what was missed, in order
        assert "Said while Ben was away" in [m["text"] for m in hello["messages"]]
        online = await ana.until(lambda p: p["type"] == "presence" and p["name"] == "Ben")
        assert online["online"] is True
        assert study.rows(
            "SELECT name, online FROM presence WHERE name = 'Ben' ORDER BY rowid"
        ) == [
            ("Ben", 1),
            ("Ben", 0),
            ("Ben", 1),
        ]
        await ana.close()
        await ben.close()


async def test_tokens_are_refused_alike_and_a_revoked_seat_is_closed_at_once(tmp_path, embedder):
    async with live_study(tmp_path, embedder) as study:
        link = study.links[0]
        status, _, headers = await _get(link)
        assert status == 200
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert headers["Referrer-Policy"] == "no-referrer"
        base = study.origin
        guesses = [link[:-1] + ("A" if link[-1] != "A" else "B"), base + "/join/", base + "/join/x"]
        refusals = [await _get(g) for g in guesses]
        assert [(s, t) for s, t, _ in refusals if s != 404] == [(403, FORBIDDEN)] * 2
        assert (await _get(base + "/"))[0] == 404
        assert (await _get(base + "/static/../hub.py"))[0] == 404
        ana, _ = await _join(link, study.origin, "Ana")
        seat = study.seats[0]
        study.server.hub.revoke(seat.number)
        await ana.until(lambda p: p["type"] == "revoked")
        closing = await ana.ws.receive(timeout=10)
        assert closing.type == aiohttp.WSMsgType.CLOSE
        assert closing.data == CLOSE_FOR_GOOD
        assert await _get(link) == (403, FORBIDDEN, (await _get(link))[2])
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await open_browser(link, study.origin)
        assert refused.value.status == 403
        assert study.rows(
            "SELECT revoked_at IS NOT NULL FROM seats WHERE seat = ?", (seat.number,)
        ) == [(1,)]
        await ana.session.close()


async def test_a_token_admits_its_own_session_only(tmp_path, embedder):
    async with (
        live_study(tmp_path / "a", embedder) as one,
        live_study(tmp_path / "b", embedder) as two,
    ):
        foreign = one.links[0].replace(one.origin, two.origin)
        assert (await _get(foreign))[:2] == (403, FORBIDDEN)


async def test_a_foreign_or_missing_origin_is_refused(tmp_path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study:
        link = study.links[0]
        for headers in ({"Origin": "http://evil.example"}, {}, {"Origin": "null"}):
            async with aiohttp.ClientSession() as s:
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await s.ws_connect(link + "/ws", headers=headers)
                assert refused.value.status == 403
        # A name that resolves to this machine (DNS rebinding) is not the page's origin either.
        assert study.server.listening is not None
        port = study.server.listening.port
        async with aiohttp.ClientSession() as s:
            with pytest.raises(aiohttp.WSServerHandshakeError):
                await s.ws_connect(
                    link + "/ws",
                    headers={
                        "Origin": f"http://rebind.example:{port}",
                        "Host": f"rebind.example:{port}",
                    },
                )


async def test_limits_on_size_rate_and_names(tmp_path, embedder, monkeypatch):
    monkeypatch.setattr(study_hub, "MESSAGES_PER_MINUTE", 3)
    async with live_study(tmp_path, embedder) as study:
        ana, _ = await open_browser(study.links[0], study.origin)
        await ana.send(type="say", text="hello")
        assert (await ana.until(lambda p: p["type"] == "error"))["message"].startswith("Join")
        for bad, says in (
            ("", "type a name"),
            ("x" * 41, "at most 40"),
            ("Ana\u0007", "control characters"),
            (study.room.agents[0].name.upper(), "already called"),
        ):
            await ana.send(type="join", name=bad)
            assert says in (await ana.until(lambda p: p["type"] == "error"))["message"]
        await ana.send(type="join", name="Ana")
        await ana.until(lambda p: p["type"] == "you")
        await ana.send(type="say", text="x" * 2001)
        assert "at most 2000" in (await ana.until(lambda p: p["type"] == "error"))["message"]
        for i in range(3):
            await ana.send(type="say", text=f"message {i}")
        await ana.send(type="say", text="one too many")
        assert (
            "at most 3 messages a minute"
            in (await ana.until(lambda p: p["type"] == "error"))["message"]
        )
        assert "one too many" not in [t for (t,) in study.rows("SELECT text FROM messages")]
        await ana.send(type="note", message_id=999, text="?")
        assert "no message #999" in (await ana.until(lambda p: p["type"] == "error"))["message"]
        await ana.send(type="label", message_id=1, answer="<b>yes</b>")
        assert (
            "not one of the answers" in (await ana.until(lambda p: p["type"] == "error"))["message"]
        )
        await ana.send(type="mystery")
        assert "does not understand" in (await ana.until(lambda p: p["type"] == "error"))["message"]
        # A frame larger than the limit closes the socket; the page reconnects.
        await ana.ws.send_str(json.dumps({"type": "say", "text": "y" * 20_000}))
        closed = await ana.ws.receive(timeout=10)
        while closed.type == aiohttp.WSMsgType.TEXT:
            closed = await ana.ws.receive(timeout=10)
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        assert "y" * 100 not in json.dumps(study.rows("SELECT text FROM messages"))
        await ana.session.close()


async def test_the_end_of_the_study_reaches_every_browser(tmp_path, embedder):
    async with live_study(tmp_path, embedder) as study:
        ana, _ = await _join(study.links[0], study.origin, "Ana")
        ben, _ = await open_browser(study.links[1], study.origin)
        study.room.finish("finished", "the researcher ended the session")
        for who in (ana, ben):
            ended = await who.until(lambda p: p["type"] == "ended")
            assert ended["reason"] == "the researcher ended the session"
        await ana.send(type="say", text="too late")
        assert "ended" in (await ana.until(lambda p: p["type"] == "error"))["message"]
        await study.server.stop("The researcher closed the window.")
        for who in (ana, ben):
            frame = await who.ws.receive(timeout=10)
            while frame.type == aiohttp.WSMsgType.TEXT:
                frame = await who.ws.receive(timeout=10)
            assert frame.type == aiohttp.WSMsgType.CLOSE
            assert frame.data == CLOSE_FOR_GOOD
            await who.session.close()
        # A page opened after the end: the link still shows the conversation, closed.
        assert study.rows("SELECT status FROM sessions") == [("finished",)]


async def test_presence_is_recorded_with_the_session(tmp_path, embedder, bus):
    seen: list[events.PresenceChanged] = []
    async with live_study(tmp_path, embedder, humans=1) as study:
        study.room.bus.subscribe(seen.append, kinds=["presence_changed"])
        ana, _ = await _join(study.links[0], study.origin, "Ana")
        await ana.close()
        for _ in range(100):
            if len(seen) == 2:
                break
            await asyncio.sleep(0.05)
        assert [(e.name, e.online) for e in seen] == [("Ana", True), ("Ana", False)]
        assert study.rows("SELECT online FROM participants WHERE name = 'Ana'") == [(0,)]


async def test_tls_needs_both_files_and_says_what_is_wrong(tmp_path, embedder):
    async with live_study(tmp_path, embedder, humans=1) as study:
        half = StudyServer(study.server.hub, certificate=str(tmp_path / "cert.pem"))
        with pytest.raises(Exception, match="both a certificate and its key"):
            await half.start()
        (tmp_path / "cert.pem").write_text("not a certificate")
        (tmp_path / "key.pem").write_text("not a key")
        bad = StudyServer(
            study.server.hub, certificate=str(tmp_path / "cert.pem"), key=str(tmp_path / "key.pem")
        )
        with pytest.raises(Exception, match="cannot use the TLS certificate"):
            await bad.start()


async def test_with_a_certificate_the_page_and_its_socket_are_served_over_tls(tmp_path, embedder):
    import ssl

    cert, key = self_signed(tmp_path)
    async with live_study(tmp_path, embedder, humans=1) as study:
        tls = StudyServer(study.server.hub, certificate=cert, key=key)
        where = await tls.start()
        try:
            assert where.origin.startswith("https://127.0.0.1:")
            link = tls.link(study.seats[0])
            trust = ssl.create_default_context(cafile=cert)
            async with aiohttp.ClientSession() as s:
                async with s.get(link, ssl=trust) as r:
                    assert r.status == 200
                with pytest.raises(aiohttp.ClientError):
                    await s.get(link.replace("https://", "http://"))  # no plain HTTP
                with pytest.raises(aiohttp.ClientConnectorCertificateError):
                    await s.get(link)  # a certificate nobody vouched for is refused by default
                ws = await s.ws_connect(link + "/ws", headers={"Origin": where.origin}, ssl=trust)
                await ws.send_json({"after": 0})
                hello = json.loads((await ws.receive(timeout=10)).data)
                assert hello["type"] == "hello"
                await ws.close()
        finally:
            await tls.stop()


async def test_after_the_conversation_each_person_reviews_it_privately(tmp_path, embedder):
    """The formative study's method in a session of its own (no plan): once it is over, each
    person notes, message by message, what they were thinking; nobody else hears of it, and
    there is no questionnaire to answer."""
    async with live_study(tmp_path, embedder) as study:
        ana, hello = await _join(study.links[0], study.origin, "Ana")
        assert (hello["phase"], hello["questionnaire"], hello["study"]) == ("talk", None, None)
        ben, _ = await _join(study.links[1], study.origin, "Ben")
        await ana.send(type="say", text="What are you all reading?")
        await ben.until(lambda p: p["type"] == "message")
        study.room.finish("finished", "time is up")
        for who in (ana, ben):
            assert (await who.until(lambda p: p["type"] == "phase"))["phase"] == "review"
        payload = '<img src=x onerror="alert(1)">'
        await ben.send(
            type="retro",
            message_id=1,
            thinking=payload,
            wanted="no",
            why="I had not read anything lately",
            timing="never",
        )
        saved = (await ben.until(lambda p: p["type"] == "retro"))["entry"]
        assert saved == {
            "message_id": 1,
            "thinking": payload,
            "wanted": "no",
            "why": "I had not read anything lately",
            "timing": "never",
            "after_message_id": None,
        }
        await ben.send(type="retro", message_id=1, wanted="maybe")
        assert (
            "not one of the answers" in (await ben.until(lambda p: p["type"] == "error"))["message"]
        )
        await ben.send(type="retro", message_id=99, thinking="x")
        assert "no such message" in (await ben.until(lambda p: p["type"] == "error"))["message"]
        await ben.send(type="questionnaire", answers={})
        assert "no questionnaire" in (await ben.until(lambda p: p["type"] == "error"))["message"]
        # A second save of the same message replaces the first.
        await ben.send(type="retro", message_id=1, wanted="yes")
        await ben.until(lambda p: p["type"] == "retro")
        rows = study.rows("SELECT author, message_id, thinking, wanted FROM retrospective")
        assert rows == [("Ben", 1, "", "yes")]
        # Ana never heard of it, and a reconnecting Ben gets his own row back.
        await asyncio.sleep(0.3)
        assert "retro" not in {p["type"] for p in ana.received}
        again, hello = await open_browser(study.links[1], study.origin)
        await again.close()
        assert hello["phase"] == "review"
        assert hello["retrospective"] == [
            {
                "message_id": 1,
                "thinking": "",
                "wanted": "yes",
                "why": "",
                "timing": None,
                "after_message_id": None,
            }
        ]
        ana_again, hello_a = await open_browser(study.links[0], study.origin)
        assert hello_a["retrospective"] == []
        for who in (ana, ben, ana_again):
            await who.close()


async def test_a_condition_shows_the_agents_thoughts_and_is_recorded(tmp_path, embedder):
    async with live_study(tmp_path, embedder, show_thoughts=True) as study:
        ana, hello = await _join(study.links[0], study.origin, "Ana")
        assert hello["thoughts_shown"] is True
        await ana.send(type="say", text="Has anyone been to Lisbon? I am going in May.")
        thought = await ana.until(lambda p: p["type"] == "thought")
        assert set(thought) == {"type", "name", "id", "text", "motivation"}
        assert thought["name"] == study.room.agents[0].name
        rated = await ana.until(lambda p: p["type"] == "thought" and p["motivation"] is not None)
        assert 1 <= rated["motivation"] <= 5
        formed = {t for (t,) in study.rows("SELECT text FROM thoughts")}
        assert thought["text"] in formed
        [(config,)] = study.rows("SELECT config FROM sessions")
        assert json.loads(config)["room"]["show_thoughts"] is True
