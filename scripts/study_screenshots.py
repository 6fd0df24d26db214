"""Screenshots of the participants' page for docs/studies.md, in Debian's Chromium.

Two people and an offline agent: Maya on a laptop (1280×800) sees the agent's message and the
one-click question; Theo on a phone (390×844), in a conversation longer than his screen, has
added a private reaction. Writes
docs/study-laptop.png and docs/study-phone.png. Then, the first conversation of a study plan
once it is over: Maya, on a larger laptop (1440×900), looks back at the agent's message
(docs/study-review.png) and Theo, on his phone, rates the agent (docs/study-questions.png).

Run:  .venv/bin/python scripts/study_screenshots.py

``study_screenshots.py plans`` renders the window's Experiments ▸ Study plans… instead, with a
plan running (docs/study-plans.png, 1440×900; the same at 1024×700 goes to the temporary
folder, to look at): an earlier plan done, one stopped, and group 2's plan in its first
conversation, two of its three people joined from their (socket-level) browsers. Offline engine;
QT_QPA_PLATFORM=offscreen or a real X server.
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
from playground.rating.user_study import USER_STUDY_METRICS
from playground.study.plan import Listen
from testbed.study import live_study
from ui.study_plans.run import create, plan_settings

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
#: What Theo and Maya say after the agent's first message: longer than Theo's phone screen.
LATER = [
    "Maybe the coast, if the weather holds.",
    "The forecast says sun on Saturday, rain on Sunday.",
    "Then Saturday at the coast and Sunday somewhere with a roof?",
    "There is a maritime museum in the old harbour.",
    "I have not been there since school. Is it still free?",
    "Free on Sundays, as far as I know.",
    "Trains leave every hour; the 8:40 gets us there by ten.",
    "Let's take the 8:40 then, and book a table for lunch by the harbour.",
]


async def _join_both(browser: Any, study: Any, laptop: dict[str, int] | None = None) -> list[Any]:
    pages = []
    for link, size, name in (
        (study.links[0], laptop or {"width": 1280, "height": 800}, "Maya"),
        (study.links[1], {"width": 390, "height": 844}, "Theo"),
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
        maya, theo = await _join_both(browser, study, {"width": 1440, "height": 900})
        agent = study.room.agents[0].name
        await maya.fill("#text", "Hi both! Any ideas for a weekend trip?")
        await maya.press("#text", "Enter")
        await maya.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await theo.fill("#text", "Maybe the coast, if the weather holds.")
        await theo.press("#text", "Enter")
        await maya.wait_for_selector(".msg:has-text('the coast')")
        study.room.finish("finished", "The time for this conversation is up.")
        for page in (maya, theo):
            await page.wait_for_selector("#review:not([hidden])")
        await maya.click(f".msg:has(.who:text-is('{agent}')) .text")
        await maya.fill("#r-thinking", "That a band festival had nothing to do with my question")
        await maya.check("#r-wanted-no")
        await maya.fill("#r-why", "I kept quiet: I hoped Theo would answer first")
        await maya.check("#r-timing-after")
        await maya.click("#review-save")
        await maya.wait_for_selector(".retro-mark")
        await maya.evaluate("document.getElementById('side').scrollTop = 0")
        await maya.screenshot(path=str(ROOT / "docs" / "study-review.png"))
        await theo.click("#rate-open")
        for i, value in enumerate((5, 6, 3)):
            await theo.check(f"#q-{i}-{value}")
        await theo.evaluate("window.scrollTo(0, 0)")
        await theo.mouse.move(0, 0)  # no hover highlight
        await theo.screenshot(path=str(ROOT / "docs" / "study-questions.png"))


async def main() -> None:
    from playwright.async_api import async_playwright

    embedder = CachingEmbedder(MiniLMEmbedder())
    tmp = Path(tempfile.mkdtemp())
    async with live_study(tmp, embedder) as study, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        maya, theo = await _join_both(browser, study)
        await maya.fill("#text", "Hi both! Any ideas for a weekend trip?")
        await maya.press("#text", "Enter")
        agent = study.room.agents[0].name
        await maya.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await theo.wait_for_selector(f".msg:has(.who:text-is('{agent}'))", timeout=60_000)
        await maya.screenshot(path=str(ROOT / "docs" / "study-laptop.png"))
        await theo.click("#card-close")
        for page, text in zip((theo, maya) * 5, LATER, strict=False):
            await page.fill("#text", text)
            await page.press("#text", "Enter")
            await theo.wait_for_selector(f".msg:has-text({text!r})")
        last = LATER[-1]
        await theo.click(f".msg:has-text({last!r}) .text")
        await theo.fill(".msg form input", "Good idea, I was hoping someone would say it")
        await theo.press(".msg form input", "Enter")
        await theo.wait_for_selector(".mynote")
        await theo.evaluate(
            "(l => { l.scrollTop = l.scrollHeight; })(document.getElementById('messages'))"
        )
        await theo.screenshot(path=str(ROOT / "docs" / "study-phone.png"))
        await review_and_questions(browser, embedder)
        await browser.close()
    print(
        "wrote docs/study-laptop.png, docs/study-phone.png, docs/study-review.png and"
        " docs/study-questions.png"
    )


async def _answer_everything(view: Any, link: str) -> None:
    """One person (Maya) joins plan ``link``'s three short conversations, rates each agent and
    gives the final answers: the plan is done."""
    from testbed.study import open_browser

    origin = link.split("/join/")[0]
    browser, _ = await open_browser(link, origin)
    await browser.send(type="join", name="Maya")
    for position in (1, 2, 3):
        await browser.until(lambda p: p["type"] == "phase" and p["phase"] == "review", 60)
        await browser.send(type="questionnaire", answers={m.key: 6 for m in USER_STUDY_METRICS})
        if position < 3:
            await browser.until(lambda p: p["type"] == "phase" and p["phase"] == "wait", 30)
            while (await browser.ws.receive(timeout=60)).type.name == "TEXT":
                pass  # until the server moves the page on to the next conversation
            await browser.session.close()
            browser, _ = await open_browser(link, origin)
    final = await browser.until(lambda p: p["type"] == "phase" and p["phase"] == "final", 30)
    agents, styles = final["final"]["agents"], final["final"]["styles"]
    answers = {f"match:{a}": s["key"] for a, s in zip(agents, styles, strict=True)}
    await browser.send(type="final", answers={**answers, "favourite": agents[1]})
    await browser.until(lambda p: p["type"] == "phase" and p["phase"] == "done", 30)
    await browser.close()


async def plans_window() -> None:
    """docs/study-plans.png: Experiments ▸ Study plans… with a plan running (1440×900)."""
    from PySide6.QtWidgets import QApplication

    from testbed.study import open_browser
    from ui.app import build
    from ui.study_plans.run import Options

    tmp = Path(tempfile.mkdtemp())
    win, controller = build(db_path=str(tmp / "study.db"), environ={})
    win.show()
    controller.embedding.start()
    await controller.embedding.get()
    view = win.experiments.plans.open_view()
    view.resize(1440, 900)
    db = controller.database()
    library = controller.library()

    def start(**kw: Any) -> Any:
        opts = Options(**{"humans": 1, "group": 0, "seed": 1, "minutes": 0.05, "review_minutes": 1.0, "show_thoughts": False, "port": 0, **kw})  # fmt: skip
        plan_id = create(db, view.db_path, library, controller.settings, opts)
        settings = plan_settings(controller.settings, opts.show_thoughts)
        job = view.launch(plan_id, settings, Listen(opts.host, opts.port), opts.review_minutes)
        assert job is not None
        return job

    async def links(job: Any) -> list[str]:
        while job.server is None:
            await asyncio.sleep(0.1)
        return [p.link for p in job.live().people]

    job = start(group=0)
    await _answer_everything(view, (await links(job))[0])
    while job.running:
        await asyncio.sleep(0.1)
    job = start(group=1, humans=2)
    await links(job)
    await asyncio.sleep(1)
    await view.stop()  # stopped in its first conversation
    job = start(group=2, humans=3, minutes=10.0, review_minutes=15.0, port=8765)
    people = await links(job)
    browsers = []
    for link, name in zip(people, ("Maya", "Tom"), strict=False):
        browser, _ = await open_browser(link, link.split("/join/")[0])
        await browser.send(type="join", name=name)
        browsers.append(browser)
    await browsers[0].send(type="say", text="Hi both! I have just taken up climbing.")
    await asyncio.sleep(4)  # the agent answers; the window reads the plan once a second
    view.steps.selectRow(0)
    QApplication.processEvents()
    await asyncio.sleep(1.2)
    view.grab().save(str(ROOT / "docs" / "study-plans.png"))
    view.resize(1024, 700)
    await asyncio.sleep(1.2)
    view.grab().save(str(tmp / "study-plans-1024.png"))
    for browser in browsers:
        await browser.close()
    await view.stop()
    await controller.shutdown()
    print(f"wrote docs/study-plans.png and {tmp / 'study-plans-1024.png'}")


if __name__ == "__main__":
    if sys.argv[1:] == ["plans"]:
        import PySide6  # noqa: F401 - bind qasync to PySide6
        import qasync
        from PySide6.QtWidgets import QApplication

        from ui.app import use_app_font
        from ui.collector import MainThreadCollector

        app = QApplication.instance() or QApplication(sys.argv)
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        use_app_font(app)  # as the app (ui.app.run)
        collector = MainThreadCollector(parent=app)
        qasync.run(plans_window())
    else:
        asyncio.run(main())
