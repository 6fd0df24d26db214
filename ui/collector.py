"""Garbage collection on the GUI thread only.

Python's cyclic garbage collector runs in whichever thread happens to allocate when a threshold is
crossed, here often the embedding worker. If it then frees a Qt widget (a closed dialog, an old
window, a removed bubble), the widget is destroyed off the GUI thread while its timers are still
registered, and Qt later fires a timer on freed memory: a segfault. So automatic collection is
switched off and the same generational collection is run from a timer on the GUI thread.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer


class MainThreadCollector(QObject):
    """Collects cyclic garbage from a GUI-thread timer, generation by generation, like gc would."""

    def __init__(self, interval_ms: int = 500, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self.threshold[generation]:
                gc.collect(generation)
                break

    def stop(self) -> None:
        self.timer.stop()
        gc.enable()
