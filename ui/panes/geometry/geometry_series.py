"""Cohesion and volatility over turns (pyqtgraph), with the current moment marked.

Both come from :func:`playground.geometry.features.turn_series`; a turn where a series is not
defined (volatility at the first message, for instance) is a gap in its line, not a zero.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ui.widgets.legend_plot import plot_with_legend
from ui.widgets.sparkline import TurnChart, curve, gaps

#: Line colours: cohesion (green, solid) and volatility (purple, dashed).
COHESION_COLOR = "#2e7d32"
VOLATILITY_COLOR = "#6a1b9a"
#: The current-moment marker (the replay timeline's cursor colour).
MARKER_COLOR = "#283593"


class GeometrySeries(TurnChart):
    """Per-turn cohesion and volatility, one point per message.

    Args:
        parent: Optional parent widget.

    Attributes:
        plot: The pyqtgraph plot (x: turn number; y: the series' values).
        cohesion: The cohesion line.
        volatility: The volatility line.
        marker: The vertical line at the current turn.
        legend: The legend, to the right of the plot.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Ranges are set with the data (an all-gap series has none).
        self.plot, self.legend = plot_with_legend(self)
        plot = self.plot
        plot.showGrid(x=False, y=True, alpha=0.25)
        plot.getAxis("left").setWidth(30)
        plot.getAxis("bottom").setHeight(20)  # the turn numbers; the header says "per turn"
        self.cohesion = curve(plot, COHESION_COLOR, symbol_size=4)
        self.volatility = curve(plot, VOLATILITY_COLOR, dashed=True, symbol_size=4)
        self.marker = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(MARKER_COLOR, width=2))
        self.marker.hide()
        plot.addItem(self.marker)
        self.legend.addItem(self.cohesion, "cohesion")
        self.legend.addItem(self.volatility, "volatility")

    def set_series(
        self,
        turns: Sequence[int],
        cohesion: Sequence[float | None],
        volatility: Sequence[float | None],
        current: int | None = None,
    ) -> None:
        """Show the series over ``turns`` (the three sequences have the same length).

        Args:
            turns: Each message's turn number.
            cohesion: Cohesion at each turn (None where undefined).
            volatility: Volatility at each turn (None where undefined).
            current: Index of the current message (``None``: the last one).

        Raises:
            ValueError: The sequences differ in length.
        """
        if not len(turns) == len(cohesion) == len(volatility):
            raise ValueError(
                f"series: {len(turns)} turns, {len(cohesion)} cohesion and"
                f" {len(volatility)} volatility values"
            )
        self._turns = list(turns)
        x = np.array(self._turns, dtype=float)
        c, v = np.array(gaps(cohesion), dtype=float), np.array(gaps(volatility), dtype=float)
        for item, y in ((self.cohesion, c), (self.volatility, v)):
            if np.isfinite(y).any():
                item.setData(x, y, connect="finite")
            else:  # nothing defined yet (one message): no line (pyqtgraph cannot bound all-NaN)
                item.setData([], [])
        last = max(self._turns, default=1)
        first = min(self._turns, default=1)
        self.plot.setXRange(first - 0.5, max(last, first + 1) + 0.5, padding=0)
        finite = np.concatenate([c[np.isfinite(c)], v[np.isfinite(v)]])
        lo = min(0.0, float(finite.min())) if len(finite) else 0.0
        hi = max(1.0, float(finite.max())) if len(finite) else 1.0
        self.plot.setYRange(lo, hi, padding=0.05)
        span = max(last - first, 1)
        step = 1 if span <= 12 else 2 if span <= 24 else 5 if span <= 60 else 10
        ticks = [(t, str(t)) for t in range(first, last + 1) if (t - first) % step == 0]
        self.plot.getAxis("bottom").setTicks([ticks])
        self.set_current(len(self._turns) - 1 if current is None else current)

    def set_current(self, index: int | None) -> None:
        """Mark the turn at ``index`` (``None`` or ``-1``: before the first message)."""
        if index is None or index < 0 or not self._turns:
            self.marker.hide()
            return
        self.marker.setValue(self._turns[min(index, len(self._turns) - 1)])
        self.marker.show()

    # -- what is shown (for tests) ---------------------------------------------------------------

    def marker_turn(self) -> int | None:
        """The turn the marker stands at, or None when hidden."""
        return round(self.marker.value()) if self.marker.isVisible() else None

    def values(self) -> tuple[list[float | None], list[float | None]]:
        """The plotted cohesion and volatility values (None for a gap), in turn order."""
        return self._line_values(self.cohesion), self._line_values(self.volatility)
