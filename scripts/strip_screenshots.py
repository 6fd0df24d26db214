"""Whole-screen shots of three small-screen parts of the window on a 1024×700 screen, under a
real X server with a window manager (as :mod:`fit_screenshots` beside this script):

- docs/evaluation-popup-<suffix>.png: a thought's evaluation pop-up (every heuristic listed);
- docs/decision-strip-<suffix>.png: the decision strip with a System-1 reply drawn below the
  best, while a banner and the person's question card show, its handle dragged up;
- docs/note-editor-<suffix>.png: a person's note editor on the newest message while agents go
  on posting.

Usage: ``.venv/bin/python scripts/strip_screenshots.py [suffix]`` (suffix: ``1024``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: Seconds for the window manager to frame a window (ui.screen_fit) and the panes to settle.
FRAMED = 1.2
AGENTS = ("Ana", "Ben", "Chloe")
REASON = (
    "best thought 3.90 ≥ imThreshold 3.20; System-1 reply drawn (a quick reply below the best:"
    " 2.00); no System-1 reply drawn for the others"
)


def shoot(name: str) -> None:
    subprocess.run(["import", "-window", "root", str(DOCS / name)], check=True)
    print("wrote", f"docs/{name}")


async def settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


def evaluation():
    from playground import domain

    heuristics = {h: 0.3 + 0.08 * i for i, h in enumerate(domain.HEURISTICS)}
    return domain.Evaluation(
        thought_id=7,
        step=9,
        rating=4,
        distribution={1: 0.02, 2: 0.08, 3: 0.2, 4: 0.5, 5: 0.2},
        reasons_for=[
            "Ben asked about first hikes and I walked the Dales last spring.",
            "Nobody has answered his question yet.",
        ],
        reasons_against=["Chloe may want to answer first: she was addressed by name."],
        heuristics=heuristics,
        expected=3.78,
        silence_factor=1.0404,
        score=3.93,
        method="offline-heuristic",
    )


async def shots(suffix: str) -> None:
    from playground import domain, events
    from ui.app import build
    from ui.panes.decisions.evaluation_popup import EvaluationPopup

    tmp = tempfile.mkdtemp()
    win, _controller = build(db_path=f"{tmp}/shots.db", environ={})
    win.show()
    bridge = win.bridge
    for i, name in enumerate((*AGENTS, "Maya")):
        kind = "human" if name == "Maya" else "ai"
        bridge.dispatch(events.ParticipantJoined(name=name, participant_kind=kind, color_index=i))
    win.conversation.set_human("Maya")

    def post(mid: int) -> None:
        speaker = AGENTS[mid % 3]
        msg = domain.Message(
            id=mid,
            speaker=speaker,
            text=f"Message {mid}: the Dales in spring, boots, maps and where to have tea after.",
            step=mid,
            at="2026-01-01T10:00:00",
            system=1 if mid == 9 else 2,
        )
        bridge.dispatch(events.MessagePosted(message=msg))

    for mid in range(1, 10):
        post(mid)
    bridge.dispatch(events.TriggerFired(trigger="new_message", message_id=9, step=9))
    decisions = [
        domain.Decision(agent="Ana", step=9, trigger="new_message", action="speak", score=2.0,
                        best_score=3.9, threshold=3.2, reason=REASON, thought_id=7),
        domain.Decision(agent="Ben", step=9, trigger="new_message", action="silent", score=2.4,
                        best_score=2.4, threshold=3.2, reason="best thought 2.40 < imThreshold"
                        " 3.20: stays silent"),
        domain.Decision(agent="Chloe", step=9, trigger="new_message", action="silent",
                        best_score=1.1, score=1.1, threshold=3.2, reason="best thought 1.10 <"
                        " imThreshold 3.20: stays silent"),
    ]  # fmt: skip
    for d in decisions:
        bridge.dispatch(events.DecisionMade(decision=d, step=9))
    win.messages.show_error("The model server did not answer in 30 s; retrying (2 of 3).")
    await settle(FRAMED)
    split = win.center_split  # the reader drags the strip's handle up to read the table
    split.moveSplitter(sum(split.sizes()) - 230, 1)
    await settle(0.5)
    shoot(f"decision-strip-{suffix}.png")

    win.messages.hide_error()
    split.moveSplitter(sum(split.sizes()), 1)  # the strip back to its title line
    post(10)  # the person clicks ✎ on a message that has just arrived
    newest = win.conversation.widgets[10]
    newest.note_button.click()
    newest.note_edit.setText("He sounded rushed")
    for mid in range(11, 15):
        post(mid)
        await settle(0.2)
    await settle(FRAMED)
    shoot(f"note-editor-{suffix}.png")
    newest.close_note()

    thought = domain.Thought(
        id=7, agent="Ana", text="I could tell Ben about the Malham Cove walk: short, with a view"
        " at the top, and a tea room at the end.", system=2, created_step=8, last_access=9,
    )  # fmt: skip
    popup = EvaluationPopup(thought, [evaluation()], win)
    popup.show()
    await settle(FRAMED)
    shoot(f"evaluation-popup-{suffix}.png")
    os._exit(0)  # the window's own shutdown is not what is shown


def main() -> None:
    sys.path.insert(0, str(ROOT))
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
    qasync.run(shots(os.environ.get("STRIP_SCREENSHOTS_SUFFIX", "1024")))


if __name__ == "__main__":
    if os.environ.get("FIT_SCREENSHOTS_DISPLAY"):
        main()
    else:
        sys.path.insert(0, str(ROOT / "scripts"))
        from fit_screenshots import serve_and_run

        if sys.argv[1:]:
            os.environ["STRIP_SCREENSHOTS_SUFFIX"] = sys.argv[1]
        sys.exit(serve_and_run(__file__))
