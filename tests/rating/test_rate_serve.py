"""The raters' web server on real SQLite and a real loopback server, spoken to as the page does.

Answers sent through the protocol land in the same rows as the window's blind rating (the
report reads them the same); nothing about a conversation but its speakers and texts goes out;
the links, the open link, resuming, refusals and the safe defaults.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import ssl
import time
from pathlib import Path

import aiohttp
import pytest

from playground import errors
from playground.rating import links as rater_links
from playground.rating.store import CONVERSATION_METRICS, RatingStore
from playground.rating.web import protocol
from playground.rating.web.server import FORBIDDEN, FULL, STATIC, RaterServer
from playground.report.stats import build_report
from playground.storage import open_database
from playground.web import HEADERS
from testbed.raters import (
    SECRETS,
    Tally,
    crowd_worker,
    forbidden,
    live_raters,
    make_plan,
    open_page,
    work_through,
)
from tests.support.tls import self_signed

pytestmark = pytest.mark.asyncio

ALL = {m.key: 5 for m in CONVERSATION_METRICS}


def _rows(path: Path, sql: str) -> list[tuple]:
    db = open_database(path)
    try:
        return [tuple(r) for r in db.execute(sql).fetchall()]
    finally:
        db.close()


async def test_a_rater_reads_marks_and_rates_into_the_windows_rows(rater_db, tmp_path):
    """Through the browser's frames, then the same answers through the window's store calls on a
    copy: the rows and the report agree, and both equal a hand computation."""
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["ann", "ben"], 2, ids)
    window_copy = tmp_path / "window.db"
    window_copy.write_bytes(path.read_bytes())
    tally = Tally()
    answers: dict[str, list[tuple[int, dict[str, int]]]] = {}
    async with live_raters(path, plan_id) as server, aiohttp.ClientSession() as http:
        for rater, link in server.rater_links():
            _page, sock, (welcome, task) = await open_page(http, link, tally)
            assert welcome["rater"] == rater
            assert [s["key"] for s in welcome["statements"]] == [
                m.key for m in CONVERSATION_METRICS
            ]
            for value in (2, 6):
                assert task["kind"] == "task"
                count = len(task["conversations"][0]["lines"])
                await sock.ask(
                    {"kind": "shown", "task": task["position"], "part": 0, "count": count}
                )
                await sock.ask(
                    {
                        "kind": "mark",
                        "task": task["position"],
                        "part": 0,
                        "n": 2,
                        "comment": "abrupt",
                    }
                )
                values = {**ALL, "coherence": value}
                replies = await sock.ask(
                    {"kind": "rate", "task": task["position"], "values": values}
                )
                assert replies[0] == {"kind": "ack", "seq": sock.seq}
                answers.setdefault(rater, []).append((task["position"], values))
                task = replies[-1]
            assert task["kind"] == "finished"
            assert re.fullmatch(f"[{rater_links.ALPHABET}]{{10}}", task["code"])
            await sock.ws.close()
    assert not tally.refused
    # The window's path: the same answers through RatingStore, as RaterWindow calls it.
    db = open_database(window_copy)
    store = RatingStore(db)
    for rater, done in answers.items():
        for position, values in done:
            a = next(x for x in store.assignments(plan_id, rater) if x.position == position)
            messages = db.execute(
                "SELECT id FROM messages WHERE session_id = ? ORDER BY id", [a.session_a]
            ).fetchall()
            store.mark_turn(a.session_a, messages[1][0], rater, "abrupt")
            store.rate_conversation(a.session_a, rater, values, assignment_id=a.id)
    db.close()
    shape = (
        "SELECT session_id, rater, instrument, metric, value, assignment_id FROM ratings"
        " ORDER BY session_id, rater, metric"
    )
    assert _rows(path, shape) == _rows(window_copy, shape)
    marks = "SELECT session_id, message_id, rater, comment FROM turn_marks ORDER BY 1, 2, 3"
    assert _rows(path, marks) == _rows(window_copy, marks)
    completed = "SELECT id, completed_at IS NOT NULL FROM assignments ORDER BY id"
    assert _rows(path, completed) == _rows(window_copy, completed)
    # The report: coherence per condition, by hand from what was sent.
    db = open_database(path)
    report = build_report(db)
    cond = dict(db.execute("SELECT id, condition FROM sessions").fetchall())
    by_hand: dict[str, list[int]] = {}
    for rater, done_tasks in answers.items():
        for position, values in done_tasks:
            a = next(
                x for x in RatingStore(db).assignments(plan_id, rater) if x.position == position
            )
            by_hand.setdefault(cond[a.session_a], []).append(values["coherence"])
    db.close()
    for row in report.metrics:
        if row.metric == "coherence":
            assert row.n == len(by_hand[row.condition])
            assert row.mean == pytest.approx(sum(by_hand[row.condition]) / row.n)


async def test_pairwise_needs_both_conversations_seen_and_a_reason(rater_db):
    path, ids = rater_db
    plan_id = make_plan(path, "pairwise", ["ann"], 1, ids)
    tally = Tally()
    async with live_raters(path, plan_id) as server, aiohttp.ClientSession() as http:
        _page, sock, (_welcome, task) = await open_page(http, server.rater_links()[0][1], tally)
        assert task["mode"] == "pairwise"
        assert [c["label"] for c in task["conversations"]] == ["A", "B"]
        pos = task["position"]
        prefer = {"kind": "prefer", "task": pos, "choice": "B", "reason": "livelier"}
        first = len(task["conversations"][0]["lines"])
        await sock.ask({"kind": "shown", "task": pos, "part": 0, "count": first})
        [refused] = await sock.ask(prefer)
        assert refused["message"] == "watch both conversations to the end (or use “Show all”) first"
        second = len(task["conversations"][1]["lines"])
        await sock.ask({"kind": "shown", "task": pos, "part": 1, "count": second})
        [blank] = await sock.ask({**prefer, "reason": "   "})
        assert blank["message"] == "please write why you chose it: a reason is required"
        [empty] = await sock.ask({**prefer, "reason": ""})
        assert empty["kind"] == "refused"
        assert "reason" in empty["message"]
        ack, finished = await sock.ask(prefer)
        assert ack["kind"] == "ack"
        assert finished["kind"] == "finished"
    db = open_database(path)
    a = RatingStore(db).assignments(plan_id, "ann")[0]
    row = db.execute("SELECT first_id, second_id, chosen_id, reason FROM preferences").fetchall()
    db.close()
    assert [tuple(r) for r in row] == [(a.session_a, a.session_b, a.session_b, "livelier")]


async def test_statements_wait_for_the_whole_conversation_and_a_reload_resumes(rater_db):
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["ann"], 2, ids)
    tally = Tally()
    async with live_raters(path, plan_id) as server, aiohttp.ClientSession() as http:
        link = server.rater_links()[0][1]
        _page, sock, (_w, task) = await open_page(http, link, tally)
        pos, lines = task["position"], task["conversations"][0]["lines"]
        await sock.ask({"kind": "shown", "task": pos, "part": 0, "count": 2})
        [early] = await sock.ask({"kind": "mark", "task": pos, "part": 0, "n": 3, "comment": ""})
        assert early["message"] == "a message can be marked once it has been shown"
        await sock.ask({"kind": "mark", "task": pos, "part": 0, "n": 2, "comment": "late"})
        [refused] = await sock.ask({"kind": "rate", "task": pos, "values": ALL})
        assert refused["message"] == "watch the whole conversation first (or use “Show all”)"
        await sock.ws.close()
        # The reload: the same task, two messages shown, the mark kept.
        _page, sock, (_w, again) = await open_page(http, link, tally)
        conv = again["conversations"][0]
        assert again["position"] == pos
        assert conv["shown"] == 2
        assert conv["marks"] == [{"n": 2, "comment": "late"}]
        await sock.ask({"kind": "shown", "task": pos, "part": 0, "count": len(lines)})
        [partial] = await sock.ask({"kind": "rate", "task": pos, "values": {"coherence": 3}})
        assert partial["message"] == "answer every statement first (6 still open)"
        [bad] = await sock.ask({"kind": "rate", "task": pos, "values": {**ALL, "coherence": 9}})
        assert bad["message"] == "coherence: 9 is outside the scale 1 to 7"
        _ack, following = await sock.ask({"kind": "rate", "task": pos, "values": ALL})
        assert following["position"] != pos
        # A stale page (still on the first task) is refused, then shown the current one.
        stale, current = await sock.ask({"kind": "shown", "task": pos, "part": 0, "count": 1})
        assert stale["kind"] == "refused"
        assert current == following
        await sock.ws.close()
        # The rater's answers come back on a reload of a finished task? No: it is done; the
        # page gets the next one with its own progress (nothing shown yet).
        _page, sock, (_w, resumed) = await open_page(http, link, tally)
        assert resumed["position"] == following["position"]
        assert resumed["conversations"][0]["shown"] == 0


async def test_no_condition_engine_model_origin_or_session_id_ever_goes_out(rater_db):
    """Every frame of a conversation plan and a pairwise plan, refusals included, the page and
    every static file: no forbidden value anywhere, and every frame is a protocol frame."""
    path, ids = rater_db
    secret = forbidden(path)
    assert set(SECRETS["conditions"]) <= set(secret)
    assert set(ids) <= set(secret)
    conversation = make_plan(path, "conversation", ["ann"], 2, ids)
    pairwise = make_plan(path, "pairwise", ["ben"], 2, ids)
    tally = Tally()
    texts: list[str] = []
    for plan_id in (conversation, pairwise):
        async with live_raters(path, plan_id) as server, aiohttp.ClientSession() as http:
            page, sock, (_w, task) = await open_page(http, server.rater_links()[0][1], tally)
            async with http.get(page) as r:
                texts.append(await r.text())
            assert server.listening is not None
            for name in STATIC:
                async with http.get(f"{server.listening.origin}/static/{name}") as r:
                    texts.append(await r.text())
            await sock.ask({"kind": "rate", "task": task["position"], "values": ALL})  # refused
            await sock.ask({"kind": "mark", "task": 99, "part": 0, "n": 1, "comment": ""})
            await sock.ws.send_str("{not json")
            await sock.receive()
            await sock.ws.send_str(json.dumps({"kind": "rate", "seq": 1, "task": 1, "x": ids[0]}))
            await sock.receive()
            await work_through(sock, task, random.Random(1))
    assert len(tally.frames) > 10
    assert {f["kind"] for f in tally.frames} == {"welcome", "task", "ack", "refused", "finished"}
    for frame in tally.frames:
        protocol.server_frame.validate_python(frame)  # only the protocol's fields
        text = json.dumps(frame, ensure_ascii=False)
        for value in secret:
            assert value not in text, (value, frame)
    for text in texts:
        for value in secret:
            assert value not in text


async def test_links_refuse_alike_and_carry_the_safe_defaults(rater_db):
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["ann"], 1, ids)
    other = make_plan(path, "conversation", ["ben"], 1, ids)
    db = open_database(path)
    other_token = rater_links.LinkStore(db).links(other, ["ben"])[0].token
    db.close()
    async with live_raters(path, plan_id) as server, aiohttp.ClientSession() as http:
        assert server.listening is not None
        origin = server.listening.origin
        link = server.rater_links()[0][1]
        for bad in ("/rate/nope", f"/rate/{other_token}", "/open/nope", f"/rate/{other_token}/ws"):
            async with http.get(origin + bad) as r:
                assert r.status == 403
                assert await r.text() == FORBIDDEN
                for key, value in HEADERS.items():
                    assert r.headers[key] == value
        async with http.get(link) as r:
            assert r.status == 200
            assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
        async with http.get(f"{origin}/static/server.py") as r:
            assert r.status == 404
        for headers in ({"Origin": "http://evil.example"}, {}):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(f"{link}/ws", headers=headers)
            assert refused.value.status == 403
        # DNS rebinding: a name that resolves here, with a matching Origin, is not the page's.
        rebound = link.replace("127.0.0.1", "localtest.invalid")
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await http.ws_connect(
                f"{link}/ws",
                headers={
                    "Host": rebound.split("/")[2],
                    "Origin": "http://" + rebound.split("/")[2],
                },
            )
        ws = await http.ws_connect(f"{link}/ws", headers={"Origin": origin})
        await ws.receive()
        await ws.receive()
        await ws.send_str("x" * (20 * 1024))  # over MAX_FRAME
        closed = await ws.receive()
        assert closed.type in (
            aiohttp.WSMsgType.CLOSE,
            aiohttp.WSMsgType.CLOSED,
            aiohttp.WSMsgType.ERROR,
        )


async def test_a_second_page_of_a_link_replaces_the_first_and_floods_are_cut(rater_db):
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["ann"], 1, ids)
    async with live_raters(path, plan_id) as server, aiohttp.ClientSession() as http:
        link = server.rater_links()[0][1]
        assert server.listening is not None
        origin = server.listening.origin
        first = await http.ws_connect(f"{link}/ws", headers={"Origin": origin})
        await first.receive()
        task = json.loads((await first.receive()).data)
        second = await http.ws_connect(f"{link}/ws", headers={"Origin": origin})
        closed = await first.receive()
        assert closed.type == aiohttp.WSMsgType.CLOSE
        assert closed.data == protocol.CloseCode.REPLACED
        await second.receive()
        await second.receive()
        shown = {"kind": "shown", "task": task["position"], "part": 0, "count": 1}
        for seq in range(200):
            await second.send_str(json.dumps({**shown, "seq": seq}))
        kinds = []
        while True:
            msg = await second.receive()
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            kinds.append(json.loads(msg.data)["kind"])
        assert msg.data == protocol.CloseCode.TOO_FAST
        assert kinds == ["ack"] * len(kinds)
        assert len(kinds) <= 100
        await server.stop()
        closed = await second.receive()
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


async def test_the_open_link_hands_out_each_rater_once_and_a_reload_keeps_the_rater(rater_db):
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["r0", "r1", "r2"], 1, ids)
    tally = Tally()
    async with live_raters(path, plan_id) as server:
        # r0 opened their own link: the open link hands out the others only.
        async with aiohttp.ClientSession() as own:
            _p, sock, _frames = await open_page(own, server.rater_links()[0][1], tally)
            await sock.ws.close()
        open_link = server.open_link()
        # A browser keeps cookies of 127.0.0.1; aiohttp does only when told to.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as first:
            page, sock, (welcome, task) = await open_page(first, open_link, tally)
            assert welcome["rater"] == "r1"
            await sock.ws.close()
            # The same browser again (its cookie): the same rater, the same page.
            again, sock, (welcome, _t) = await open_page(first, open_link, tally)
            assert (again, welcome["rater"]) == (page, "r1")
            finished = await work_through(sock, task, random.Random(2))
            await sock.ws.close()
        async with aiohttp.ClientSession() as second:
            _p, sock, (welcome, _t) = await open_page(second, open_link, tally)
            assert welcome["rater"] == "r2"
            await sock.ws.close()
        async with aiohttp.ClientSession() as third, third.get(open_link) as r:
            assert r.status == 410
            assert await r.text() == FULL
    db = open_database(path)
    rows = db.execute(
        "SELECT rater, claimed_at IS NOT NULL, opened_at IS NOT NULL, code FROM rater_links"
    ).fetchall()
    db.close()
    assert sorted(tuple(r) for r in rows) == [
        ("r0", 0, 1, None),
        ("r1", 1, 1, finished["code"]),
        ("r2", 1, 1, None),
    ]


async def test_a_rater_handed_out_whose_page_never_connects_is_handed_out_again(rater_db):
    """A link preview or a bot follows the open link but runs no page: after a while that rater
    goes to the next arrival; a rater whose page connected never does."""
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["r1", "r2"], 1, ids)
    db = open_database(path)
    store = rater_links.LinkStore(db)
    try:
        first = store.claim_next(plan_id)
        assert first is not None
        assert first.rater == "r1"
        second = store.claim_next(plan_id)
        assert second is not None
        assert second.rater == "r2"
        assert store.claim_next(plan_id) is None  # both handed out just now
        store.opened(plan_id, "r2")
        again = store.claim_next(plan_id, release_after=0)
        assert again is not None
        assert again.rater == "r1"
        store.opened(plan_id, "r1")
        assert store.claim_next(plan_id, release_after=0) is None
    finally:
        db.close()


async def test_scripted_raters_at_once_store_every_answer_exactly_once(rater_db):
    """The benchmark's raters for two seconds (the mechanism, never a time)."""
    path, ids = rater_db
    raters = [f"c{i}" for i in range(200)]
    conversation = make_plan(path, "conversation", raters, 2, ids)
    pairwise = make_plan(path, "pairwise", [f"p{i}" for i in range(200)], 2, ids)
    tally = Tally()
    async with live_raters(path, conversation) as a, live_raters(path, pairwise) as b:
        deadline = time.monotonic() + 2
        await asyncio.gather(
            *(crowd_worker((a if i % 2 else b).open_link(), deadline, tally, i) for i in range(8))
        )
    assert tally.rates > 0
    assert tally.prefers > 0
    assert not tally.refused
    db = open_database(path)
    count = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    assert count("SELECT COUNT(*) FROM ratings") == 7 * tally.rates
    assert count("SELECT COUNT(DISTINCT assignment_id) FROM ratings") == tally.rates
    assert count("SELECT COUNT(*) FROM preferences") == tally.prefers
    assert count("SELECT COUNT(*) FROM turn_marks") == tally.marks
    assert count("SELECT COUNT(*) FROM assignments WHERE completed_at IS NOT NULL") == (
        tally.rates + tally.prefers
    )
    assert count("SELECT COUNT(*) FROM rater_links WHERE code IS NOT NULL") == len(tally.codes)
    db.close()
    assert len(set(tally.codes)) == len(tally.codes)


