"""Raters from their browsers, for tests and the benchmark: real sessions with tell-tale
markers, a rating server on 127.0.0.1, and scripted raters that speak the page's protocol.

A scripted rater does what a person does on the page, frame for frame: opens a link (or the open
link, and follows its redirect), reads each conversation (``shown``), marks a turn, answers the
seven statements or chooses between two conversations with a reason, and goes on until it gets
its completion code. It counts what it sent and what was acknowledged, and times each answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import aiohttp

from playground.cli import main as cli
from playground.rating.store import CONVERSATION_METRICS, PlanKind, RatingStore
from playground.rating.web.server import RaterServer
from playground.storage import open_database

#: Seconds a scripted rater waits for any one reply.
REPLY_WAIT = 10


class Secrets(TypedDict):
    conditions: tuple[str, str]
    engine: str
    model: str
    origin: str
    experiment: str


#: Values a rater's page must never carry: each session's condition, engine, model and message
#: origins are set to these (and the session ids are secret too).
SECRETS: Secrets = {
    "conditions": ("cond-alpha-QXZ", "cond-beta-QXZ"),
    "engine": "engine-marker-QXZ",
    "model": "model-marker-QXZ",
    "origin": "origin-marker-QXZ",
    "experiment": "exp-marker-QXZ",
}


def simulated_sessions(path: Path, count: int = 4) -> list[str]:
    """``count`` finished offline conversations in ``path``, alternating between the two marker
    conditions, in one experiment; their ids."""
    ids = []
    for seed in range(1, count + 1):
        out, err = io.StringIO(), io.StringIO()
        argv = ["simulate", "--agents", "3", "--turns", "5", "--seed", str(seed)]
        assert cli.main([*argv, "--db", str(path), "--quiet"], out=out, err=err) == 0, (
            err.getvalue()
        )
        ids.append(out.getvalue().strip().splitlines()[-1])
    db = open_database(path)
    with db.conn:
        db.execute(
            "INSERT INTO experiments (id, name, config, created_at) VALUES (?, ?, '{}', ?)",
            [SECRETS["experiment"], SECRETS["experiment"], "2026-01-01T00:00:00.000Z"],
        )
        for i, sid in enumerate(ids):
            db.execute(
                "UPDATE sessions SET condition = ?, engine = ?, model = ?, experiment_id = ?,"
                " status = 'finished' WHERE id = ?",
                [
                    SECRETS["conditions"][i % 2],
                    SECRETS["engine"],
                    SECRETS["model"],
                    SECRETS["experiment"],
                    sid,
                ],
            )
            db.execute(
                "UPDATE messages SET origin = ? WHERE session_id = ?", [SECRETS["origin"], sid]
            )
    db.close()
    return ids


def forbidden(db_path: Path) -> list[str]:
    """Every value that must never reach a rater, read from the database: each session's id,
    condition, engine and model, the messages' origins and the experiments' ids."""
    db = open_database(db_path)
    try:
        rows = db.execute("SELECT id, condition, engine, model FROM sessions").fetchall()
        rows += db.execute("SELECT DISTINCT origin FROM messages").fetchall()
        rows += db.execute("SELECT id FROM experiments").fetchall()
    finally:
        db.close()
    return sorted({str(v) for row in rows for v in row if v})


@contextlib.asynccontextmanager
async def live_raters(
    db_path: Path, plan_id: int, *, cps: int = 1000
) -> AsyncIterator[RaterServer]:
    """A rating server for ``plan_id`` on 127.0.0.1 (any free port), stopped afterwards."""
    db = open_database(db_path)
    server = RaterServer(db, plan_id, cps=cps)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
        db.close()


def make_plan(
    db_path: Path, kind: PlanKind, raters: list[str], per_rater: int, ids: list[str]
) -> int:
    """A rating plan of ``kind`` over ``ids`` (seed 7); its id."""
    db = open_database(db_path)
    try:
        plan = RatingStore(db).create_plan(
            f"{kind} plan", kind, raters, per_rater, sessions=ids, seed=7
        )
        return plan.id
    finally:
        db.close()


@dataclass
class Tally:
    """What scripted raters sent, what was acknowledged, and how long each reply took."""

    rates: int = 0
    prefers: int = 0
    marks: int = 0
    acks: int = 0
    refused: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    raters: list[str] = field(default_factory=list)
    frame_ms: list[float] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)


class RaterSocket:
    """A rater's page as the server sees it: its WebSocket, frame by frame."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, tally: Tally) -> None:
        self.ws = ws
        self.tally = tally
        self.seq = 0

    async def receive(self) -> dict[str, Any]:
        msg = await asyncio.wait_for(self.ws.receive(), REPLY_WAIT)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"the socket closed ({msg.type.name}, {msg.data}, {msg.extra})")
        frame: dict[str, Any] = json.loads(msg.data)
        self.tally.frames.append(frame)
        return frame

    async def ask(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        """Send a frame; the replies up to its ack or refusal (and the task after an answer)."""
        self.seq += 1
        started = time.perf_counter()
        await self.ws.send_str(json.dumps({**frame, "seq": self.seq}))
        replies = [await self.receive()]
        self.tally.frame_ms.append((time.perf_counter() - started) * 1000)
        if replies[0]["kind"] == "ack":
            self.tally.acks += 1
            if frame["kind"] in ("rate", "prefer"):
                replies.append(await self.receive())
        elif replies[0]["kind"] == "refused":
            self.tally.refused.append(replies[0]["message"])
            if replies[0]["message"].startswith("This page shows an assignment"):
                replies.append(await self.receive())
        return replies


async def open_page(
    http: aiohttp.ClientSession, link: str, tally: Tally
) -> tuple[str, RaterSocket, list[dict[str, Any]]]:
    """Open a rater's link (following an open link's redirect) and its socket: the page's
    address, the socket, and the first frames (welcome, then the task or the code)."""
    started = time.perf_counter()
    async with http.get(link) as response:
        await response.read()
        response.raise_for_status()
        page = str(response.url)
    tally.page_ms.append((time.perf_counter() - started) * 1000)
    origin = f"{response.url.scheme}://{response.url.host}:{response.url.port}"
    ws = await http.ws_connect(f"{page}/ws", headers={"Origin": origin})
    sock = RaterSocket(ws, tally)
    return page, sock, [await sock.receive(), await sock.receive()]


async def work_through(
    sock: RaterSocket, task: dict[str, Any], rng: random.Random, think: float = 0.0
) -> dict[str, Any]:
    """Answer tasks until the completion code arrives; the ``finished`` frame."""
    while task["kind"] == "task":
        position = task["position"]
        for part, conv in enumerate(task["conversations"]):
            await sock.ask(
                {"kind": "shown", "task": position, "part": part, "count": len(conv["lines"])}
            )
            await asyncio.sleep(think)
        if task["mode"] == "conversation":
            n = rng.randint(1, len(task["conversations"][0]["lines"]))
            await sock.ask({"kind": "mark", "task": position, "part": 0, "n": n, "comment": "odd"})
            sock.tally.marks += 1
            await asyncio.sleep(think)
            values = {m.key: rng.randint(1, 7) for m in CONVERSATION_METRICS}
            replies = await sock.ask({"kind": "rate", "task": position, "values": values})
            sock.tally.rates += 1
        else:
            choice = rng.choice("AB")
            replies = await sock.ask(
                {"kind": "prefer", "task": position, "choice": choice, "reason": "flows better"}
            )
            sock.tally.prefers += 1
        await asyncio.sleep(think)
        task = replies[-1]
    return task


async def crowd_worker(
    open_link: str, deadline: float, tally: Tally, seed: int, think: float = 0.0
) -> None:
    """Arrivals through a plan's open link, one after the other, until ``deadline``
    (``time.monotonic()``) or until every rater is taken: each works through its assignments."""
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        # A fresh browser each time (no cookie): a new arrival, so the next free rater.
        async with aiohttp.ClientSession() as http:
            try:
                _page, sock, (welcome, task) = await open_page(http, open_link, tally)
            except aiohttp.ClientResponseError as exc:
                if exc.status == 410:  # every rater is taken
                    return
                raise
            tally.raters.append(welcome["rater"])
            finished = await work_through(sock, task, rng, think)
            tally.codes.append(finished["code"])
            await sock.ws.close()
