"""docs/trajectory.png (1440×900) and docs/trajectory-1024.png (1024×700): a replay part-way
through a four-person offline session, with the Geometry view under the timeline (the trajectory
with the current message ringed, cohesion and volatility with the current turn marked).

Run through ``scripts/screenshots.py trajectory``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from ui.app import build

DOCS = Path(__file__).resolve().parent.parent / "docs"


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)
    QApplication.processEvents()


async def trajectory() -> None:
    tmp = tempfile.mkdtemp()
    win, controller = build(db_path=f"{tmp}/shots.db", environ={})
    win.resize(1440, 900)
    win.show()
    controller.start_loading_embedder()
    await controller.embedder()
    people = [p for p in controller.library() if p.name in ("Ana", "Ben", "Chloe", "Dev")]
    controller.settings.engine.seed = 7
    await controller.new_session(people, icebreaker="What did you do last weekend?")
    room = controller.room
    assert room is not None
    for _ in range(14):
        if len(room.messages) >= 16 or controller.run_state() != "paused":
            break
        controller.control.step()
        controller._ensure_simulation_task(room)
        while any(s != "idle" for s in room._states.values()) or controller.control._steps:
            await asyncio.sleep(0.05)
    sid = room.session_id
    await controller.stop()
    await win.open_replay(str(controller.db_path), sid)
    for _ in range(600):
        if win.geometry_view.panel.trajectory.point_count() == len(room.messages):
            break
        await asyncio.sleep(0.05)
    else:
        raise RuntimeError(
            f"the geometry view did not draw: {win.geometry_view.panel.status.text()}"
        )
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.message_seq[min(10, len(room.messages))])
    await settle(0.5)
    win.grab().save(str(DOCS / "trajectory.png"))
    win.resize(1024, 700)
    await settle(0.5)
    assert win.width() == 1024, f"the window was pushed to {win.width()} px"
    win.grab().save(str(DOCS / "trajectory-1024.png"))
    await controller.shutdown()
    print("wrote docs/trajectory.png, docs/trajectory-1024.png")
