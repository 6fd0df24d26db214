"""A resolver stub for the hosted-style stand-ins: names under ``.standin.test`` resolve to
127.0.0.1, so a process started with this folder on ``PYTHONPATH`` reaches the loopback stand-in
at a hostname the client does not take for a local server (playground.urls.is_local), and treats
it as a hosted API (its timeouts, its starting concurrency). Nothing else is changed."""

from __future__ import annotations

import socket

_SUFFIX = ".standin.test"
_real_getaddrinfo = socket.getaddrinfo


def _getaddrinfo(host, *args, **kwargs):
    if isinstance(host, (str, bytes)):
        name = host.decode() if isinstance(host, bytes) else host
        if name.lower().rstrip(".").endswith(_SUFFIX):
            host = "127.0.0.1"
    return _real_getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = _getaddrinfo
