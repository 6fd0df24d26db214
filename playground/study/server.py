"""The study's web server: the participant's page and its WebSocket, on the room's own loop.

Routes (everything else is 404):

- ``GET /join/<token>``: the page (the same static file for every seat; it reads its token from
  the address). A token that opens no seat, a revoked one included, gets 403 with the same body,
  so a refusal does not tell whether a session or a seat exists.
- ``GET /join/<token>/ws``: the seat's WebSocket; its Origin must be this server's own.
- ``GET /static/<file>``: the page's script and style sheet.

Every response forbids framing and inline script (Content-Security-Policy) and sends no
referrer (the token is in the address). The page never inserts text as HTML: it builds its
elements and sets their text. Listens on 127.0.0.1 unless told otherwise; with a certificate and
key it serves HTTPS (and WSS).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from importlib import resources
from typing import Any

from aiohttp import WSMsgType, web

from playground import errors
from playground import web as web_safety
from playground.study import protocol
from playground.study.hub import Connection, StudyHub
from playground.study.protocol import CloseCode
from playground.study.review import StudyError
from playground.study.seats import Seat
from playground.web import MAX_FRAME, Listening, is_loopback, lan_address

log = logging.getLogger(__name__)

#: Close code the page reads as "do not reconnect" (the seat was revoked or the study ended).
CLOSE_FOR_GOOD = CloseCode.FOR_GOOD
#: Close code the page reads as "the study's next conversation begins: reconnect now, from the
#: start" (a study plan moved its seats to a new session).
CLOSE_NEXT = CloseCode.NEXT
FORBIDDEN = "This invitation link is not valid. Ask the researcher for a new one."
#: The page's own files (its script is ES modules, loaded by the browser one by one).
PAGE_MODULES = (
    "app.js",
    "connection.js",
    "conversation.js",
    "dom.js",
    "notes.js",
    "protocol.js",
    "questions.js",
    "review.js",
    "state.js",
)
STATIC = {"style.css": "text/css"} | {name: "text/javascript" for name in PAGE_MODULES}


def _static(name: str) -> bytes:
    return (resources.files("playground.study") / "static" / name).read_bytes()



class StudyServer:
    """Serves one hub's seats until :meth:`stop`."""

    def __init__(
        self,
        hub: StudyHub,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        certificate: str | None = None,
        key: str | None = None,
    ) -> None:
        self.hub = hub
        self.host = host
        self.port = port
        self.certificate, self.key = certificate, key
        self._runner: web.AppRunner | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self._senders: set[asyncio.Task[None]] = set()
        self.listening: Listening | None = None
        self.page = _static("index.html")

    # -- life cycle --------------------------------------------------------------------------------

    async def start(self) -> Listening:
        """Listen; the address and port the invite links use.

        Raises:
            PlaygroundError: the address cannot be listened on, or the certificate cannot be read.
        """
        tls = web_safety.tls_context(self.certificate, self.key)
        app = web_safety.application()
        app.router.add_get("/join/{token}", self._page)
        app.router.add_get("/join/{token}/ws", self._socket)
        app.router.add_get("/static/{name}", self._file)
        self._runner, self.listening = await web_safety.listen(app, self.host, self.port, tls)
        return self.listening

    def switch(self, hub: StudyHub) -> None:
        """Move every seat to ``hub`` (a study plan's next conversation): the pages of the old
        one are told to reconnect, and land in the new one. The two hubs share one seat book."""
        old, self.hub = self.hub, hub
        old.move_on()

    def link(self, seat: Seat) -> str:
        assert self.listening is not None, "start the server first"
        return f"{self.listening.origin}/join/{seat.token}"

    async def stop(self, reason: str = "The researcher ended the study.") -> None:
        """Tell every browser the study ended, close their sockets, stop listening."""
        self.hub.close(reason)
        await self._shut(CloseCode.FOR_GOOD)

    async def pause(self) -> None:
        """Tell every browser the study is paused (it resumes later, on the same links), close
        their sockets, stop listening. The pages keep trying, and continue by themselves once a
        server serves their links again."""
        self.hub.pause()
        await self._shut(CloseCode.PAUSED)

    async def _shut(self, code: CloseCode) -> None:
        if self._senders:  # each sends what is queued (the end included), then closes its socket
            await asyncio.wait(list(self._senders), timeout=2)
        for ws in list(self._sockets):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(code=code, message=code.name.encode()), 2)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- routes ------------------------------------------------------------------------------------

    def _seat(self, request: web.Request) -> Seat:
        seat = self.hub.book.admit(request.match_info["token"])
        if seat is None:
            raise web.HTTPForbidden(text=FORBIDDEN)
        return seat

    async def _page(self, request: web.Request) -> web.Response:
        self._seat(request)
        return web.Response(body=self.page, content_type="text/html", charset="utf-8")

    async def _file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(body=_static(name), content_type=STATIC[name], charset="utf-8")

    def _same_origin(self, request: web.Request) -> bool:
        return web_safety.same_origin(request, self.host)

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        seat = self._seat(request)
        hub = self.hub  # a page stays with the conversation it opened (see switch)
        if not self._same_origin(request):
            raise web.HTTPForbidden(text="This connection comes from another site.")
        ws = web.WebSocketResponse(max_msg_size=MAX_FRAME, heartbeat=20)
        await ws.prepare(request)
        self._sockets.add(ws)
        conn: Connection | None = None
        sender: asyncio.Task[None] | None = None
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    break  # binary, a frame too large, or a close: this page sends only text
                data = _json(msg.data)
                if conn is None:  # the first frame says what the page has already seen
                    opened = _open_frame(data)
                    conn = hub.open(seat, opened.after, opened.session)
                    sender = asyncio.ensure_future(self._send(ws, conn))
                    self._senders.add(sender)
                    sender.add_done_callback(self._senders.discard)
                    continue
                if conn.closing is not None:
                    break
                try:
                    await hub.act(conn, data)
                except errors.PlaygroundError as exc:
                    kind = data.get("type") if isinstance(data, dict) else None
                    refused = kind if isinstance(kind, str) and len(kind) <= 20 else None
                    conn.push(protocol.Error(message=str(exc), refused=refused))
        finally:
            if conn is not None:
                hub.close_connection(conn)
                conn.close("the page went away")
            if sender is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(sender, 5)
            self._sockets.discard(ws)
            if not ws.closed:
                await ws.close()
        return ws

    async def _send(self, ws: web.WebSocketResponse, conn: Connection) -> None:
        """Send what the hub queues for this browser, in order, until it is closed."""
        try:
            while (frame := await conn.queue.get()) is not None:
                await ws.send_str(frame.model_dump_json())
        except (ConnectionError, RuntimeError):
            return  # the browser went away: it catches up when it reconnects
        if conn.closing is not None and not ws.closed:
            await ws.close(code=conn.code, message=conn.closing.encode()[:120])


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _open_frame(data: object) -> protocol.Open:
    """The page's first frame; one that does not fit is a new page's (it gets everything)."""
    try:
        opened = protocol.PAGE_FRAMES.validate_python(data, strict=True)
    except ValueError:
        return protocol.Open()
    return opened if isinstance(opened, protocol.Open) else protocol.Open()


__all__ = ["MAX_FRAME", "StudyError", "StudyServer", "is_loopback", "lan_address"]
