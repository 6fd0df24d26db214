"""A small satisfaction / clarity chart (pyqtgraph): two lines over turns on a fixed 0–1 axis.

Used above a simulated user's hidden-state bubbles (it grows by one point per turn, live and in
replay) and, larger, by the STORM view. The legend sits in its own row under the plot, so it
never covers a point near 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

#: Line colours: satisfaction (blue) and intent clarity (orange), everywhere in the window.
SATISFACTION_COLOR = "#1565c0"
CLARITY_COLOR = "#ef6c00"
#: The sparkline's height above the bubbles (px, device independent).
SPARKLINE_HEIGHT = 150


def curve(
    plot: pg.PlotItem, color: str, *, dashed: bool = False, symbol_size: int = 5
) -> pg.PlotDataItem:
    """An empty line of dots in ``color`` (dashed or solid) on ``plot``; a gap (NaN, see
    :func:`gaps`) breaks the line."""
    pen = pg.mkPen(color, width=2)
    if dashed:
        pen.setDashPattern([4, 3])
    return plot.plot(
        [],
        [],
        pen=pen,
        symbol="o",
        symbolSize=symbol_size,
        symbolBrush=color,
        symbolPen=color,
        connect="finite",
    )


class TurnChart(pg.GraphicsLayoutWidget):
    """Lines over turns (this module's sparkline, :class:`ui.panes.geometry.geometry_series.GeometrySeries`):
    the turns shown and, for tests, what each line shows.

    Args:
        parent: Optional parent widget.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._turns: list[int] = []

    def point_count(self) -> int:
        """How many turns are shown."""
        return len(self._turns)

    def _line_values(self, line: pg.PlotDataItem) -> list[float | None]:
        """What ``line`` shows at each turn, in turn order (None: a gap; a line left empty is
        all gaps)."""
        _, y = line.getData()
        if y is None or len(y) == 0:
            return [None] * len(self._turns)
        return [float(v) if math.isfinite(v) else None for v in y]


class StateSparkline(TurnChart):
    """Satisfaction and clarity per turn of one simulated user.

    Args:
        parent: Optional parent widget.
        height: Fixed height in pixels (``None``: free, as in the STORM view).
        title: An optional title above the plot.

    Attributes:
        plot: The pyqtgraph plot (x: the user's turn from 0; y: 0–1).
        satisfaction: The satisfaction line.
        clarity: The intent-clarity line.
        legend: The legend under the plot.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        height: int | None = SPARKLINE_HEIGHT,
        title: str = "",
    ) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.ci.setContentsMargins(2, 2, 2, 2)
        self.ci.setSpacing(0)
        self.plot: pg.PlotItem = self.addPlot(row=0, col=0, title=title or None)
        plot = self.plot
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        plot.showGrid(x=False, y=True, alpha=0.25)
        plot.setYRange(0.0, 1.0, padding=0.1)
        plot.getAxis("left").setTicks([[(0.0, "0"), (0.5, "0.5"), (1.0, "1")]])
        plot.getAxis("left").setWidth(28)
        plot.getAxis("bottom").setHeight(18 if height is not None else 30)
        if height is None:
            plot.setLabel("bottom", "turn of the simulated user")
        self.satisfaction = curve(plot, SATISFACTION_COLOR)
        self.clarity = curve(plot, CLARITY_COLOR, dashed=True)
        self.legend = pg.LegendItem(colCount=2, labelTextSize="8pt", labelTextColor="#333")
        self.legend.addItem(self.satisfaction, "satisfaction")
        self.legend.addItem(self.clarity, "intent clarity")
        self.legend.layout.setContentsMargins(0, 0, 0, 0)
        self.addItem(self.legend, row=1, col=0)
        self.ci.layout.setRowStretchFactor(0, 1)
        if height is not None:
            self.setFixedHeight(height)

    def set_points(
        self,
        turns: Sequence[int],
        satisfaction: Sequence[float | None],
        clarity: Sequence[float | None],
    ) -> None:
        """Show one point per turn (the three sequences have the same length); None, a value the
        user did not give, leaves a gap (no point, and the line skips it)."""
        self._turns = list(turns)
        self.satisfaction.setData(list(turns), gaps(satisfaction), connect="finite")
        self.clarity.setData(list(turns), gaps(clarity), connect="finite")
        last = max(turns, default=0)
        self.plot.setXRange(0, max(last, 1), padding=0.06)
        step = 1 if last <= 10 else 2 if last <= 20 else 5
        self.plot.getAxis("bottom").setTicks(
            [[(t, str(t)) for t in range(0, max(last, 1) + 1, step)]]
        )

    def values(self) -> tuple[list[float | None], list[float | None]]:
        """The plotted satisfaction and clarity values, in turn order (None: a gap)."""
        return self._line_values(self.satisfaction), self._line_values(self.clarity)


def gaps(values: Sequence[float | None]) -> list[float]:
    """``values`` for pyqtgraph: None (not rated) becomes NaN, which ``connect="finite"`` skips."""
    return [math.nan if v is None else float(v) for v in values]
