"""Benchmark: whole runs against a real local server, llama-cpp-python serving SmolLM2-135M.

What a user with a small local model pays per posted message, and how much of it a server's
prompt cache can save. Every run is a whole ``python -m playground`` process (start-up included)
with 3 agents, into a fresh database, against a fresh server:

1. ``inner-thoughts``: ``simulate --preset non-stop-chatter`` (the chattiest preset: a 135M
   model's motivation ratings stay low, and its agents speak mostly through System-1 replies);
2. ``batched``: the same with ``--evaluation-mode batched`` (one evaluation call per agent);
3. ``next-speaker``: the baseline, ``experiment --conditions next-speaker --conversations 1``
   (``simulate`` has no policy flag).

Between the CLI and the server sits a recording reverse proxy on 127.0.0.1 (aiohttp, in a thread
of its own): it forwards every request unchanged and records each chat request's messages, the
answer's status and ``usage`` and the call's wall time (queueing at the server included: it
answers one request at a time). Per run: wall seconds, agent messages posted (``messages`` rows
with ``speaker_kind = 'ai'`` but the icebreaker, which an AI participant posts too), requests,
and per posted message the seconds, requests, prompt and completion tokens; the session's end
reason and the client's dropped and cut answers.

Prompt tokens come in two kinds. ``usage.prompt_tokens`` is the *whole* prompt: llama-cpp-python
reports ``len(prompt_tokens)`` whether or not a prefix was reused. The tokens the server actually
*evaluated* (after reusing a cached prefix) are in its own log, one ``llama_perf_context_print:
prompt eval time = … / N tokens`` line per request, written only with ``--verbose True``. So
this bench starts the server itself, with ``testbed/real_server.py``'s command line (copied
here: the fixture hard-codes ``--verbose False``) plus ``--verbose True``; ``--server-cache``
chooses whether the RAM prompt cache (``--cache True``, which the fixture and
``scripts/local-model.sh`` pass) is on (the default), off, or both: then the runs in
``--compare-runs`` (default inner-thoughts) are done again without it, about 6 minutes more at
the default size; the three runs with it take about 14 minutes on 2 idle cores. Without the RAM cache, llama-cpp-python still reuses the prefix shared
with the request just before (its live KV state); with it, the longest prefix of any saved state.

Prefix reuse, measured on the recorded requests: each prompt as a chat-formatted text (role and
content of every message, in order); for each request, the longest common prefix, in characters,
with ANY earlier request of the same run — what an ideal prefix cache could skip. Printed: the
share of all prompt characters that is such a repeated prefix, overall and per kind of request
(told from its instructions: interpret, turn-type, thoughts, evaluate, articulate, ...). Beside
it, the same for a "volatile first" ordering: each recorded request reordered so that its last
user message (the conversation, the thought) comes before the system message (persona,
instructions), to show what putting the stable part first is worth.

The issue's reference figures (llama-server, SmolLM2, a chatty preset, before): 136 s, ≈25 calls
and ≈28.7 k tokens per posted message for inner-thoughts; 1.5 calls and 539 tokens for the
next-speaker baseline. The machine may be shared: the 1-minute load average, sampled every 5 s
during each run, is printed as mean/max (the server and the CLI alone make about 2).

Run: .venv/bin/python bench/bench_real_server.py [--quick] [--turns T] [--seed S]
     [--runs inner-thoughts,batched,next-speaker] [--server-cache both|on|off]
     [--compare-runs inner-thoughts] [--threads 2] [--timeout S] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import REPO

import aiohttp
from aiohttp import web

from playground.cognition import next_speaker, prompts
from playground.llm.limits import shared_prefix
from testbed.real_server import MODEL_ALIAS, RealServerMissing, installation, llama_cpp_server

AGENTS = 3
SEED = 3
TURNS = 6
QUICK_TURNS = 3
N_CTX = 4096
RUNS = ("inner-thoughts", "batched", "next-speaker")
CHAT_PATH = "/v1/chat/completions"
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
GEN_EVAL = re.compile(
    r"^llama_perf_context_print:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs", re.M
)
TOTAL = re.compile(r"llama_perf_context_print:\s+total time =\s*([\d.]+) ms")
PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")


# --- the server ------------------------------------------------------------------------------


@contextlib.contextmanager
def llama_server(*, cache: bool, threads: int, log: Path) -> Iterator[str]:
    """The tests' real server (testbed/real_server.py), verbose (each request's evaluated
    tokens are logged) and with the RAM prompt cache only when ``cache``; yields its root URL
    (``http://127.0.0.1:P``)."""
    with llama_cpp_server(cache=cache, threads=threads, log=log, verbose=True) as base:
        yield base.removesuffix("/v1")


@dataclass
class ServerLog:
    """What the server's verbose log says about the requests of one run."""

    requests: int = 0  # "prompt eval" lines: one per completion
    evaluated: int = 0  # prompt tokens actually evaluated
    prompt_ms: float = 0.0
    generated: int = 0
    gen_ms: float = 0.0
    prefix_hits: int = 0  # requests that reused a prefix of the live or a restored state
    reused: int = 0  # tokens of those prefixes
    ram_hits: int = 0  # states restored from the RAM cache
    #: One entry per completed chat request, in the order the server answered them.
    per_request: list[Served] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> ServerLog:
        out = cls()
        out.per_request = Served.parse_all(text)
        for m in PROMPT_EVAL.finditer(text):
            out.requests += 1
            out.prompt_ms += float(m.group(1))
            out.evaluated += int(m.group(2))
        for m in GEN_EVAL.finditer(text):
            out.gen_ms += float(m.group(1))
            out.generated += int(m.group(2))
        for m in PREFIX_HIT.finditer(text):
            out.prefix_hits += 1
            out.reused += int(m.group(1))
        out.ram_hits = text.count("Llama._create_completion: cache hit")
        return out


@dataclass
class Served:
    """What the server's verbose log says about one completed request."""

    evaluated: int = 0  # prompt tokens evaluated (after the reused prefix)
    reused: int = 0  # prompt tokens of the reused prefix
    prompt_ms: float = 0.0
    generated: int = 0
    gen_ms: float = 0.0
    total_ms: float = 0.0  # llama.cpp's own total: evaluation, generation and sampling
    ram_hit: bool = False

    @classmethod
    def parse_all(cls, text: str) -> list[Served]:
        """Each perf block is printed before the uvicorn line of its answer; a refused request
        (4xx/5xx) has an access line and no block."""
        out: list[Served] = []
        cur: Served | None = None
        for line in text.splitlines():
            if line.startswith("Llama._create_completion: cache hit"):
                cur = cur or cls()
                cur.ram_hit = True
            elif m := PREFIX_HIT.search(line):
                cur = cur or cls()
                cur.reused = int(m.group(1))
            elif m := PROMPT_EVAL.search(line):
                cur = cur or cls()
                cur.prompt_ms, cur.evaluated = float(m.group(1)), int(m.group(2))
            elif m := GEN_EVAL.search(line):
                cur = cur or cls()
                cur.gen_ms, cur.generated = float(m.group(1)), int(m.group(2))
            elif m := TOTAL.search(line):
                cur = cur or cls()
                cur.total_ms = float(m.group(1))
            elif "POST /v1/chat/completions HTTP" in line and '" 200' in line:
                out.append(cur or cls())
                cur = None
            elif "POST /v1/chat/completions HTTP" in line:
                cur = None
        return out


# --- the recording proxy ---------------------------------------------------------------------


@dataclass
class Call:
    """One chat request through the proxy."""

    messages: list[dict[str, Any]]
    status: int
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    n: int = 1
    params: dict[str, Any] = field(default_factory=dict)  # the request's other fields
    started: float = 0.0  # perf_counter when the proxy received it
    content: str = ""  # the first choice's answer


class Proxy:
    """A reverse proxy on 127.0.0.1 in a thread with its own event loop: forwards every request
    to ``upstream`` unchanged and records the chat requests."""

    def __init__(self) -> None:
        self.upstream = ""
        self.calls: list[Call] = []
        self.lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.session: aiohttp.ClientSession | None = None
        self.runner: web.AppRunner | None = None
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait()

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        ready.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_read=900),
            connector=aiohttp.TCPConnector(limit=0),
        )
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.SockSite(self.runner, self.sock).start()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self.session is not None
        body = await request.read()
        headers = {
            k: v
            for k, v in request.headers.items()
            if k.lower() in ("content-type", "authorization", "accept")
        }
        t0 = time.perf_counter()
        try:
            async with self.session.request(
                request.method, self.upstream + request.path_qs, data=body, headers=headers
            ) as resp:
                data = await resp.read()
                status, ctype = resp.status, resp.headers.get("Content-Type", "application/json")
        except aiohttp.ClientError as exc:
            data, status, ctype = str(exc).encode(), 502, "text/plain"
        seconds = time.perf_counter() - t0
        if request.method == "POST" and request.path.endswith("/chat/completions"):
            self._record(body, data, status, seconds, t0)
        return web.Response(body=data, status=status, headers={"Content-Type": ctype})

    def _record(self, body: bytes, data: bytes, status: int, seconds: float, t0: float) -> None:
        try:
            sent = json.loads(body)
        except ValueError:
            sent = {}
        call = Call(list(sent.get("messages") or []), status, seconds, n=int(sent.get("n") or 1))
        call.params = {k: v for k, v in sent.items() if k != "messages"}
        call.started = t0
        with contextlib.suppress(ValueError, AttributeError, TypeError, IndexError, KeyError):
            answer = json.loads(data)
            call.content = str(answer["choices"][0]["message"].get("content") or "")
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            usage = json.loads(data).get("usage") or {}
            call.prompt_tokens = int(usage.get("prompt_tokens") or 0)
            call.completion_tokens = int(usage.get("completion_tokens") or 0)
        with self.lock:
            self.calls.append(call)

    def take(self) -> list[Call]:
        """The calls recorded since the last take."""
        with self.lock:
            out, self.calls = self.calls, []
        return out

    def close(self) -> None:
        async def stop() -> None:
            if self.runner is not None:
                await self.runner.cleanup()
            if self.session is not None:
                await self.session.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


