"""A live study for tests, benchmarks and screenshots: an offline room with invited seats,
served on 127.0.0.1, and a participant's socket as the page speaks to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from playground import events, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.room import loops
from playground.room.room import Room
from playground.settings import load_settings
from playground.storage import open_database
from playground.study.hub import StudyHub
from playground.study.seats import Seat, SeatBook
from playground.study.server import StudyServer


@dataclass
class Study:
    room: Room
    server: StudyServer
    seats: list[Seat]
    db_path: Path
    db: Any
    loop_task: asyncio.Task[None]

    @property
    def links(self) -> list[str]:
        return [self.server.link(s) for s in self.seats]

    @property
    def origin(self) -> str:
        assert self.server.listening is not None
        return self.server.listening.origin

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read the database as another program would (a connection of its own)."""
        import sqlite3

        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()


@contextlib.asynccontextmanager
async def live_study(
    tmp_path: Path,
    embedder: CachingEmbedder,
    *,
    humans: int = 2,
    agents: int = 1,
    seed: int = 3,
    **room: object,
) -> AsyncIterator[Study]:
    """A session with ``agents`` offline agents and ``humans`` seats, served on a free port of
    127.0.0.1, its real-time loop running; everything is stopped and closed afterwards."""
    overrides = {"engine": "offline", "seed": seed, "pace": "typing", "typing_cps": 400.0}
    settings = load_settings({}, {**overrides, **room})
    db_path = tmp_path / "study.db"
    db = open_database(db_path)
    engine = await factory.build_engine(settings, embedder=embedder)
    room_, _ = await factory.create_room(
        settings,
        engine,
        db=db,
        personas=factory.pick_personas(personas.load_personas(), agents, seed),
        bus=events.EventBus(),
    )
    book = SeatBook(db, room_.session_id)
    seats = book.add(humans, room_.clock.now_iso())
    server = StudyServer(StudyHub(room_, book))
    await server.start()
    task = asyncio.ensure_future(loops.run_realtime(room_))
    try:
        yield Study(room_, server, seats, db_path, db, task)
    finally:
        if room_.status == "running":
            room_.finish("finished", "the test ended")
        room_.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await server.stop()
        await engine.close()
        db.close()


class Browser:
    """One participant's socket, as the page speaks to the server (JSON frames)."""

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse):
        self.session, self.ws = session, ws
        self.received: list[dict[str, Any]] = []

    async def send(self, **payload: Any) -> None:
        await self.ws.send_json(payload)

    async def next(self, seconds: float = 20) -> dict[str, Any]:
        """The next frame, waiting at most ``seconds``."""
        frame = await asyncio.wait_for(self.ws.receive(), seconds)
        if frame.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"closed: {frame.type} {frame.data} {frame.extra}")
        payload = dict(frame.json())
        self.received.append(payload)
        return payload

    async def until(self, pred: Any, seconds: float = 30) -> dict[str, Any]:
        """The first frame from now on that ``pred`` accepts, within ``seconds``."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while True:
            payload = await self.next(max(0.1, end - loop.time()))
            if pred(payload):
                return payload

    async def close(self) -> None:
        await self.ws.close()
        await self.session.close()


async def open_browser(link: str, origin: str, *, after: int = 0) -> tuple[Browser, dict[str, Any]]:
    """Connect to ``link``'s socket with the page's Origin; the browser and its hello."""
    session = aiohttp.ClientSession()
    try:
        ws = await session.ws_connect(link + "/ws", headers={"Origin": origin})
    except BaseException:
        await session.close()
        raise
    browser = Browser(session, ws)
    await browser.send(after=after)
    hello = await browser.next()
    assert hello["type"] == "hello", hello
    return browser, hello
