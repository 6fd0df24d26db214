"""A fixed (no mouse, no menu) pyqtgraph plot with its legend in a compact column to its right.

The geometry view's two plots (:mod:`ui.panes.geometry.trajectory`, :mod:`ui.panes.geometry.geometry_series`)
share this layout: the legend costs no height in a short view, and sits at the top of its column.
"""

from __future__ import annotations

import pyqtgraph as pg


def plot_with_legend(view: pg.GraphicsLayoutWidget) -> tuple[pg.PlotItem, pg.LegendItem]:
    """Lay ``view`` out as one plot (left, stretching) and a legend (right, top).

    The plot takes no mouse input, has no context menu and no auto range (its owner sets the
    ranges with the data).

    Args:
        view: The widget to lay out (white background, thin margins).

    Returns:
        The plot and the (still empty) legend.
    """
    view.setBackground("w")
    view.ci.setContentsMargins(2, 2, 2, 2)
    view.ci.setSpacing(0)
    plot: pg.PlotItem = view.addPlot(row=0, col=0, rowspan=2)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    plot.disableAutoRange()
    legend = pg.LegendItem(colCount=1, labelTextSize="8pt", labelTextColor="#333")
    legend.layout.setContentsMargins(0, 0, 0, 0)
    view.addItem(legend, row=0, col=1)
    view.addLabel("", row=1, col=1)  # under the legend: keeps it compact at the top
    view.ci.layout.setRowStretchFactor(1, 1)
    view.ci.layout.setColumnStretchFactor(0, 1)
    return plot, legend
