"""The raters' web server: one rating plan served to browsers, on the caller's own loop.

Routes (everything else is 404):

- ``GET /rate/<token>``: a rater's page (the same static file for every rater). A token that
  opens no rater of this plan gets 403 with the same body, so a refusal tells nothing.
- ``GET /rate/<token>/ws``: that rater's WebSocket; its Origin must be this server's own.
- ``GET /open/<token>``: the plan's open link for a crowdsourcing platform. Each arrival is
  handed the next free rater and redirected to that rater's link; a cookie remembers it, so
  opening the open link again resumes the same rater.
- ``GET /static/<file>``: the page's ES modules and style sheet.

The safe defaults are the study pages' (:mod:`playground.web`): loopback unless told otherwise,
security headers with a strict Content-Security-Policy, no referrer, Origin and DNS-rebinding
checks, a frame size limit, HTTPS (and WSS) when given a certificate; and a rate limit per page. Only frames of
:mod:`playground.rating.web.protocol` go out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from importlib import resources

import pydantic
import sqlite_utils
from aiohttp import WSMsgType, web

from playground import web as web_safety
from playground.rating import links as rater_links
from playground.rating.store import RatingStore
from playground.rating.web import protocol
from playground.rating.web.desk import RaterDesk, Reply

log = logging.getLogger(__name__)

FORBIDDEN = "This rating link is not valid. Ask the researcher for a new one."
FULL = "Every place in this rating study is taken. Thank you for your interest."
STATIC = {
    "main.js": "text/javascript",
    "connection.js": "text/javascript",
    "conversation.js": "text/javascript",
    "rating.js": "text/javascript",
    "protocol.js": "text/javascript",
    "style.css": "text/css",
}
#: Frames one page may send per 10 seconds (a page sends one per message shown and per answer).
FRAMES_PER_10_SECONDS = 100
#: Open WebSockets at once, over all raters.
MAX_SOCKETS = 500
COOKIE = "rater"


def _static(name: str) -> bytes:
    return (resources.files("playground.rating.web") / "static" / name).read_bytes()




class RaterServer:
    """Serves one rating plan to its raters' browsers until :meth:`stop`.

    Args:
        db: the plan's database (used on this loop only).
        plan_id: the plan served.
        host: the address to listen on (default: this machine only).
        port: the TCP port (0: any free one).
        cps: the typing speed the pages use, in characters per second.
        certificate: with ``key``, serve HTTPS (and WSS) with this certificate chain (PEM).
        key: the certificate's private key (PEM).
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        plan_id: int,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        cps: int = 30,
        certificate: str | None = None,
        key: str | None = None,
    ) -> None:
        self.store = RatingStore(db)
        self.links = rater_links.LinkStore(db)
        self.plan = self.store.plan(plan_id)
        self.host, self.port, self.cps = host, port, cps
        self.certificate, self.key = certificate, key
        self._runner: web.AppRunner | None = None
        self._pages: dict[str, web.WebSocketResponse] = {}  # rater → their open page
        self._sockets: set[web.WebSocketResponse] = set()
        self.listening: web_safety.Listening | None = None
        self.page = _static("index.html")

    # -- life cycle --------------------------------------------------------------------------------

    async def start(self) -> web_safety.Listening:
        """Listen; the address and port the links use.

        Raises:
            SettingsError: the address cannot be listened on, or the certificate cannot be used.
        """
        tls = web_safety.tls_context(self.certificate, self.key)
        app = web_safety.application()
        app.router.add_get("/rate/{token}", self._page)
        app.router.add_get("/rate/{token}/ws", self._socket)
        app.router.add_get("/open/{token}", self._open)
        app.router.add_get("/static/{name}", self._file)
        self._runner, self.listening = await web_safety.listen(app, self.host, self.port, tls)
        return self.listening

    def rater_links(self) -> list[tuple[str, str]]:
        """``(rater, link)`` for every rater of the plan, in the plan's order."""
        assert self.listening is not None, "start the server first"
        origin = self.listening.origin
        return [
            (link.rater, f"{origin}/rate/{link.token}")
            for link in self.links.links(self.plan.id, self.plan.raters)
        ]

    def open_link(self) -> str:
        """The plan's one open link (for a crowdsourcing platform)."""
        assert self.listening is not None, "start the server first"
        return f"{self.listening.origin}/open/{self.links.open_token(self.plan.id)}"

    async def stop(self) -> None:
        """Tell every page the researcher stopped, close their sockets, stop listening."""
        for ws in list(self._sockets):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(code=protocol.CloseCode.ENDED, message=b"ended"), 2)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- routes ------------------------------------------------------------------------------------

    def _rater(self, request: web.Request) -> str:
        found = self.links.rater_for(request.match_info["token"])
        if found is None or found[0] != self.plan.id:
            raise web.HTTPForbidden(text=FORBIDDEN)
        return found[1]

    async def _page(self, request: web.Request) -> web.Response:
        self._rater(request)
        return web.Response(body=self.page, content_type="text/html", charset="utf-8")

    async def _file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(body=_static(name), content_type=STATIC[name], charset="utf-8")

    async def _open(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        if self.links.plan_for_open(token) != self.plan.id:
            raise web.HTTPForbidden(text=FORBIDDEN)
        # The same browser again (a reload, the platform's link clicked twice): the same rater.
        kept = request.cookies.get(COOKIE, "")
        found = self.links.rater_for(kept) if kept else None
        if found is not None and found[0] == self.plan.id:
            raise web.HTTPSeeOther(f"/rate/{kept}")
        link = self.links.claim_next(self.plan.id)
        if link is None:
            raise web.HTTPGone(text=FULL)
        response = web.HTTPSeeOther(f"/rate/{link.token}")
        # Lax, not Strict: a worker comes back by clicking the link on the platform's site, a
        # cross-site navigation on which a Strict cookie would not be sent.
        response.set_cookie(
            COOKIE,
            link.token,
            path=f"/open/{token}",
            httponly=True,
            samesite="Lax",
            secure=request.secure,
            max_age=90 * 24 * 3600,
        )
        raise response

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        rater = self._rater(request)
        if not web_safety.same_origin(request, self.host):
            raise web.HTTPForbidden(text="This connection comes from another site.")
        if len(self._sockets) >= MAX_SOCKETS:
            raise web.HTTPServiceUnavailable(text="Too many pages are open; try again shortly.")
        ws = web.WebSocketResponse(max_msg_size=web_safety.MAX_FRAME, heartbeat=20)
        await ws.prepare(request)
        self._sockets.add(ws)
        old = self._pages.get(rater)
        self._pages[rater] = ws
        if old is not None and not old.closed:
            # The newest page of a link wins; the other is told why it stops.
            await old.close(code=protocol.CloseCode.REPLACED, message=b"opened elsewhere")
        self.links.opened(self.plan.id, rater)
        desk = RaterDesk(self.store, self.plan.id, rater, cps=self.cps)
        rate = web_safety.RateLimit(FRAMES_PER_10_SECONDS, 10)
        try:
            await self._send(ws, [desk.welcome(), desk.current()])
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    await ws.close(code=protocol.CloseCode.BAD_FRAME, message=b"text frames only")
                    break
                if not rate.allow():
                    await ws.close(code=protocol.CloseCode.TOO_FAST, message=b"too fast")
                    break
                await self._send(ws, self._answer(desk, msg.data))
        finally:
            self._sockets.discard(ws)
            if self._pages.get(rater) is ws:
                del self._pages[rater]
            if not ws.closed:
                await ws.close()
        return ws

    @staticmethod
    def _answer(desk: RaterDesk, text: str) -> list[Reply]:
        try:
            frame = protocol.page_frame.validate_json(text)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'frame'}: {e['msg']}"
                for e in exc.errors()[:3]
            )
            return [protocol.Refused(seq=None, message=f"not understood ({problems})")]
        return desk.act(frame)

    @staticmethod
    async def _send(ws: web.WebSocketResponse, frames: list[Reply]) -> None:
        for frame in frames:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_str(protocol.encode(frame))
