"""Benchmark: a human study served to browsers, through ``playground serve`` as a researcher runs it.

1. **Load** (``--part load``): ``playground serve --humans 20`` (offline engine, one agent) in a
   process of its own, and 20 scripted participants on loopback WebSockets, each joining and then
   sending a message every 3–9 s (uniformly random) for ``--seconds`` (60). Printed: messages
   sent and saved, whether every participant received every saved message exactly once (nothing
   lost, nothing repeated), and the latency from one person's send to the other participants'
   receipt. Target: nothing lost; the median latency under 100 ms.
2. **Reply** (``--part reply``): one person and one agent, the agent on the LLM engine against
   the loopback server adding 300 ms per call (``testbed.llm_server --latency 0.3 --faithful``,
   its own process). Printed: from the person's message to the first agent reply on their page,
   beside the same measured in-process as the window runs the room (``post_human_message`` with
   the real-time loop): the difference is what serving to a browser adds. Both at typing pace,
   as when a person takes part (the agent's typing time is printed apart).

Both share the machine's cores with the server process. Run:
    .venv/bin/python bench/bench_study.py [--part load|reply|both] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
from _common import REPO, llm_server

from playground import events, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.room import loops
from playground.settings import load_settings

ENV = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
QUESTIONS = [
    "What is a good book you read lately?",
    "Where would you go for a weekend trip?",
    "What do you cook when you are tired?",
    "Which sport is fun to watch?",
    "What music do you play when you work?",
]


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def _ms(values: list[float]) -> str:
    if not values:
        return "n=0"
    v = [x * 1000 for x in values]
    return (
        f"median {statistics.median(v):.1f} ms · p95 {_pct(v, 0.95):.1f} ms · max {max(v):.1f} ms"
        f" · n={len(v)}"
    )


@contextlib.contextmanager
def serve(db: Path, humans: int, *extra: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """``playground serve`` in its own process; yields it and its invite links."""
    argv = [sys.executable, "-m", "playground", "serve", "--humans", str(humans), "--port", "0"]
    argv += ["--db", str(db), *extra]
    proc = subprocess.Popen(
        argv, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        links = [proc.stdout.readline().strip() for _ in range(humans)]
        if not all(link.startswith("http") for link in links):
            raise SystemExit(f"serve did not print {humans} links: {links}")
        yield proc, links
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


class Participant:
    def __init__(self, name: str, link: str) -> None:
        self.name, self.link = name, link
        self.session = aiohttp.ClientSession()
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.received: dict[int, tuple[float, dict[str, Any]]] = {}
        self.repeats = 0
        self.sent: dict[str, float] = {}
        self.errors: list[str] = []

    async def connect(self) -> None:
        origin = self.link.split("/join/")[0]
        self.ws = await self.session.ws_connect(self.link + "/ws", headers={"Origin": origin})
        await self.ws.send_json({"after": 0})
        await self.ws.send_json({"type": "join", "name": self.name})

    async def listen(self) -> None:
        assert self.ws is not None
        async for frame in self.ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            payload = json.loads(frame.data)
            now = time.perf_counter()
            if payload["type"] == "message":
                m = payload["message"]
                if m["id"] in self.received:
                    self.repeats += 1
                self.received[m["id"]] = (now, m)
            elif payload["type"] == "hello":
                for m in payload["messages"]:
                    self.received[m["id"]] = (now, m)
            elif payload["type"] == "error":
                self.errors.append(payload["message"])

    async def talk(self, until: float, rng: random.Random) -> None:
        assert self.ws is not None
        n = 0
        while True:
            await asyncio.sleep(rng.uniform(3, 9))
            if time.perf_counter() >= until:
                return
            n += 1
            text = f"{self.name} message {n}: {rng.choice(QUESTIONS)}"
            self.sent[text] = time.perf_counter()
            await self.ws.send_json({"type": "say", "text": text})

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        await self.session.close()


async def load(seconds: float) -> None:
    db = Path(tempfile.mkdtemp()) / "load.db"
    people = 20
    with serve(db, people, "--engine", "offline", "--agents", "1", "--seed", "5") as (proc, links):
        crowd = [Participant(f"P{i + 1:02d}", link) for i, link in enumerate(links)]
        await asyncio.gather(*(p.connect() for p in crowd))
        listeners = [asyncio.ensure_future(p.listen()) for p in crowd]
        start = time.perf_counter()
        await asyncio.gather(
            *(p.talk(start + seconds, random.Random(i)) for i, p in enumerate(crowd))
        )
        await asyncio.sleep(5)  # what is in flight arrives
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        await asyncio.sleep(0.5)
        for p in crowd:
            await p.close()
        for task in listeners:
            task.cancel()
    conn = sqlite3.connect(db)
    saved = dict(conn.execute("SELECT id, text FROM messages").fetchall())
    conn.close()
    sent = {text: (p, at) for p in crowd for text, at in p.sent.items()}
    by_text = {text: i for i, text in saved.items()}
    lost = [t for t in sent if t not in by_text]
    missing = sum(1 for p in crowd for i in saved if i not in p.received)
    latencies = [
        other.received[by_text[text]][0] - at
        for text, (sender, at) in sent.items()
        if text in by_text
        for other in crowd
        if other is not sender and by_text[text] in other.received
    ]
    agent = sum(1 for text in saved.values() if text not in sent)
    refused = sum(len(p.errors) for p in crowd)
    print(
        f"load: {people} participants for {seconds:.0f} s: {len(sent)} messages sent, {len(saved)}"
        f" saved ({agent} by the agent); lost {len(lost)}; a participant missed {missing} saved"
        f" message(s) in all and received {sum(p.repeats for p in crowd)} twice; {refused} refusals"
    )
    print(f"load: one person's send → the others' pages: {_ms(latencies)}")
    print("target: nothing lost; median under 100 ms")


async def reply_via_browser(base_url: str, rounds: int) -> tuple[list[float], list[float]]:
    db = Path(tempfile.mkdtemp()) / "reply.db"
    llm = ["--engine", "openai", "--base-url", base_url, "--api-key", "bench"]
    llm += ["--model", "fake-model", "--agents", "1", "--seed", "5"]
    waits, typing = [], []
    with serve(db, 1, *llm) as (_proc, [link]):
        person = Participant("Ana", link)
        await person.connect()
        listener = asyncio.ensure_future(person.listen())
        await asyncio.sleep(1.0)
        for question in QUESTIONS[:rounds]:
            seen = set(person.received)
            sent = time.perf_counter()
            assert person.ws is not None
            await person.ws.send_json({"type": "say", "text": question})
            while True:
                await asyncio.sleep(0.005)
                new = [(t, m) for i, (t, m) in person.received.items() if i not in seen]
                replies = [(t, m) for t, m in new if m["kind"] == "ai"]
                if replies:
                    at, m = min(replies, key=lambda r: r[0])
                    waits.append(at - sent)
                    typing.append(len(m["text"]) / 15.0)
                    break
                if time.perf_counter() - sent > 120:
                    raise SystemExit("no agent reply within 120 s")
            await asyncio.sleep(2.0)
        await person.close()
        listener.cancel()
    return waits, typing


async def reply_in_process(base_url: str, rounds: int) -> tuple[list[float], list[float]]:
    """As the window runs it: the room's real-time loop, a person's message posted in-process."""
    settings = load_settings(
        {},
        {
            "engine": "openai",
            "base_url": base_url,
            "api_key": "bench",
            "model": "fake-model",
            "seed": 5,
            "pace": "typing",
            "preset": "active-contributor",  # serve's default
        },
    )
    minilm = MiniLMEmbedder()
    await minilm.load()  # loaded before timing, as in the window by the time a person speaks
    engine = await factory.build_engine(settings, embedder=CachingEmbedder(minilm))
    bus = events.EventBus()
    posted: list[tuple[float, Any]] = []
    bus.subscribe(lambda e: posted.append((time.perf_counter(), e.message)), ["message_posted"])
    room, _ = await factory.create_room(
        settings,
        engine,
        db=None,
        personas=factory.pick_personas(personas.load_personas(), 1, 5),
        bus=bus,
    )
    room.add_human("Ana")
    task = asyncio.ensure_future(loops.run_realtime(room))
    waits, typing = [], []
    for question in QUESTIONS[:rounds]:
        before = len(posted)
        sent = time.perf_counter()
        await room.post_human_message("Ana", question)
        while not any(m.kind == "ai" for _, m in posted[before:]):
            await asyncio.sleep(0.005)
        at, m = next((t, m) for t, m in posted[before:] if m.kind == "ai")
        waits.append(at - sent)
        typing.append(len(m.text) / settings.room.typing_cps)
        await asyncio.sleep(2.0)
    room.finish("finished", "the benchmark ended")
    room.stop()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await engine.close()
    return waits, typing


async def reply(rounds: int) -> None:
    with llm_server(0.3) as base_url:
        browser, typed = await reply_via_browser(base_url, rounds)
        window, typed_w = await reply_in_process(base_url, rounds)
    print(
        f"reply: a person's message → the first agent reply on their page: {_ms(browser)}"
        f" (of which the agent's typing {statistics.median(typed):.2f} s median)"
    )
    print(
        f"reply: the same in-process, as the window runs the room: {_ms(window)}"
        f" (typing {statistics.median(typed_w):.2f} s median)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["load", "reply", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.part in ("load", "both"):
        asyncio.run(load(args.seconds))
    if args.part in ("reply", "both"):
        asyncio.run(reply(args.rounds))


if __name__ == "__main__":
    main()
