"""Safe defaults shared by the browser-facing servers (the study pages, the raters' pages).

Every response forbids framing and inline script (Content-Security-Policy) and sends no
referrer (tokens are in the address); a WebSocket must come from the server's own origin, and a
loopback server refuses names that merely resolve to this machine (DNS rebinding).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from playground import errors

#: The largest WebSocket frame a browser may send (a 2,000-character message is ~8 KB as UTF-8).
MAX_FRAME = 16 * 1024
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
        " img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str:
    """This machine's address on the local network, as others would reach it (best effort:
    the address of the interface a route out would use; nothing is sent)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the interface
        return str(s.getsockname()[0])
    return socket.gethostname()


def tls_context(certificate: str | None, key: str | None) -> ssl.SSLContext | None:
    """The server's TLS context from a certificate chain and its key; None when neither is given.

    Raises:
        SettingsError: only one of the two is given, or they cannot be read or used.
    """
    if not (certificate or key):
        return None
    if not (certificate and key):
        raise errors.SettingsError("TLS needs both a certificate and its key")
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        tls.load_cert_chain(certificate, key)
    except (OSError, ssl.SSLError) as exc:
        raise errors.SettingsError(f"cannot use the TLS certificate: {exc}") from exc
    return tls


def same_origin(request: web.Request, listening_host: str) -> bool:
    """Whether a WebSocket request comes from the page this server (listening on
    ``listening_host``) served."""
    origin = request.headers.get("Origin")
    if origin is None:
        return False
    if is_loopback(listening_host) and not is_loopback(request.url.host or ""):
        return False  # a name that resolves to this machine (DNS rebinding): not the page's
    scheme = "https" if request.secure else "http"
    return origin == f"{scheme}://{request.host}"


@web.middleware
async def security_headers(request: web.Request, handler: Any) -> web.StreamResponse:
    """aiohttp middleware: :data:`HEADERS` on every response, refusals included."""
    try:
        response: web.StreamResponse = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(HEADERS)
        raise
    if not response.prepared:
        response.headers.update(HEADERS)
    return response


@dataclass
class Listening:
    """Where a server listens, as its links show it."""

    host: str
    port: int
    scheme: str

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def application() -> web.Application:
    """An application with the safe defaults: the frame size limit and the security headers."""
    return web.Application(client_max_size=MAX_FRAME, middlewares=[security_headers])


async def listen(
    app: web.Application, host: str, port: int, tls: ssl.SSLContext | None
) -> tuple[web.AppRunner, Listening]:
    """Serve ``app`` on ``host``:``port`` (0: any free port); its runner and where it listens
    (a wildcard host is shown as this machine's address on the local network).

    Raises:
        SettingsError: the address cannot be listened on (nothing is left running).
    """
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=tls)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise errors.SettingsError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}"
        ) from exc
    shown = lan_address() if host in ("0.0.0.0", "::", "") else host
    bound = int(runner.addresses[0][1])
    return runner, Listening(shown, bound, "https" if tls else "http")


class RateLimit:
    """At most ``n`` uses in a sliding window of ``seconds``."""

    def __init__(self, n: int, seconds: float) -> None:
        self.n, self.seconds = n, seconds
        self.times: deque[float] = deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self.times and now - self.times[0] > self.seconds:
            self.times.popleft()
        if len(self.times) >= self.n:
            return False
        self.times.append(now)
        return True
