"""Screenshots of the raters' page for docs/rating.md, in Debian's Chromium.

Offline data: four offline simulations in a temporary SQLite file (``playground simulate``),
rating plans made with ``playground rate plan new``, served by the real server on 127.0.0.1.
Writes, in docs/:

- rater-laptop.png (1280×800): a conversation being typed out, one turn marked unnatural with
  a comment;
- rater-statements.png: the seven statements once the conversation was shown in full;
- rater-pairwise.png: a pairwise choice with its reason;
- rater-phone.png (390×844): mid-conversation on a phone;
- rater-done.png: the completion code.

Run:  .venv/bin/python scripts/rater_screenshots.py

``rater_screenshots.py invite`` renders the window's Rating ▸ Invite raters… instead, serving a
plan with one link per rater (docs/invite-raters-1024.png, 1024×700; QT_QPA_PLATFORM=offscreen
or a real X server).
"""

from __future__ import annotations

import asyncio
import io
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.cli import main as cli
from playground.rating.web.server import RaterServer
from playground.storage import open_database

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
DOCS = ROOT / "docs"
#: Where the pictures only to look at go (not for the docs).
LOOK = Path(tempfile.gettempdir())


def _run(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    if cli.main(list(argv), out=out, err=err) != 0:
        raise SystemExit(f"playground {' '.join(argv)} failed: {err.getvalue()}")
    return out.getvalue()


def make_database(path: Path) -> tuple[int, int]:
    """Four offline conversations of 14 turns and two plans over them: (conversation plan,
    pairwise plan)."""
    ids = []
    for seed in range(1, 5):
        argv = ["simulate", "--agents", "3", "--turns", "14", "--seed", str(seed)]
        ids.append(_run(*argv, "--db", str(path), "--quiet").strip().splitlines()[-1])
    db = open_database(path)
    with db.conn:  # two conditions, as an experiment's runs would have: pairs need both
        for i, sid in enumerate(ids):
            condition = ("inner-thoughts", "turn-taking-baseline")[i % 2]
            db.execute("UPDATE sessions SET condition = ? WHERE id = ?", [condition, sid])
    db.close()
    common = ["--db", str(path), "--seed", "3", "--sessions", *ids]
    _run("rate", "plan", "new", "--kind", "conversation", "--rater-names", "R-ANA", "R-BEN", "R-CHLOE", "--items", "1", "--name", "Naturalness", *common)  # fmt: skip
    _run("rate", "plan", "new", "--kind", "pairwise", "--rater-names", "R-DEV", "--items", "1", "--name", "Preference", *common)  # fmt: skip
    db = open_database(path)
    try:
        rows = db.execute("SELECT id, kind FROM rating_plans ORDER BY id").fetchall()
    finally:
        db.close()
    plans = {kind: int(pid) for pid, kind in rows}
    return plans["conversation"], plans["pairwise"]


async def _page(browser: Any, link: str, width: int, height: int) -> Any:
    page = await (await browser.new_context(viewport={"width": width, "height": height})).new_page()
    await page.goto(link)
    await page.wait_for_selector("#status:has-text('Connected')")
    return page


async def conversation_pages(browser: Any, path: Path, plan_id: int) -> None:
    """rater-laptop, rater-statements, rater-done and rater-phone."""
    db = open_database(path)
    server = RaterServer(db, plan_id, cps=30)
    await server.start()
    try:
        links = dict(server.rater_links())
        laptop = await _page(browser, links["R-ANA"], 1280, 800)
        await laptop.wait_for_selector(".msg >> nth=3")
        second = laptop.locator(".msg").nth(1)
        await second.locator(".flag").click()
        await second.locator(".comment").fill("Answers a question nobody asked")
        await second.locator(".comment").press("Enter")
        await laptop.wait_for_selector(".msg >> nth=4")
        await laptop.mouse.move(0, 0)
        await laptop.screenshot(path=str(DOCS / "rater-laptop.png"))
        await laptop.click(".show-all")
        await laptop.wait_for_selector("#statements:not([hidden])")
        rows = await laptop.query_selector_all(".statement")
        for i, row in enumerate(rows[:5]):
            await (await row.query_selector(f"input[value='{(5, 6, 3, 4, 6)[i]}']")).check()
        await laptop.locator("#statements").scroll_into_view_if_needed()
        await laptop.mouse.move(0, 0)
        await laptop.screenshot(path=str(DOCS / "rater-statements.png"))
        for row in rows[5:]:
            await (await row.query_selector("input[value='5']")).check()
        await laptop.click("#submit-ratings")
        await laptop.wait_for_selector("#finished:not([hidden])")
        await laptop.screenshot(path=str(DOCS / "rater-done.png"))
        phone = await _page(browser, links["R-BEN"], 390, 844)
        await phone.wait_for_selector(".msg >> nth=9", timeout=120_000)
        await phone.screenshot(path=str(DOCS / "rater-phone.png"))
        await phone.click(".show-all")  # and the statements on the phone, to look at
        await phone.locator("#statements").scroll_into_view_if_needed()
        await phone.screenshot(path=str(LOOK / "rater-phone-statements.png"), full_page=True)
    finally:
        await server.stop()
        db.close()


async def pairwise_page(browser: Any, path: Path, plan_id: int) -> None:
    """rater-pairwise."""
    db = open_database(path)
    server = RaterServer(db, plan_id, cps=30)
    await server.start()
    try:
        page = await _page(browser, server.rater_links()[0][1], 1280, 800)
        for button in await page.query_selector_all(".show-all"):
            if await button.is_enabled():
                await button.click()
        await page.wait_for_selector("#choice:not([hidden])")
        await page.check("input[name='choice'][value='B']")
        await page.fill("#reason", "In B people answer each other; in A two speak past each other")
        await page.locator("#submit-choice").scroll_into_view_if_needed()
        await page.mouse.move(0, 0)
        await page.screenshot(path=str(DOCS / "rater-pairwise.png"))
        await page.set_viewport_size({"width": 390, "height": 844})  # on a phone, to look at
        await page.screenshot(path=str(LOOK / "rater-pairwise-phone.png"), full_page=True)
    finally:
        await server.stop()
        db.close()


async def main(path: Path, conversation: int, pairwise: int) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        await conversation_pages(browser, path, conversation)
        await pairwise_page(browser, path, pairwise)
        await browser.close()
    print("wrote docs/rater-{laptop,statements,pairwise,phone,done}.png")
    print(f"and, to look at, {LOOK}/rater-phone-statements.png, rater-pairwise-phone.png")


async def invite_window(path: Path) -> None:
    """docs/invite-raters-1024.png: Rating ▸ Invite raters…, serving, links shown."""
    from PySide6.QtWidgets import QApplication

    from ui.rating.invite import InviteRatersDialog

    db = open_database(path)
    dialog = InviteRatersDialog(db)
    dialog.show()
    dialog.resize(1024, 700)
    await dialog.start_serving()
    QApplication.processEvents()
    dialog.grab().save(str(DOCS / "invite-raters-1024.png"))
    await dialog.stop_serving()
    dialog.open_link.setChecked(True)  # the open link, at the dialog's own size: to look at
    dialog.resize(dialog.minimumSizeHint())
    await dialog.start_serving()
    QApplication.processEvents()
    dialog.grab().save(str(LOOK / "invite-raters-open-link.png"))
    await dialog.stop_serving()
    db.close()
    print(f"wrote docs/invite-raters-1024.png and, to look at, {LOOK}/invite-raters-open-link.png")


if __name__ == "__main__":
    database = Path(tempfile.mkdtemp()) / "raters.db"
    plans = make_database(database)  # before any event loop: the commands run their own
    if sys.argv[1:] == ["invite"]:
        import PySide6  # noqa: F401 - bind qasync to PySide6
        import qasync
        from PySide6.QtWidgets import QApplication

        from ui.app import use_app_font

        app = QApplication.instance() or QApplication(sys.argv)
        assert isinstance(app, QApplication)
        use_app_font(app)  # as the app (ui.app.run)
        qasync.run(invite_window(database))
    else:
        asyncio.run(main(database, *plans))
