"""A live study for tests, benchmarks and screenshots: an offline room with invited seats,
served on 127.0.0.1 (or a whole study plan of three short conversations), and a participant's
socket as the page speaks to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from playground import events, factory, personas
from playground.clock import SystemClock
from playground.embedding.cache import CachingEmbedder
from playground.rating.user_study import TOPICS
from playground.room import loops
from playground.room.room import Room
from playground.settings import load_settings
from playground.storage import open_database
from playground.study.hub import StudyHub
from playground.study.plan import Listen, PlanRunner, create_plan
from playground.study.review import PlanStep
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
        return read_rows(self.db_path, sql, params)


def read_rows(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read the database as another program would (a connection of its own)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
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
    in_plan: bool = False,
    **room: object,
) -> AsyncIterator[Study]:
    """A session with ``agents`` offline agents and ``humans`` seats, served on a free port of
    127.0.0.1, its real-time loop running; everything is stopped and closed afterwards.

    ``in_plan``: the session is the first of three conversations of a study plan, as its people
    see it (the study header, the questions about its first agent once it is over); no plan is
    saved, so the end-of-study questions are not part of it."""
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
    step = None
    if in_plan:
        step = PlanStep("plan-test", 1, 3, TOPICS[0], room_.agents[0].name)
    server = StudyServer(StudyHub(room_, book, step))
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


@contextlib.asynccontextmanager
async def rerun(
    study: Study, embedder: CachingEmbedder, *, port: int = 0
) -> AsyncIterator[tuple[StudyServer, str]]:
    """The conversation run again as a new session for the same seats (what `study resume`
    does after a kill), served by a new server on ``port`` (0: a free one); the people who had
    joined are seated again. The server and the new session's id."""
    settings = load_settings({}, {"engine": "offline", "seed": 4})
    engine = await factory.build_engine(settings, embedder=embedder)
    room, _ = await factory.create_room(
        settings,
        engine,
        db=study.db,
        personas=factory.pick_personas(personas.load_personas(), 1, 4),
        bus=events.EventBus(),
    )
    book = SeatBook(study.db, study.room.session_id)
    for seat in book.seats:
        if seat.name is not None:
            room.add_human(seat.name, remote=True)
    server = StudyServer(StudyHub(room, book), port=port)
    await server.start()
    try:
        yield server, room.session_id
    finally:
        if room.status == "running":
            room.finish("interrupted", "the test ended")
        await server.stop()
        await engine.close()


@dataclass
class PlanStudy:
    plan_id: str
    links: list[str]
    origin: str
    db_path: Path
    task: asyncio.Task[None]

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return read_rows(self.db_path, sql, params)


@contextlib.asynccontextmanager
async def live_plan(
    tmp_path: Path,
    embedder: CachingEmbedder,
    *,
    humans: int = 1,
    seconds: float = 2.0,
    group: int = 1,
    seed: int = 2,
    plan_id: str | None = None,
    port: int = 0,
) -> AsyncIterator[PlanStudy]:
    """A new study plan of three offline conversations of ``seconds`` each (or, with
    ``plan_id``, the plan of that id in ``tmp_path``'s database, resumed), run on a free port of
    127.0.0.1 (its runner waits at most a minute for everyone's answers after each); the runner
    is cancelled afterwards if it has not finished. ``port``: where to listen (0: a free port;
    a resumed plan on its first run's port serves the pages that stayed open)."""
    settings = load_settings({}, {"engine": "offline", "seed": 5, "typing_cps": 400.0})
    db_path = tmp_path / "study.db"
    db = open_database(db_path)
    library = personas.load_personas()
    now = SystemClock().now_iso()
    if plan_id is None:
        plan_id = create_plan(
            db, library, settings, humans=humans, group=group, seed=seed, minutes=seconds / 60,
            now=now,
        )  # fmt: skip
    engine = await factory.build_engine(settings, embedder=embedder)
    served: list[tuple[list[str], str]] = []

    def on_links(server: StudyServer, book: Any) -> None:
        assert server.listening is not None
        served.append(([server.link(s) for s in book.seats], server.listening.origin))

    runner = PlanRunner(
        db,
        plan_id,
        engine,
        library,
        settings,
        listen=Listen(port=port),
        review_minutes=1.0,
        on_links=on_links,
    )
    task = asyncio.ensure_future(runner.run())
    try:
        for _ in range(600):
            if served or task.done():
                break
            await asyncio.sleep(0.1)
        if not served:
            if task.done():
                task.result()  # raises the runner's own error
            raise TimeoutError("the study plan's server did not start")
        links, origin = served[0]
        yield PlanStudy(plan_id, links, origin, db_path, task)
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await engine.close()
        db.close()


#: The frames about a conversation: the page names the one it shows (from its hello).
ABOUT_A_CONVERSATION = {"note", "label", "retro", "questionnaire", "final"}


class Browser:
    """One participant's socket, as the page speaks to the server (JSON frames)."""

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse):
        self.session, self.ws = session, ws
        self.received: list[dict[str, Any]] = []
        #: The conversation the latest hello named.
        self.conversation: str | None = None

    async def send(self, **payload: Any) -> None:
        """Send a frame; one about a conversation names the one shown, as the page does."""
        if payload.get("type") in ABOUT_A_CONVERSATION:
            payload.setdefault("session", self.conversation)
        await self.ws.send_json(payload)

    async def next(self, seconds: float = 20) -> dict[str, Any]:
        """The next frame, waiting at most ``seconds``."""
        frame = await asyncio.wait_for(self.ws.receive(), seconds)
        if frame.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"closed: {frame.type} {frame.data} {frame.extra}")
        payload = dict(frame.json())
        self.received.append(payload)
        if payload.get("type") == "hello":
            self.conversation = payload["session"]
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


async def open_browser(
    link: str, origin: str, *, after: int = 0, conversation: str | None = None
) -> tuple[Browser, dict[str, Any]]:
    """Connect to ``link``'s socket with the page's Origin, having seen the messages up to
    ``after`` of the conversation ``conversation`` (a session id); the browser and its hello."""
    session = aiohttp.ClientSession()
    try:
        ws = await session.ws_connect(link + "/ws", headers={"Origin": origin})
    except BaseException:
        await session.close()
        raise
    browser = Browser(session, ws)
    await browser.send(type="open", after=after, session=conversation)
    hello = await browser.next()
    assert hello["type"] == "hello", hello
    return browser, hello
