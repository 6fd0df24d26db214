"""Work a pane puts off until the frame the user is looking at has been drawn.

A replay jump first lays out what is on screen (the bubbles and messages in view); the rest (rows
scrolled out of sight) is done a moment later, when the user is not moving. Scrubbing therefore
pays only for what is seen, and a pane that is asked about its contents finishes the work first
(:meth:`Deferred.flush`), so nothing ever reads a half-built pane.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

#: How long after the last jump the off-screen part is filled in, in milliseconds. Long enough
#: that a scrub (a jump every few ms) never waits for it; short enough to finish before anyone
#: scrolls.
FILL_DELAY_MS = 40


class Deferred(QObject):
    """A single piece of pending work: :meth:`schedule` (re)starts the delay, :meth:`flush` runs
    it now if it is pending, :meth:`cancel` drops it."""

    def __init__(self, work: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._work = work
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)
        self.pending = False

    def schedule(self) -> None:
        self.pending = True
        self._timer.start(FILL_DELAY_MS)

    def cancel(self) -> None:
        self.pending = False
        self._timer.stop()

    def flush(self) -> None:
        if self.pending:
            self.pending = False
            self._timer.stop()
            self._work()
