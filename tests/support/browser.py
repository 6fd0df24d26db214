"""Debian's Chromium, driven by Playwright (its own browser is never downloaded)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest

#: Where Debian's package puts it (apt-get install chromium).
CHROMIUM = os.environ.get("PLAYGROUND_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
#: As the machine's notes advise: no background connections (the network is closed), no
#: sandbox (tests run as root here), a fresh profile every time (Playwright's default).
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """Skip when Chromium is not installed, unless the suite must run it (``./test`` sets
    PLAYGROUND_REQUIRE_BROWSER=1 after installing it): then it is a failure."""
    if os.path.exists(CHROMIUM):
        return
    why = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("PLAYGROUND_REQUIRE_BROWSER") == "1":
        pytest.fail(why)
    pytest.skip(why)


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A headless Chromium for one test."""
    require_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            await browser.close()
