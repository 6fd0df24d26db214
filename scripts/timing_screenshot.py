"""The decision strip of a session run against the hosted-style stand-in, with its title's
tooltip open on the trigger's time breakdown, as docs/timing-tooltip.png.

Run under an X server with a window manager (the tooltip is a window of its own):

    xvfb-run -s "-screen 0 1440x900x24" .venv/bin/python scripts/timing_screenshot.py DB SESSION
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlite_utils
from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QApplication, QToolTip

from playground.history.recording import Recording
from ui.bridge import EngineBridge
from ui.panes.decisions.decision_strip import DecisionStrip

OUT = Path(__file__).resolve().parent.parent / "docs" / "timing-tooltip.png"


def main(db_path: str, session: str) -> None:
    app = QApplication([])
    rec = Recording.load(sqlite_utils.Database(db_path), session)
    bridge = EngineBridge()
    strip = DecisionStrip(bridge)
    strip.resize(900, 260)
    strip.move(20, 20)
    strip.show()
    last = rec.seqs[-1]
    for e in rec.events_between(0, last):
        bridge.dispatch(e)

    def tip() -> None:
        pos = strip.title.mapToGlobal(QPoint(10, strip.title.height()))
        QToolTip.showText(pos, strip.title.toolTip(), strip.title)

    def shot() -> None:
        subprocess.run(["import", "-window", "root", str(OUT)], check=True)
        print(OUT)
        app.quit()

    QTimer.singleShot(500, tip)
    QTimer.singleShot(1500, shot)
    app.exec()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
