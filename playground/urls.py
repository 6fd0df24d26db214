"""URLs as they may be shown and stored: without the user name and password written into them.

A base URL such as ``http://user:sk-…@proxy/v1`` carries credentials. The HTTP client still sends
them (as HTTP Basic authentication, in place of the API key); everywhere else (the database, the
terminal, the window, logs, error messages) only :func:`redact` of the URL appears.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

#: Everything up to the authority (the scheme and ``//``, when present), then the authority itself:
#: host and port, preceded by ``userinfo@`` when credentials are written into the URL (RFC 3986).
_AUTHORITY = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://|//)?(?P<authority>[^/?#]*)")


def redact(url: str) -> str:
    """``url`` without its user information (``user:password@``); any other URL is unchanged.

    A URL without a scheme (``me:key@host/v1``) is treated the same way, and a password with an
    unescaped ``@`` is removed whole (the host is what follows the last ``@``).

    Examples:
        ``http://me:sk-123@host:8000/v1`` → ``http://host:8000/v1``
    """
    m = _AUTHORITY.match(url)
    if m is None or "@" not in m["authority"]:
        return url
    return (m["head"] or "") + m["authority"].rpartition("@")[2] + url[m.end() :]


def has_credentials(url: str | None) -> bool:
    """Whether ``url`` has a user name or password written into it."""
    return bool(url) and redact(str(url)) != url


def check_base_url(url: str) -> str | None:
    """What is wrong with ``url`` as a server's base URL, or ``None`` when it can be used.

    The answer never repeats credentials written into the URL.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        return f"{redact(url)} is not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return f"{redact(url)} must start with http:// or https://"
    if not parts.hostname:
        return f"{redact(url)} names no host"
    return None


def is_local(url: str) -> bool:
    """A server on this machine or the local network: a CPU server that computes one or two
    requests at a time (the client starts with few calls in flight and waits longer for each)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "") or host.endswith(".local"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local
