"""The conversation as a path in 2-D (pyqtgraph): one point per message, coloured by speaker and
numbered by turn, consecutive turns joined by a faint line, the current moment ringed.

The coordinates are the first two principal components of the messages' embeddings (computed in
the engine, :func:`playground.geometry.features.trajectory_2d`); they have no units, so the axes
are hidden and the aspect ratio is locked, which keeps distances on screen comparable in both
directions. Messages after the current moment (a replay that has not reached them yet) are drawn
as small grey rings, so the picture does not jump while the replay moves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ui.widgets.legend_plot import plot_with_legend

#: Colour of the line between consecutive turns, and of messages after the current moment.
PATH_COLOR = (120, 120, 120, 90)
FUTURE_COLOR = "#bdbdbd"
#: The ring around the current message (the replay timeline's cursor colour).
CURRENT_COLOR = "#283593"
#: Up to this many messages every point carries its number; above it every LABEL_EVERY-th does
#: (and the first, the last and the current one), so that long sessions stay readable.
LABEL_ALL_UP_TO = 30
#: Where a number stands by its point (pyqtgraph's anchor: a little right of it, above it), and
#: its height before any is drawn (px).
LABEL_ANCHOR = (-0.15, 0.9)
LABEL_HEIGHT = 18.0
#: The current point's ring (px).
RING_RADIUS = 10.0
LABEL_EVERY = 5
#: Colour for a speaker the window has no colour for (a participant who left before a replay).
UNKNOWN_COLOR = "#777777"


class TrajectoryPlot(pg.GraphicsLayoutWidget):
    """Messages as points in the plane of their embeddings' first two principal components.

    Args:
        parent: Optional parent widget.

    Attributes:
        plot: The pyqtgraph plot.
        legend: One entry per speaker, to the right of the plot (it costs no height: the
            view is short and the aspect-locked plot rarely uses its whole width).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot, self.legend = plot_with_legend(self)  # ranges are set with the data
        plot = self.plot
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        plot.setAspectLocked(True)
        self._path = plot.plot([], [], pen=pg.mkPen(PATH_COLOR, width=1.2))
        self._future_path = plot.plot([], [], pen=pg.mkPen(PATH_COLOR, width=1, dash=[2, 3]))
        self._points = pg.ScatterPlotItem(size=10, pen=pg.mkPen("w", width=1))
        self._future = pg.ScatterPlotItem(
            size=7, pen=pg.mkPen(FUTURE_COLOR, width=1.2), brush=pg.mkBrush(255, 255, 255)
        )
        self._ring = pg.ScatterPlotItem(
            size=2 * RING_RADIUS, pen=pg.mkPen(CURRENT_COLOR, width=2.5), brush=pg.mkBrush(None)
        )
        for item in (self._future, self._points, self._ring):
            plot.addItem(item)
        self._labels: list[pg.TextItem] = []
        self.legend.layout.setVerticalSpacing(0)
        self._xy = np.zeros((0, 2))
        self._speakers: list[str] = []
        self._turns: list[int] = []
        self._colors: dict[str, str] = {}
        self._current: int | None = None
        self._legend_names: list[str] = []
        # The room kept for the numbers is in pixels: fitted again when the plot's size changes.
        plot.getViewBox().sigResized.connect(lambda _box: self._fit())

    # -- data ------------------------------------------------------------------------------------

    def set_points(
        self,
        xy: np.ndarray,
        speakers: Sequence[str],
        turns: Sequence[int],
        colors: dict[str, str],
        current: int | None = None,
    ) -> None:
        """Show one point per message.

        Args:
            xy: n × 2 coordinates, in turn order.
            speakers: Who said each message.
            turns: Each message's turn number (its number in the conversation).
            colors: Speaker → colour (the participants bar's colours).
            current: Index of the current message (``None``: the last one).

        Raises:
            ValueError: ``xy``, ``speakers`` and ``turns`` do not describe the same messages.
        """
        xy = np.asarray(xy, dtype=float).reshape(-1, 2) if len(speakers) else np.zeros((0, 2))
        if not len(xy) == len(speakers) == len(turns):
            raise ValueError(
                f"trajectory: {len(xy)} points for {len(speakers)} speakers and {len(turns)} turns"
            )
        self._xy = xy
        self._speakers = list(speakers)
        self._turns = list(turns)
        self._colors = dict(colors)
        self._update_legend()
        self._current = None
        self.set_current(len(xy) - 1 if current is None else current, force=True)
        self._fit()

    def set_current(self, index: int | None, *, force: bool = False) -> None:
        """Ring the message at ``index`` and grey out the ones after it (``None`` or ``-1``:
        before the first message)."""
        n = len(self._xy)
        idx = None if index is None or index < 0 or n == 0 else min(index, n - 1)
        if idx == self._current and not force:
            return
        self._current = idx
        upto = -1 if idx is None else idx
        past, rest = self._xy[: upto + 1], self._xy[upto + 1 :]
        brushes = [pg.mkBrush(self.color_of(s)) for s in self._speakers[: upto + 1]]
        self._points.setData(pos=past, brush=brushes)
        self._path.setData(past[:, 0], past[:, 1])
        self._future.setData(pos=rest)
        # The dotted path continues from the current message through the ones still to come.
        ahead = self._xy[max(0, upto) :] if len(rest) else self._xy[:0]
        self._future_path.setData(ahead[:, 0], ahead[:, 1])
        self._ring.setData(pos=self._xy[idx : idx + 1] if idx is not None else np.zeros((0, 2)))
        self._update_labels()

    def color_of(self, speaker: str) -> str:
        """The colour of ``speaker``'s points."""
        return self._colors.get(speaker, UNKNOWN_COLOR)

    # -- what is shown (for tests and the status line) -------------------------------------------

    def point_count(self) -> int:
        """How many messages are plotted (before and after the current moment)."""
        return len(self._xy)

    def current_index(self) -> int | None:
        """Index of the ringed message, or None."""
        return self._current

    def ring_position(self) -> tuple[float, float] | None:
        """Where the ring is drawn (plot coordinates), or None."""
        pts = self._ring.data
        if len(pts) == 0:
            return None
        return float(pts[0]["x"]), float(pts[0]["y"])

    def point_position(self, index: int) -> tuple[float, float]:
        """The plotted position of the message at ``index``."""
        return float(self._xy[index, 0]), float(self._xy[index, 1])

    def labels(self) -> list[str]:
        """The turn numbers written next to points, in turn order."""
        return [label.toPlainText() for label in self._labels]

    def legend_names(self) -> list[str]:
        """The speakers in the legend (the participants bar's order)."""
        return list(self._legend_names)

    def legend_colors(self) -> list[str]:
        """The colour of each legend entry's symbol, in legend order."""
        return [sample.item.opts["brush"].color().name() for sample, _label in self.legend.items]

    def point_colors(self) -> list[str]:
        """The fill colour of each message drawn in its speaker's colour (up to the current)."""
        return [pg.mkBrush(b).color().name() for b in self._points.data["brush"] if b is not None]

    # -- drawing ---------------------------------------------------------------------------------

    def _update_legend(self) -> None:
        spoke = set(self._speakers)
        # In the participants bar's order; a speaker without a colour (gone) after them.
        names = [n for n in self._colors if n in spoke]
        names += [n for n in dict.fromkeys(self._speakers) if n not in self._colors]
        if names == self._legend_names:
            return
        self.legend.clear()
        # One column fits four names in the view's least height (in the app's 10 pt font);
        # more go in two.
        self.legend.setColumnCount(1 if len(names) <= 4 else 2)
        for name in names:
            # A scatter item as the sample: the legend draws its symbol in its own brush.
            sample = pg.ScatterPlotItem(
                size=9, symbol="o", brush=pg.mkBrush(self.color_of(name)), pen=pg.mkPen("w")
            )
            self.legend.addItem(sample, name)
        self._legend_names = names

    def _update_labels(self) -> None:
        for label in self._labels:
            self.plot.removeItem(label)
        self._labels = []
        n = len(self._xy)
        for i in range(n):
            if not (
                n <= LABEL_ALL_UP_TO
                or i in (0, n - 1, self._current)
                or self._turns[i] % LABEL_EVERY == 0
            ):
                continue
            future = self._current is None or i > self._current
            label = pg.TextItem(
                str(self._turns[i]),
                color=FUTURE_COLOR if future else "#222",
                anchor=LABEL_ANCHOR,
            )
            font = label.textItem.font()
            font.setPointSizeF(7.5)
            font.setBold(i == self._current)
            label.setFont(font)
            label.setPos(float(self._xy[i, 0]), float(self._xy[i, 1]))
            self.plot.addItem(label)
            self._labels.append(label)

    def _fit(self) -> None:
        if len(self._xy) == 0:
            self.plot.setRange(xRange=(-1, 1), yRange=(-1, 1), padding=0)
            return
        lo, hi = self._xy.min(axis=0), self._xy.max(axis=0)
        span = max(float((hi - lo).max()), 1e-6)
        # Room for the numbers to the right of the points and the ring at the edges.
        pad = 0.12 * span
        bottom, top = lo[1] - pad, hi[1] + pad
        # The numbers stand above their points and the ring reaches below: in a short view a
        # share of the span is too few pixels for them, so the room is reserved in pixels.
        height = self.plot.getViewBox().height()
        above, below = self._label_height() + 1.0, RING_RADIUS + 1.0
        if height > 2 * (above + below):
            span_y = max(float(hi[1] - lo[1]), 1e-6)
            total = max(span_y / (1 - (above + below) / height), top - bottom)
            bottom = min(bottom, lo[1] - below * total / height)
            top = max(top, hi[1] + above * total / height)
        self.plot.setRange(xRange=(lo[0] - pad, hi[0] + 2 * pad), yRange=(bottom, top), padding=0)

    def _label_height(self) -> float:
        """How far a point's number reaches above it (px)."""
        if not self._labels:
            return LABEL_HEIGHT
        label = self._labels[0]
        return label.boundingRect().height() * LABEL_ANCHOR[1]
