"""Screenshots of the participants' page for docs/studies.md, in Debian's Chromium.

Two people and an offline agent: Ana on a laptop (1280×800) sees the agent's message and the
one-click question; Ben on a phone (390×844) has added a private reaction. Writes
docs/study-laptop.png and docs/study-phone.png. Then, the first conversation of a study plan
once it is over: Ana, on a larger laptop (1440×900), looks back at the agent's message
(docs/study-review.png) and Ben, on his phone, rates the agent (docs/study-questions.png).

Run:  .venv/bin/python scripts/study_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from testbed.study import live_study

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


async def _join_both(browser: Any, study: Any, laptop: dict[str, int] | None = None) -> list[Any]:
    pages = []
    for link, size, name in (
        (study.links[0], laptop or {"width": 1280, "height": 800}, "Ana"),
        (study.links[1], {"width": 390, "height": 844}, "Ben"),
    ):
        page = await (await browser.new_context(viewport=size)).new_page()
        await page.goto(link)
        await page.fill("#join-name", name)
        await page.click("#join button")
        await page.wait_for_selector("#composer:not([hidden])")
        pages.append(page)
    return pages


async def review_and_questions(browser: Any, embedder: CachingEmbedder) -> None:
    """docs/study-review.png and docs/study-questions.png."""
    tmp = Path(tempfile.mkdtemp())
    async with live_study(tmp, embedder, in_plan=True) as study:
        ana, ben = await _join_both(browser, study, {"width": 1440, "height": 900})
        agent = study.room.agents[0].name
        await ana.fill("#text", "Hi both! Any ideas for a weekend trip?")
        await ana.press("#text", "Enter")
        await ana.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await ben.fill("#text", "Maybe the coast, if the weather holds.")
        await ben.press("#text", "Enter")
        await ana.wait_for_selector(".msg:has-text('the coast')")
        study.room.finish("finished", "The time for this conversation is up.")
        for page in (ana, ben):
            await page.wait_for_selector("#review:not([hidden])")
        await ana.click(f".msg:has(.who:text-is('{agent}')) .text")
        await ana.fill("#r-thinking", "That a band festival had nothing to do with my question")
        await ana.check("#r-wanted-no")
        await ana.fill("#r-why", "I kept quiet: I hoped Ben would answer first")
        await ana.check("#r-timing-after")
        await ana.click("#review-save")
        await ana.wait_for_selector(".retro-mark")
        await ana.evaluate("document.getElementById('side').scrollTop = 0")
        await ana.screenshot(path=str(ROOT / "docs" / "study-review.png"))
        await ben.click("#rate-open")
        for i, value in enumerate((5, 6, 3)):
            await ben.check(f"#q-{i}-{value}")
        await ben.evaluate("window.scrollTo(0, 0)")
        await ben.mouse.move(0, 0)  # no hover highlight
        await ben.screenshot(path=str(ROOT / "docs" / "study-questions.png"))


async def main() -> None:
    from playwright.async_api import async_playwright

    embedder = CachingEmbedder(MiniLMEmbedder())
    tmp = Path(tempfile.mkdtemp())
    async with live_study(tmp, embedder) as study, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ana, ben = await _join_both(browser, study)
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
        await review_and_questions(browser, embedder)
        await browser.close()
    print(
        "wrote docs/study-laptop.png, docs/study-phone.png, docs/study-review.png and"
        " docs/study-questions.png"
    )


if __name__ == "__main__":
    asyncio.run(main())
