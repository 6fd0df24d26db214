"""Typewriter: reveals a message character by character at human typing speed (replay, blind rating)."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

TICK_MS = 30


class Typewriter(QObject):
    """Counts how many characters of a text are "typed" so far, at ``cps`` characters per second.

    ``progressed(n)`` fires on every tick with the characters shown so far; ``finished()`` once the
    whole text is out (also after :meth:`skip`). Time is measured, not counted in ticks, so a busy
    event loop never slows the apparent typing speed down.
    """

    progressed = Signal(int)
    finished = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self._length = 0
        self._cps = 1.0
        self._shown = 0
        self._offset = 0  # characters typed before the last speed change

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    @property
    def shown(self) -> int:
        return self._shown

    def start(self, length: int, cps: float) -> None:
        """Start typing a text of ``length`` characters at ``cps`` characters per second."""
        self._length = max(0, length)
        self._cps = max(0.1, cps)
        self._shown = 0
        self._offset = 0
        self._clock.start()
        if self._length == 0:
            self.skip()
            return
        self._timer.start()

    def set_cps(self, cps: float) -> None:
        """Change the speed mid-message, keeping the characters already shown."""
        self._cps = max(0.1, cps)
        if self.running:
            self._offset = self._shown
            self._clock.start()

    def skip(self) -> None:
        """Show the whole text now."""
        self._timer.stop()
        self._shown = self._length
        self._offset = 0
        self.progressed.emit(self._shown)
        self.finished.emit()

    def stop(self) -> None:
        """Stop without finishing (the caller moves elsewhere)."""
        self._timer.stop()
        self._offset = 0

    def _tick(self) -> None:
        n = self._offset + int(self._clock.elapsed() / 1000 * self._cps)
        if n >= self._length:
            self.skip()
            return
        if n != self._shown:
            self._shown = n
            self.progressed.emit(n)
