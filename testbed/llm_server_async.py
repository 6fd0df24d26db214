"""The loopback server's answers served from one asyncio thread, for benchmarks.

:class:`testbed.llm_server.FakeLLMServer` runs a thread per connection. With 64 requests in
flight, its threads wait on each other for the interpreter lock (and on the measured process for
the 2 cores): at 16 conversations, 50 ms of its 350 ms per call was the server's own queueing,
measured by timing its handler. A model server under test conditions should add its latency and
nothing else, so the experiment benchmark serves the same answers (same ``FakeLLMServer`` code,
same responder) from one event loop: the latency is a timer, and a request costs only the CPU of
building its answer.

A hosted API's time is a fixed cost per call plus its decode time: ``per_token`` adds that much
per completion token of the answer (after the answer is built, so its length is known). ``log``
writes one JSON line per chat call (what it asked for, when it arrived and was answered), from
which a benchmark counts the dependent waves of a trigger.

Run: ``python -m testbed.llm_server_async --latency 0.3 --faithful`` prints the base URL on
its first line and serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from email.message import Message
from typing import Any

from playground import gc_tuning
from testbed.llm_server import FakeLLMServer, _error_body

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


class _Answer:
    """Stands in for the threaded server's request handler: collects the one answer."""

    def __init__(self, headers: Message) -> None:
        self.headers = headers
        self.status = 500
        self.body = b""
        self.content_type = "application/json"
        self.extra: dict[str, str] = {}

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self.status, self.body = status, json.dumps(payload).encode("utf-8")
        self.extra = dict(headers or {})

    def send_raw(self, status: int, body: bytes, content_type: str) -> None:
        self.status, self.body, self.content_type = status, body, content_type

    def encode(self) -> bytes:
        head = [f"HTTP/1.1 {self.status} {REASONS.get(self.status, 'Error')}"]
        head += [f"Content-Type: {self.content_type}", f"Content-Length: {len(self.body)}"]
        head += [f"{k}: {v}" for k, v in self.extra.items()]
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + self.body


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, Message, bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers = Message()
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        key, _, value = h.decode("latin-1").partition(":")
        headers[key.strip()] = value.strip()
    length = int(headers.get("Content-Length") or 0)
    body = await reader.readexactly(length) if length else b""
    return method, target.split("?", 1)[0].rstrip("/"), headers, body


def call_kind(body: dict[str, Any]) -> str:
    """What a chat call asks for, from its response format's schema name (``text`` for a plain
    answer: an utterance)."""
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name") if isinstance(fmt, dict) else None
    return str(name or fmt.get("type") or "text") if isinstance(fmt, dict) else "text"


def _completion_tokens(answer: _Answer) -> int:
    try:
        return int(json.loads(answer.body)["usage"]["completion_tokens"])
    except (ValueError, KeyError, TypeError):
        return 0


async def serve(
    fake: FakeLLMServer,
    latency: float,
    host: str = "127.0.0.1",
    *,
    per_token: float = 0.0,
    log: Any = None,
) -> asyncio.Server:
    """Serve ``fake``'s answers on ``host`` (a free port), adding ``latency`` to chat calls, and
    ``per_token`` seconds per completion token; ``log`` (a text file) gets one JSON line per
    chat call: ``{"kind", "start", "end", "completion_tokens"}`` (monotonic seconds)."""
    fake.latency = 0.0  # the wait is a timer here, not a sleeping thread

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (request := await _read_request(reader)) is not None:
                method, path, headers, body = request
                answer = _Answer(headers)
                if method == "POST":
                    start = time.monotonic()
                    # _Answer stands in for the http.server handler the fake server writes to.
                    fake._handle_post(answer, path, body)  # type: ignore[arg-type]
                    chat = path == "/v1/chat/completions"
                    tokens = _completion_tokens(answer) if chat else 0
                    wait = latency + per_token * tokens
                    if chat and wait > 0:
                        with fake.waiting():
                            await asyncio.sleep(wait)
                    if chat and log is not None:
                        try:
                            kind = call_kind(json.loads(body))
                        except (ValueError, AttributeError):
                            kind = "?"
                        row = {"kind": kind, "start": start, "end": time.monotonic()}
                        row["completion_tokens"] = tokens
                        log.write(json.dumps(row) + "\n")
                        log.flush()
                else:
                    answer.send_json(404, _error_body(404, f"Unknown path: {method} {path}"))
                writer.write(answer.encode())
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, host, 0, backlog=256)


async def _main(latency: float, faithful: bool, per_token: float, log_path: str | None) -> None:
    fake = FakeLLMServer()
    if faithful:
        from testbed.responders import faithful_responder

        fake.set_responder(faithful_responder)
    log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115, ASYNC230
    server = await serve(fake, latency, per_token=per_token, log=log)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each call")
    parser.add_argument("--faithful", action="store_true", help="answer as testbed.responders does")
    parser.add_argument(
        "--per-token", type=float, default=0.0, help="seconds added per completion token"
    )
    parser.add_argument("--log", help="append one JSON line per chat call to this file")
    args = parser.parse_args(argv)
    # The same collector settings as the batch it serves (playground/gc_tuning.py): each answer
    # with logprobs is built from a few thousand small dicts, and a stand-in for a remote model
    # server should spend as little of the shared cores as it can.
    with contextlib.suppress(KeyboardInterrupt), gc_tuning.batch():
        asyncio.run(_main(args.latency, args.faithful, args.per_token, args.log))


if __name__ == "__main__":
    main()
