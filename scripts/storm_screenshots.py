"""The STORM screenshots (``scripts/screenshots.py storm``): a simulated user's hidden state in
the window, and the STORM view over a small offline batch of dyadic runs.

- ``docs/storm-hidden-state.png``: two simulated users and one Inner Thoughts agent on the
  offline engine (the paper's Slack-study shape), a simulated user selected: its private profile
  on the left, its hidden-state bubbles and satisfaction/clarity sparkline on the right.
- ``docs/storm-report.png``: ``playground storm --engine offline`` over 2 profiles × 4
  uncertainty levels × profile access on/off, shown in View ▸ STORM dialogues…. The offline
  engine has no judge, so Clarify and SSA show "–" (the status line says so).
Each is also rendered at 1024×700 into the temporary folder printed at the end, to check the
small size.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from playground.storm import profiles
from ui.app import build
from ui.session.simulated import SimulatedSeat

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


async def _settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)
    QApplication.processEvents()


async def hidden_state(tmp: str) -> None:
    win, controller = build(db_path=f"{tmp}/room.db", environ={})
    controller.simulated.users_dir = Path(tmp) / "users"
    win.resize(1440, 900)
    win.show()
    controller.embedding.start()
    await controller.embedding.get()
    controller.settings.engine.seed = 11
    agent = next(p for p in controller.library() if p.name == "Chloe")
    one = profiles.generate_profile(21, task="Buy a smartphone", difficulty=3, uncertainty=40)
    two = profiles.generate_profile(
        22, task="Rent an apartment", difficulty=2, uncertainty=0, avoid_names=[one.name]
    )
    await controller.new_session(
        [agent],
        icebreaker="Hi both! What can I help you with today?",
        simulated=[SimulatedSeat(one, 0.5), SimulatedSeat(two, 0.5)],
    )
    room = controller.room
    assert room is not None
    while sum(m.speaker == one.name for m in room.messages) < 5 and len(room.messages) < 30:
        controller.control.step()
        controller._ensure_simulation_task(room)
        while any(s != "idle" for s in room.states.values()) or controller.control._steps:
            await asyncio.sleep(0.05)
        await _settle(0.1)
    await controller.stop()  # hold the frame
    win.participants.chips[one.name].clicked.emit(one.name)
    win.hide_error()
    for (w, h), path in (
        ((1440, 900), DOCS / "storm-hidden-state.png"),
        ((1024, 700), Path(tmp) / "storm-hidden-state-1024.png"),
    ):
        win.resize(w, h)
        await _settle(0.5)
        win.conversation.list.scrollToBottom()
        await _settle()
        win.grab().save(str(path))
    await controller.shutdown()
    win.close()


async def report(tmp: str) -> None:
    db = f"{tmp}/storm.db"
    await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "playground", "storm", "--engine", "offline", "--task",
         "Buy a smartphone", "--profiles", "2", "--uncertainties", "0,40,60,80",
         "--profile-access-modes", "both", "--turns", "6", "--db", db, "--no-progress"],
        check=True, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    win, controller = build(db_path=db, environ={})
    view = win.storm.open_view()
    view.dialogues.selectRow(3)
    for (w, h), path in (
        ((1440, 900), DOCS / "storm-report.png"),
        ((1024, 700), Path(tmp) / "storm-report-1024.png"),
    ):
        view.resize(w, h)
        await _settle(0.5)
        view.grab().save(str(path))
    view.close()
    await controller.shutdown()
    win.close()


async def storm() -> None:
    tmp = tempfile.mkdtemp()
    await hidden_state(tmp)
    await report(tmp)
    print(f"wrote docs/storm-hidden-state.png, docs/storm-report.png (1024×700 in {tmp})")
