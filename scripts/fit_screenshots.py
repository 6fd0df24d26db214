"""Whole-screen shots of the app on a 1024×700 screen, under a real X server with a window
manager, as a person with a small laptop screen sees it:

- docs/new-session-1024.png: the New session dialog over the window (its form scrolls; OK and
  Cancel stay in view);
- docs/questionnaire-1024.png: the questionnaire offered when the person's session ends;
- docs/replay-geometry-1024.png: that session in replay with View ▸ Geometry open;
- docs/invite-1024.png: Session ▸ Invite people… over a live session, one person joined from a
  browser (``--only invite`` makes this one alone).

Needs Xvfb, Openbox and ImageMagick (``apt-get install xvfb openbox imagemagick``):
    .venv/bin/python scripts/fit_screenshots.py
starts ``Xvfb`` and ``openbox`` on a free display, runs itself there (``QT_QPA_PLATFORM=xcb``)
and grabs the screen with ``import -window root``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SCREEN = (1024, 700)
#: Seconds for the window manager to frame a window and for it to fit itself (ui.screen_fit).
FRAMED = 1.2


def serve_and_run(script: str = __file__) -> int:
    """Start Xvfb and Openbox, run ``script`` (this one) on that display, stop them again."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            f"{SCREEN[0]}x{SCREEN[1]}x24",
            "-nolisten",
            "tcp",
        ],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    procs = [xvfb]
    try:
        with os.fdopen(read) as f:
            display = ":" + f.readline().strip()
        ready = Path(tempfile.mkdtemp()) / "openbox-started"
        env = {**os.environ, "DISPLAY": display}
        procs.append(
            subprocess.Popen(
                ["openbox", "--startup", f"touch {ready}"], env=env, stderr=subprocess.DEVNULL
            )
        )
        while not ready.exists():
            time.sleep(0.05)
        env.update(QT_QPA_PLATFORM="xcb", FIT_SCREENSHOTS_DISPLAY=display)
        return subprocess.run([sys.executable, script], env=env, cwd=ROOT).returncode
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait()


def shoot(name: str) -> None:
    subprocess.run(["import", "-window", "root", str(DOCS / name)], check=True)
    print("wrote", f"docs/{name}")


async def invite_shot() -> None:
    """The Invite dialog over a live session that one person joined from a browser."""
    from screenshots import settle, step  # beside this script

    from testbed.study import open_browser
    from ui.app import build

    tmp = tempfile.mkdtemp()
    win, controller = build(db_path=f"{tmp}/invite.db", environ={})
    win.show()
    controller.embedding.start()
    await controller.embedding.get()
    people = [p for p in controller.library() if p.name in ("Ben", "Chloe")]
    await controller.new_session(people, icebreaker="What did you do last weekend?")
    room = controller.room
    assert room is not None
    for _ in range(3):
        await step(controller, room)
    dlg = win.dialogs.open_invite()
    await controller.study.invite(2)
    first = controller.study.seats()[0]
    browser, _ = await open_browser(first.link, controller.study.address)
    await browser.send(type="join", name="Maya")
    await browser.send(type="say", text="Hi both! I am joining from my laptop.")
    await settle(2.0)
    dlg.refresh()
    await settle(FRAMED)
    shoot("invite-1024.png")
    await browser.close()
    await controller.shutdown()


async def shots() -> None:
    from screenshots import settle, step  # beside this script

    from ui.app import build

    if os.environ.get("FIT_SCREENSHOTS_ONLY") == "invite":
        await invite_shot()
        return

    tmp = tempfile.mkdtemp()
    win, controller = build(db_path=f"{tmp}/shots.db", environ={})
    win.show()  # fitted to the screen by itself (ui.screen_fit)
    controller.embedding.start()
    await controller.embedding.get()
    people = [p for p in controller.library() if p.name in ("Ana", "Ben", "Chloe", "Dev")]

    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.prefill(people, icebreaker="What did you do last weekend?", seed=7)
    await settle(FRAMED)
    shoot("new-session-1024.png")
    dlg.accept()
    while controller.room is None:
        await asyncio.sleep(0.05)
    room = controller.room
    for _ in range(9):
        await step(controller, room)
    await controller.join_as_human("Maya")
    await controller.send("Hi all! Ben, you walk a lot — any tips for a first hike in the Dales?")
    await settle(3.0)  # real time: an agent answers
    sid = room.session_id
    await controller.stop()  # the person's session ends: the questionnaire is offered
    questionnaire = win.rating.questionnaire
    while questionnaire is None or not questionnaire.isVisible():
        await asyncio.sleep(0.05)
        questionnaire = win.rating.questionnaire
    for key, value in list(zip(questionnaire.form.rows, (6, 5, 6, 4), strict=False)):
        questionnaire.form.choose(key, value)
    await settle(FRAMED)
    shoot("questionnaire-1024.png")
    questionnaire.reject()

    await win.open_replay(str(controller.db_path), sid)
    win.geometry_view.action.setChecked(True)  # View ▸ Geometry (Ctrl+Shift+G)
    rec = win.replay.recording
    assert rec is not None
    n = len(rec.message_seq)
    while win.geometry_view.panel.trajectory.point_count() < n:
        await asyncio.sleep(0.05)
    win.replay.seek(rec.moments[-1].seq)  # the end: the person has joined
    await settle(FRAMED)
    shoot("replay-geometry-1024.png")
    await controller.shutdown()


def main() -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "scripts"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import PySide6  # noqa: F401 - bind qasync to PySide6
    import qasync
    from PySide6.QtWidgets import QApplication

    from ui.app import use_app_font
    from ui.collector import MainThreadCollector

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)  # instance() is typed as the core application
    app.setQuitOnLastWindowClosed(False)
    use_app_font(app)
    MainThreadCollector(parent=app)
    qasync.run(shots())


if __name__ == "__main__":
    if sys.argv[1:3] == ["--only", "invite"]:
        os.environ["FIT_SCREENSHOTS_ONLY"] = "invite"
    if os.environ.get("FIT_SCREENSHOTS_DISPLAY"):
        main()
    else:
        sys.exit(serve_and_run())