# --- prompts: kinds and prefix reuse ---------------------------------------------------------


def label(messages: list[dict[str, Any]]) -> str:
    """The kind of a request, told from its instructions (the system message) or its last user
    message."""
    system = next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    follow_up = any(m.get("role") == "assistant" for m in messages)
    if not system and last.startswith("Reply with the JSON object"):
        return "probe"
    if system == prompts.INTERPRET_SYSTEM:
        kind = "interpret"
    elif system == prompts.TURN_TYPE_SYSTEM:
        kind = "turn-type"
    elif system == next_speaker.SYSTEM:
        kind = "next-speaker pick"
    elif prompts.THINKING_TEXT in system or prompts.THINKING_TEXT in last:
        kind = "System-1 thoughts" if "System-1 thought(s)" in last else "System-2 thoughts"
    elif "For every thought, in the order listed" in system:
        kind = "evaluate (batched)"
    elif prompts.EVALUATION_TEXT in system:
        kind = "evaluate"
    elif "When you decide to say a thought out loud" in system:
        kind = "articulate"
    elif "When it is your turn to speak" in system:
        kind = "response"
    else:
        kind = "other: " + " ".join(last.split()[:4])
    if follow_up and last.startswith("Now "):
        kind += " → rating"
    elif follow_up and last.startswith("That answer could not be read"):
        kind += " → repair"
    return kind


