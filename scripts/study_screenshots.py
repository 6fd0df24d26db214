"""Screenshots of the participants' page for docs/studies.md, in Debian's Chromium.

Two people and an offline agent: Ana on a laptop (1280×800) sees the agent's message and the
one-click question; Ben on a phone (390×844) has added a private reaction. Writes
docs/study-laptop.png and docs/study-phone.png.

Run:  .venv/bin/python scripts/study_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from testbed.study import live_study

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


async def main() -> None:
    from playwright.async_api import async_playwright

    embedder = CachingEmbedder(MiniLMEmbedder())
    tmp = Path(tempfile.mkdtemp())
    async with live_study(tmp, embedder) as study, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pages = []
        for link, size, name in (
            (study.links[0], {"width": 1280, "height": 800}, "Ana"),
            (study.links[1], {"width": 390, "height": 844}, "Ben"),
        ):
            page = await (await browser.new_context(viewport=size)).new_page()
            await page.goto(link)
            await page.fill("#join-name", name)
            await page.click("#join button")
            await page.wait_for_selector("#composer:not([hidden])")
            pages.append(page)
        ana, ben = pages
        await ana.fill("#text", "Hi both! Any ideas for a weekend trip?")
        await ana.press("#text", "Enter")
        agent = study.room.agents[0].name
        await ana.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await ben.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await ben.click("#card-close")
        await ben.click(".msg:has-text('weekend trip') .text")
        await ben.fill(".msg form input", "Good question, I was hoping someone would ask")
        await ben.press(".msg form input", "Enter")
        await ben.wait_for_selector(".mynote")
        await ana.screenshot(path=str(ROOT / "docs" / "study-laptop.png"))
        await ben.screenshot(path=str(ROOT / "docs" / "study-phone.png"))
        await browser.close()
    print("wrote docs/study-laptop.png and docs/study-phone.png")


if __name__ == "__main__":
    asyncio.run(main())