async def test_two_servers_on_one_file_hand_out_each_rater_once(rater_db):
    """Two processes serving plans of one database (as the benchmark runs them) claim raters at
    the same moments: each claim waits for the other's write lock instead of failing (the first
    benchmark run answered some arrivals with a 500), and no rater is handed out twice."""
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", [f"r{i}" for i in range(120)], 1, ids)

    def claims() -> list[str]:
        db = open_database(path)
        try:
            store = rater_links.LinkStore(db)
            return [link.rater for _ in range(60) if (link := store.claim_next(plan_id))]
        finally:
            db.close()

    first, second = await asyncio.gather(asyncio.to_thread(claims), asyncio.to_thread(claims))
    assert len(first) + len(second) == 120
    assert sorted(first + second) == sorted(f"r{i}" for i in range(120))


async def test_with_a_certificate_pages_and_sockets_are_served_over_tls(rater_db, tmp_path):
    path, ids = rater_db
    plan_id = make_plan(path, "conversation", ["ann"], 1, ids)
    cert, key = self_signed(tmp_path)
    db = open_database(path)
    half = RaterServer(db, plan_id, certificate=cert)
    with pytest.raises(errors.SettingsError, match="both a certificate and its key"):
        await half.start()
    server = RaterServer(db, plan_id, certificate=cert, key=key)
    where = await server.start()
    try:
        assert where.origin.startswith("https://127.0.0.1:")
        open_link = server.open_link()
        trust = ssl.create_default_context(cafile=cert)
        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(cookie_jar=jar) as http:
            async with http.get(open_link, ssl=trust) as r:
                assert r.status == 200
                assert r.url.scheme == "https"
            [cookie] = list(jar)
            assert cookie["secure"]
            assert cookie["samesite"] == "Lax"
            with pytest.raises(aiohttp.ClientError):
                await http.get(open_link.replace("https://", "http://"))
            ws = await http.ws_connect(f"{r.url}/ws", headers={"Origin": where.origin}, ssl=trust)
            welcome = json.loads((await ws.receive()).data)
            assert welcome["rater"] == "ann"
            await ws.close()
    finally:
        await server.stop()
        db.close()