def chat_text(messages: list[dict[str, Any]]) -> str:
    """The prompt as a server formats it, near enough: role and content of each message."""
    return "".join(f"<|{m.get('role')}|>\n{m.get('content') or ''}\n" for m in messages)


def volatile_first(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The opposite ordering: the last user message moved before everything, the system
    message included."""
    idx = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not idx:
        return messages
    i = idx[-1]
    return [messages[i], *messages[:i], *messages[i + 1 :]]


def repeated_prefixes(texts: list[str]) -> list[int]:
    """For each text, its longest common prefix with any earlier one (0 for the first). The
    longest prefix shared with a set of strings is shared with a neighbour in sorted order."""
    seen: list[str] = []
    out = []
    for t in texts:
        i = bisect.bisect_left(seen, t)
        best = 0
        if i > 0:
            best = shared_prefix(seen[i - 1], t)
        if i < len(seen):
            best = max(best, shared_prefix(seen[i], t))
        out.append(best)
        seen.insert(i, t)
    return out


@dataclass
class Reuse:
    """Repeated-prefix shares of one run, overall and per kind of request."""

    chars: int = 0
    stable: int = 0  # repeated-prefix characters, prompts as sent (stable part first)
    volatile: int = 0  # the same with the volatile part first
    kinds: dict[str, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, calls: list[Call]) -> Reuse:
        out = cls()
        sent = [chat_text(c.messages) for c in calls]
        flipped = [chat_text(volatile_first(c.messages)) for c in calls]
        for c, text, s, v in zip(
            calls, sent, repeated_prefixes(sent), repeated_prefixes(flipped), strict=True
        ):
            k = out.kinds.setdefault(
                label(c.messages),
                {"n": 0, "chars": 0, "stable": 0, "volatile": 0, "tokens": 0, "seconds": 0.0},
            )
            for key, value in (
                ("n", 1),
                ("chars", len(text)),
                ("stable", s),
                ("volatile", v),
                ("tokens", c.prompt_tokens),
                ("seconds", c.seconds),
            ):
                k[key] += value
            out.chars += len(text)
            out.stable += s
            out.volatile += v
        return out


# --- the runs --------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    server_cache: bool
    wall: float = float("nan")
    returncode: int = 0
    posted: int = 0
    end_reason: str = ""
    status: str = ""
    dropped: int = 0
    cut: int = 0
    client_calls: int = 0
    retries: int = 0
    calls: list[Call] = field(default_factory=list)
    log: ServerLog = field(default_factory=ServerLog)
    reuse: Reuse = field(default_factory=Reuse)
    load: str = ""
    error: str = ""

    @property
    def title(self) -> str:
        return self.name if self.server_cache else f"{self.name}, no cache"

    @property
    def requests(self) -> int:
        return len(self.calls)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.calls if c.status != 200)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def setup(self) -> int:
        """The connect-time probes and the requests refused while the client learned what the
        server accepts: paid once per run, not per message."""
        return sum(1 for c in self.calls if c.status != 200 or label(c.messages) == "probe")

    def per(self, value: float) -> float:
        return value / self.posted if self.posted else float("nan")


def argv_for(
    name: str,
    base_url: str,
    turns: int,
    seed: int,
    db: Path,
    timeout: float | None,
    extra: tuple[str, ...] = (),
) -> list[str]:
    flags = ["--engine", "openai", "--base-url", base_url, "--model", MODEL_ALIAS, *extra]
    flags += ["--agents", str(AGENTS), "--turns", str(turns), "--seed", str(seed), "--db", str(db)]
    if timeout:
        flags += ["--timeout", str(timeout)]
    if name == "next-speaker":
        return [
            "experiment",
            "--conditions",
            "next-speaker",
            "--conversations",
            "1",
            *flags,
            "--no-progress",
        ]
    argv = ["simulate", *flags, "--preset", "non-stop-chatter"]
    if name == "batched":
        argv += ["--evaluation-mode", "batched"]
    return argv


def read_db(run: Run, db: Path) -> None:
    if not db.exists():
        return
    with contextlib.closing(sqlite3.connect(db)) as conn:
        run.posted = conn.execute(
            "SELECT COUNT(*) FROM messages WHERE speaker_kind = 'ai' AND origin != 'icebreaker'"
        ).fetchone()[0]
        rows = conn.execute(
            "SELECT status, end_reason, dropped, cut, calls, retries FROM sessions ORDER BY created_at"
        ).fetchall()
    run.status = ", ".join(str(r[0]) for r in rows)
    run.end_reason = "; ".join(str(r[1]) for r in rows)
    run.dropped = sum(r[2] or 0 for r in rows)
    run.cut = sum(r[3] or 0 for r in rows)
    run.client_calls = sum(r[4] or 0 for r in rows)
    run.retries = sum(r[5] or 0 for r in rows)


def one_run(
    name: str, cache: bool, proxy: Proxy, work: Path, args: argparse.Namespace, turns: int
) -> Run:
    """A fresh server, one CLI run through the proxy, its figures."""
    run = Run(name, cache)
    tag = f"{name}-{'cache' if cache else 'nocache'}"
    log, db = work / f"{tag}.server.log", work / f"{tag}.db"
    with llama_server(cache=cache, threads=args.threads, log=log) as root:
        proxy.upstream = root
        proxy.take()
        before = log.stat().st_size
        argv = argv_for(
            name, proxy.url + "/v1", turns, args.seed, db, args.timeout, tuple(args.cli.split())
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
        loads: list[float] = []
        done = threading.Event()

        def sample() -> None:
            while True:
                loads.append(os.getloadavg()[0])
                if done.wait(5.0):
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "playground", *argv],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
        )
        run.wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        run.load = f"{sum(loads) / len(loads):.1f}/{max(loads):.1f}"
        time.sleep(0.3)  # the server's last log lines
        with open(log, "rb") as f:
            f.seek(before)
            run.log = ServerLog.parse(f.read().decode("utf-8", "replace"))
    run.calls = proxy.take()
    run.returncode = proc.returncode
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        run.error = " | ".join(proc.stderr.strip().splitlines()[-3:])
    read_db(run, db)
    run.reuse = Reuse.of(run.calls)
    with open(work / f"{tag}.calls.json", "w") as out:
        json.dump([vars(c) for c in run.calls], out)
    return run


# --- printing --------------------------------------------------------------------------------


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def show(run: Run) -> None:
    """One run's line, printed as soon as it ends."""
    s = run.log
    print(
        f"  {run.title}: {run.posted} agent messages in {run.wall:.0f} s; {run.requests} requests"
        f" ({run.failed} not 200; the client counted {run.client_calls} calls, {run.retries} retries); {run.prompt_tokens}"
        f" prompt tokens in usage, {s.evaluated} evaluated by the server ({s.prefix_hits} prefix"
        f" hits, {s.ram_hits} from the RAM cache); server prompt eval {s.prompt_ms / 1000:.0f} s,"
        f" generation {s.gen_ms / 1000:.0f} s for {s.generated} tokens; end: {run.end_reason}"
        f" ({run.status}); load {run.load}"
        + (f"\n    EXIT {run.returncode}: {run.error}" if run.error else ""),
        flush=True,
    )


REFERENCE = {  # the figures: llama-server, SmolLM2, a chatty preset
    "s / message": "136 (IT)",
    "requests / message": "≈25 (IT) · 1.5 (NS)",
    "prompt tok / message": "≈28.7k tokens (IT) · 539 (NS)",
}


def table(runs: list[Run]) -> None:
    """Rows are figures, columns runs, the issue's reference at the right."""
    width = max(18, *(len(r.title) + 1 for r in runs))
    rows: list[tuple[str, list[str]]] = [
        ("wall s", [f"{r.wall:.0f}" for r in runs]),
        ("agent messages", [str(r.posted) for r in runs]),
        ("requests", [f"{r.requests} ({r.failed} failed)" for r in runs]),
        ("  client retries", [str(r.retries) for r in runs]),
        ("s / message", [f"{r.per(r.wall):.1f}" for r in runs]),
        ("requests / message", [f"{r.per(r.requests):.1f}" for r in runs]),
        ("  setup excluded", [f"{r.per(r.requests - r.setup):.1f}" for r in runs]),
        ("prompt tok / message", [f"{r.per(r.prompt_tokens):.0f}" for r in runs]),
        ("  evaluated / msg", [f"{r.per(r.log.evaluated):.0f}" for r in runs]),
        (
            "  server reused",
            [pct(r.prompt_tokens - r.log.evaluated, r.prompt_tokens) for r in runs],
        ),
        ("compl. tok / message", [f"{r.per(r.completion_tokens):.0f}" for r in runs]),
        ("server prompt s", [f"{r.log.prompt_ms / 1000:.0f}" for r in runs]),
        ("server gen. s", [f"{r.log.gen_ms / 1000:.0f}" for r in runs]),
        (
            "mean s / request",
            [f"{sum(c.seconds for c in r.calls) / max(1, r.requests):.1f}" for r in runs],
        ),
        ("repeated prefix", [pct(r.reuse.stable, r.reuse.chars) for r in runs]),
        ("  volatile first", [pct(r.reuse.volatile, r.reuse.chars) for r in runs]),
        ("dropped / cut", [f"{r.dropped} / {r.cut}" for r in runs]),
        ("load 1m mean/max", [r.load for r in runs]),
    ]
    head = f"{'':<22}" + "".join(f"{r.title:>{width}}" for r in runs) + "   issue (llama-server)"
    print("\n" + head)
    print("-" * len(head))
    for name, cells in rows:
        print(
            f"{name:<22}"
            + "".join(f"{c:>{width}}" for c in cells)
            + f"   {REFERENCE.get(name, '')}"
        )
    print("\nend reasons:")
    for r in runs:
        print(f"  {r.title}: {r.end_reason or '-'} ({r.status or 'no session'})")


KIND_ORDER = (
    "interpret",
    "turn-type",
    "System-1 thoughts",
    "System-2 thoughts",
    "evaluate",
    "evaluate → rating",
    "articulate",
    "next-speaker pick",
    "response",
)


def cost_table(run: Run) -> None:
    """Per kind of request: what it cost in tokens and server seconds, per run and per posted
    message. The server's log entries are matched to the recorded requests in answer order."""
    ok = [c for c in run.calls if c.status == 200]
    served = run.log.per_request
    if len(ok) != len(served):
        print(
            f"\n{run.title}: {len(ok)} answered requests but {len(served)} server log entries:"
            " no per-kind cost table"
        )
        return
    rows: dict[str, dict[str, float]] = {}
    for c, sv in zip(ok, served, strict=True):
        k = rows.setdefault(label(c.messages), dict.fromkeys(COST_KEYS, 0.0))
        for key, value in (
            ("n", 1),
            ("prompt", c.prompt_tokens),
            ("evaluated", sv.evaluated),
            ("completion", c.completion_tokens),
            ("prompt s", sv.prompt_ms / 1000),
            ("gen s", sv.gen_ms / 1000),
            ("total s", sv.total_ms / 1000),
            ("wall s", c.seconds),
        ):
            k[key] += value
    total = dict.fromkeys(COST_KEYS, 0.0)
    for k in rows.values():
        for key in COST_KEYS:
            total[key] += k[key]
    order = {name: i for i, name in enumerate(KIND_ORDER)}
    kinds = sorted(rows, key=lambda n: (order.get(n.split(" → repair")[0], 99), n))
    print(
        f"\n{run.title}: cost per kind of request ({run.posted} posted messages; server seconds"
        " from its log: prompt evaluation, generation, and llama.cpp's total, whose rest is"
        " sampling, grammar and logprobs; wall = the call at the proxy, queueing included)"
    )
    head = (
        f"  {'kind':<26} {'n':>4} {'prompt':>7} {'eval.':>6} {'compl.':>6}"
        f" {'prompt s':>8} {'gen s':>6} {'total s':>7} {'rest s':>6} {'wall s':>6}"
        f" | per msg: {'n':>5} {'prompt':>6} {'eval.':>5} {'compl.':>6} {'total s':>7}"
    )
    print(head)
    per = max(1, run.posted)
    for name in [*kinds, "all"]:
        k = total if name == "all" else rows[name]
        print(
            f"  {name[:26]:<26} {k['n']:>4.0f} {k['prompt']:>7.0f} {k['evaluated']:>6.0f}"
            f" {k['completion']:>6.0f} {k['prompt s']:>8.1f} {k['gen s']:>6.1f}"
            f" {k['total s']:>7.1f} {k['total s'] - k['prompt s'] - k['gen s']:>6.1f}"
            f" {k['wall s']:>6.1f} | {'':>9}{k['n'] / per:>5.1f} {k['prompt'] / per:>6.0f}"
            f" {k['evaluated'] / per:>5.0f} {k['completion'] / per:>6.0f}"
            f" {k['total s'] / per:>7.1f}"
        )
    if total["prompt s"] and total["gen s"]:
        print(
            f"  server rates: prompt evaluation {total['evaluated'] / total['prompt s']:.0f}"
            f" tokens/s, generation {total['completion'] / total['gen s']:.1f} tokens/s"
        )


COST_KEYS = ("n", "prompt", "evaluated", "completion", "prompt s", "gen s", "total s", "wall s")


def kinds_table(run: Run) -> None:
    """Per kind of request: count, size, and the repeated-prefix share either way round."""
    print(f"\n{run.title}: per kind of request (repeated prefix = shared with any earlier request)")
    head = (
        f"  {'kind':<34} {'n':>4} {'chars/req':>9} {'tok/req':>7} {'s/req':>6}"
        f" {'repeated':>8} {'volatile 1st':>12}"
    )
    print(head)
    for kind, k in sorted(run.reuse.kinds.items(), key=lambda kv: -kv[1]["chars"]):
        n = int(k["n"])
        print(
            f"  {kind[:34]:<34} {n:>4} {k['chars'] / n:>9.0f} {k['tokens'] / n:>7.0f}"
            f" {k['seconds'] / n:>6.1f} {pct(k['stable'], k['chars']):>8}"
            f" {pct(k['volatile'], k['chars']):>12}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--runs", default=",".join(RUNS), help=f"comma-separated, from {', '.join(RUNS)}"
    )
    ap.add_argument(
        "--turns", type=int, help=f"messages per run, the icebreaker included (default {TURNS})"
    )
    ap.add_argument("--quick", action="store_true", help=f"--turns {QUICK_TURNS}")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument(
        "--server-cache",
        choices=("both", "on", "off"),
        default="on",
        help="the server's RAM prompt cache: on (default), off, or both (every run with it,"
        " then --compare-runs without it: about 6 more minutes)",
    )
    ap.add_argument(
        "--compare-runs",
        default="inner-thoughts",
        help="with --server-cache both: the runs done again without the cache (default inner-thoughts)",
    )
    ap.add_argument("--threads", type=int, default=2, help="the server's --n_threads (default 2)")
    ap.add_argument("--timeout", type=float, help="the client's seconds per call (default its own)")
    ap.add_argument("--keep", type=Path, help="keep the databases and server logs in this folder")
    ap.add_argument(
        "--cli",
        default="",
        help="more flags for every CLI run, e.g. '--llm-concurrency 1' (one string)",
    )
    ap.add_argument(
        "--analyse",
        type=Path,
        help="run nothing: print the per-kind tables of the runs kept in this folder (--keep)",
    )
    args = ap.parse_args()
    if args.analyse:
        for calls in sorted(args.analyse.glob("*.calls.json")):
            tag = calls.name.removesuffix(".calls.json")
            name, _, cached = tag.rpartition("-")
            run = Run(name, cached == "cache")
            run.calls = [Call(**c) for c in json.loads(calls.read_text())]
            run.log = ServerLog.parse(
                (args.analyse / f"{tag}.server.log").read_text("utf-8", "replace")
            )
            read_db(run, args.analyse / f"{tag}.db")
            run.reuse = Reuse.of(run.calls)
            kinds_table(run)
            cost_table(run)
        return
    turns = args.turns or (QUICK_TURNS if args.quick else TURNS)
    names = [n.strip() for n in args.runs.split(",") if n.strip()]
    compare = [n.strip() for n in args.compare_runs.split(",") if n.strip()]
    for n in [*names, *compare]:
        if n not in RUNS:
            ap.error(f"unknown run {n!r}: choose from {', '.join(RUNS)}")
    plan = [(n, args.server_cache != "off") for n in names]
    if args.server_cache == "both":
        plan += [(n, False) for n in compare]
    try:
        installation()
    except RealServerMissing as exc:
        sys.exit(str(exc))
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-real-server-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"llama-cpp-python + SmolLM2-135M-Instruct ({MODEL_ALIAS}), n_ctx {N_CTX},"
        f" {args.threads} threads; {AGENTS} agents, {turns} turns, seed {args.seed}",
        flush=True,
    )
    proxy = Proxy()
    runs: list[Run] = []
    try:
        for name, cache in plan:
            run = one_run(name, cache, proxy, work, args, turns)
            runs.append(run)
            show(run)
    finally:
        proxy.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    table(runs)
    for run in runs:
        kinds_table(run)
        cost_table(run)
    if args.keep:
        print(f"\ndatabases and server logs kept in {work}")


if __name__ == "__main__":
    main()
