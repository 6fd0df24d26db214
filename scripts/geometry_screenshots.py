"""docs/trajectory.png (1440×900) and docs/trajectory-1024.png (1024×700): a replay part-way
through a four-person offline session, with the Geometry view under the timeline (the trajectory
with the current message ringed, cohesion and volatility with the current turn marked).

Run through ``scripts/screenshots.py trajectory``.
"""

from __future__ import annotations

import asyncio

from screenshots import DOCS, four_friends, settle, step  # beside this script


async def trajectory() -> None:
    win, controller = await four_friends()
    room = controller.room
    assert room is not None
    for _ in range(14):
        if len(room.messages) >= 16 or controller.run_state() != "paused":
            break
        await step(controller, room)
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
