"""Render the screenshots in docs/: a running simulation, the evaluation pop-up, a human session
and a replay mid-way (1440×900 and 1024×700).

Run under a real X server for window-manager-free grabs, e.g.
    xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python scripts/screenshots.py
(QT_QPA_PLATFORM=offscreen works too).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import PySide6  # noqa: F401
import qasync
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication

from ui.app import build, use_app_font
from ui.collector import MainThreadCollector
from ui.rating.study_report_view import StudyReportView

DOCS = ROOT / "docs"


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)
    QApplication.processEvents()


async def four_friends(size: tuple[int, int] = (1440, 900)) -> tuple[Any, Any]:
    """A window of ``size`` on a fresh database, MiniLM loaded, and a paused offline session of
    Ana, Ben, Chloe and Dev (seed 7) started: ``(window, controller)``."""
    tmp = tempfile.mkdtemp()
    win, controller = build(db_path=f"{tmp}/shots.db", environ={})
    win.resize(*size)
    win.show()
    controller.embedding.start()
    await controller.embedding.get()
    people = [p for p in controller.library() if p.name in ("Ana", "Ben", "Chloe", "Dev")]
    controller.settings.engine.seed = 7
    await controller.new_session(people, icebreaker="What did you do last weekend?")
    return win, controller


async def step(controller: Any, room: Any) -> None:
    """One step of a paused room, waited for until every participant is idle again."""
    controller.control.step()
    controller._ensure_simulation_task(room)
    while any(s != "idle" for s in room._states.values()) or controller.control._steps:
        await asyncio.sleep(0.05)


async def main() -> None:
    win, controller = await four_friends()
    room = controller.room
    for _ in range(7):
        controller.control.step()
        controller._ensure_simulation_task(room)
        while (
            room._states and any(s != "idle" for s in room._states.values())
        ) or controller.control._steps:
            await asyncio.sleep(0.05)
        await settle(0.2)
    win.thoughts.sort_combo.setCurrentIndex(1)
    await settle()
    win.grab().save(str(DOCS / "playground.png"))

    bubble = next(b for b in win.thoughts.bubbles() if b.score_text() != "–")
    popup = bubble.show_evaluation()
    await settle()
    # The pop-up over the window, as a person sees it after right-clicking a bubble.
    canvas = win.grab()
    shot = popup.grab()
    x, y = canvas.width() - shot.width() - 430, 150
    painter = QPainter(canvas)
    painter.fillRect(x + 6, y + 6, shot.width(), shot.height(), QColor(0, 0, 0, 60))
    painter.drawPixmap(x, y, shot)
    painter.setPen(QColor("#888888"))
    painter.drawRect(x, y, shot.width() - 1, shot.height() - 1)
    painter.end()
    canvas.save(str(DOCS / "evaluation.png"))
    popup.close()

    await controller.join_as_human("Maya")
    await controller.send("Hi all! Ben, you walk a lot — any tips for a first hike in the Dales?")
    await settle(2.5)
    mine = next(m for m in room.messages if m.speaker == "Maya")
    await controller.annotate(mine.id, "I want Ben to feel invited in")
    reply = next((m for m in room.messages if m.kind == "ai" and m.id > mine.id), None)
    if reply is not None:
        await controller.annotate(reply.id, "friendly, but a bit generic")
    win.conversation.focus_message(mine.id)  # real time runs at typing speed: the view holds still
    await settle(0.5)
    win.grab().save(str(DOCS / "human-session.png"))

    # A replay mid-way: the first session, paused while a message is being typed.
    first = room.session_id
    controller.set_pace("fast")
    await controller.stop()
    await win.open_replay(str(controller.db_path), first)
    rec = win.replay.recording
    messages = [m for m in rec.moments if m.kind == "message"]
    win.replay.seek(rec.previous_moment(messages[5].seq).seq)
    win.transport.cps.setValue(40)
    win.replay.play()
    await settle(1.2)
    win.replay.typewriter.stop()  # hold the frame mid-message
    win.replay._beat.stop()
    await settle()
    win.grab().save(str(DOCS / "replay.png"))
    win.resize(1024, 700)
    await settle()
    win.grab().save(str(DOCS / "replay-1024.png"))
    win.resize(1440, 900)

    # The session library over a few more real sessions (command-line runs and a fork).
    for seed, turns in ((3, 8), (4, 12), (5, 6)):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "playground", "simulate", "--agents", "3", "--turns", str(turns),
            "--seed", str(seed), "--quiet", "--db", str(controller.db_path),
            stdout=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await proc.wait()
    library = win.open_library()
    library.resize(1000, 560)
    await settle(0.5)
    library.table.selectRow(1)
    await settle()
    library.grab().save(str(DOCS / "library.png"))
    library.close()
    await controller.shutdown()
    print("wrote", ", ".join(str(p.relative_to(ROOT)) for p in sorted(DOCS.glob("*.png"))))


async def experiments() -> None:
    """The Experiments window: an experiment running (1440×900), then finished (1024×700)."""
    from ui.experiments.launch import Options, plan_new

    tmp = tempfile.mkdtemp()
    win, controller = build(db_path=f"{tmp}/experiments.db", environ={})
    win.show()
    controller.embedding.start()
    await controller.embedding.get()
    view = win.experiments.open_view()
    view.resize(1440, 900)

    def options(**kw: object) -> Options:
        base: dict[str, object] = {
            "conditions": ("inner-thoughts", "next-speaker"),
            "conversations": 2,
            "agents": 3,
            "turns": 6,
            "seed": 1,
            "personas_dir": controller.personas_dir,
            "concurrency": 2,
            "name": "pilot",
            "engine": "offline",
        }
        return Options(**{**base, **kw})  # type: ignore[arg-type]  # base holds each field's type

    def launch(opts: Options) -> Any:
        job = view.launch(plan_new(opts, controller.settings, controller.environ))
        assert job is not None
        return job

    async def wait(job: Any, finished: int | None = None) -> None:
        while job.running:
            if finished is not None and job.progress and job.progress.finished >= finished:
                return
            await asyncio.sleep(0.2)

    await wait(launch(options()))  # an earlier pilot, finished
    await wait(launch(options(name="stopped", seed=2, conversations=3)), finished=2)
    await view.stop()  # cancelled: its conversations in flight are saved interrupted
    job = launch(
        options(
            name="paper-protocol",
            conditions=("inner-thoughts", "next-speaker", "reactive"),
            conversations=6,
            agents=4,
            turns=10,
            seed=7,
            concurrency=4,
        )
    )
    await wait(job, finished=9)
    view.runs.selectRow(3)
    await asyncio.sleep(0.5)  # no processEvents(): the experiment's tasks run meanwhile
    view.grab().save(str(DOCS / "experiments.png"))
    await wait(job)
    view.resize(1024, 700)
    view.runs.selectRow(4)
    await asyncio.sleep(0.5)
    view.grab().save(str(DOCS / "experiments-1024.png"))
    view.close()
    await controller.shutdown()
    print("wrote docs/experiments.png, docs/experiments-1024.png")


async def mixed() -> None:
    """A mixed room (Inner Thoughts, next-speaker and reactive agents) after 5 steps, with the
    next-speaker prediction in the decision strip: docs/mixed-room.png (1440×900)."""
    tmp = tempfile.mkdtemp()
    win, controller = build(db_path=f"{tmp}/shots.db", environ={})
    win.resize(1440, 900)
    win.show()
    controller.embedding.start()
    await controller.embedding.get()
    people = [p for p in controller.library() if p.name in ("Ana", "Ben", "Chloe", "Dev")]
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    dlg.prefill(people, icebreaker="What did you do last weekend?", seed=7)
    dlg.set_all_policies("next-speaker")
    dlg.set_policy("Ana", "inner-thoughts")
    dlg.set_policy("Dev", "reactive")
    dlg.accept()
    while controller.room is None:
        await asyncio.sleep(0.05)
    room = controller.room
    for _ in range(5):
        controller.control.step()
        controller._ensure_simulation_task(room)
        while any(s != "idle" for s in room._states.values()) or controller.control._steps:
            await asyncio.sleep(0.05)
        await settle(0.2)
    await settle()
    win.grab().save(str(DOCS / "mixed-room.png"))
    await controller.stop()
    await controller.shutdown()
    print("wrote docs/mixed-room.png")


async def layout() -> None:
    """The playground at the three window sizes the layout is made for: docs/layout-1024.png
    (1024×700), docs/layout-1440.png (1440×900) and docs/layout-1920.png (1920×1080). A person
    has joined, so the one-click question card and the "✎ note" buttons are on screen, and the
    thoughts are sorted by score (latest step first)."""
    win, controller = await four_friends((1024, 700))
    room = controller.room
    for _ in range(6):
        await step(controller, room)
        await settle(0.2)
    win.thoughts.sort_combo.setCurrentIndex(1)
    await controller.join_as_human("Maya")
    await controller.send("Hi all! Ben, you walk a lot — any tips for a first hike in the Dales?")
    while not win.conversation.card.isVisible():  # an agent answers: the question card
        await asyncio.sleep(0.1)
    controller.set_pace("fast")
    await controller.stop()  # hold the frame
    await settle(0.5)
    for w, h in ((1024, 700), (1440, 900), (1920, 1080)):
        win.resize(w, h)
        await settle(0.5)
        win.conversation.list.scrollToBottom()
        await settle()
        assert win.width() == w, f"the window was pushed to {win.width()} px"
        win.grab().save(str(DOCS / f"layout-{w}.png"))
    await controller.shutdown()
    print("wrote docs/layout-1024.png, docs/layout-1440.png, docs/layout-1920.png")


async def storm() -> None:
    """docs/storm-hidden-state.png and docs/storm-report.png (see scripts/storm_screenshots.py)."""
    from storm_screenshots import storm as shots  # beside this script

    await shots()


async def trajectory() -> None:
    """docs/trajectory.png and docs/trajectory-1024.png (see scripts/geometry_screenshots.py)."""
    from geometry_screenshots import trajectory as shots  # beside this script

    await shots()


async def study_report() -> None:
    """Rating ▸ Study report… over a finished study (testbed/study_data.py: plan p1's three
    offline conversations with every answer, plan p2 not run yet), plan p1 chosen:
    docs/study-report.png (1440×900)."""
    from playground.storage import open_database, study_rows
    from testbed.study_data import build_study_database

    path = Path(tempfile.mkdtemp()) / "study.db"
    win, controller = build(db_path=str(path), environ={})
    controller.embedding.start()
    await build_study_database(path, await controller.embedding.get())
    db = open_database(path)
    study_rows.finish_plan(db, "p1")
    db.close()
    win.resize(1440, 900)
    win.show()
    view = win.rating.open_study_report()
    assert isinstance(view, StudyReportView)
    view.resize(1440, 900)
    view.set_plan("p1")
    while view.computing:
        await asyncio.sleep(0.1)
    await settle(0.5)
    view.grab().save(str(DOCS / "study-report.png"))
    await controller.shutdown()
    print("wrote docs/study-report.png")


MODES = {
    "experiments": experiments,
    "mixed": mixed,
    "layout": layout,
    "storm": storm,
    "trajectory": trajectory,
    "study-report": study_report,
}

if __name__ == "__main__":
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)  # instance() is typed as the core application
    app.setQuitOnLastWindowClosed(False)
    use_app_font(app)  # as the app (ui.app.run)
    collector = MainThreadCollector(parent=app)
    # `screenshots.py experiments` (or `mixed`, or `layout`) renders only those screenshots.
    qasync.run(MODES[sys.argv[1]]() if sys.argv[1:] and sys.argv[1] in MODES else main())
