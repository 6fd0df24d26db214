"""The STORM window: satisfaction and clarity curves per dialogue and per group, and the paper's
Table 2, from the session database.

Everything shown comes from :func:`playground.storm.report.build_storm_report` (the same object
``playground report --storm`` prints): the dialogues list with each one's curves, the mean curves
of each group (uncertainty × profile access) of the chosen assistant model, and the Table-2 rows.
Double-clicking a dialogue (or Open in replay) replays its session in the main window.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.storm import report as storm_report
from ui.theme import WARNING_COLOR, show_status
from ui.widgets.sparkline import StateSparkline, gaps
from ui.widgets.tool_window import SessionsWindow, fit_height, selected_data
from ui.widgets.tool_window import group_box as _group
from ui.widgets.tool_window import read_only_item as _item
from ui.widgets.tool_window import read_only_table as _table

log = logging.getLogger(__name__)

DIALOGUE_COLUMNS = [
    "User", "Assistant", "Unc.", "Profile", "Turns", "Avg sat.", "Unrated", "Session",
]  # fmt: skip
#: Table 2 shows up to this many rows without scrolling; the curves take the rest.
TABLE_ROWS_SHOWN = 8
#: Below this window height the methods under the table are in its tooltip only.
METHODS_MIN_HEIGHT = 820
#: Table 2's layout: w/ and w/o profile side by side; Clarify and SSA without profile.
TABLE_COLUMNS = [
    "Assistant (uncertainty)",
    "Avg sat. w/",
    "Avg sat. w/o",
    "High sat. w/",
    "High sat. w/o",
    "Improved w/",
    "Improved w/o",
    "Clarify w/o",
    "SSA w/o",
    "Dialogues w/ · w/o",
    "Unrated turns w/ · w/o",
]


def _two_lines(column: str) -> str:
    """A Table 2 header on two lines (what, then w/ · w/o), so that the eleven columns fit a
    1024 px window side by side: "Avg sat. w/" reads "Avg sat." over "w/"."""
    for cut in (" (", " w/"):
        if cut in column:
            head, _, tail = column.partition(cut)
            return f"{head}\n{cut.strip()}{tail}"
    return column


#: One colour per uncertainty level; profile access solid, none dashed.
UNCERTAINTY_COLORS = {0: "#1565c0", 40: "#2e7d32", 60: "#ef6c00", 80: "#c62828"}
ALL_MODELS = "(all assistants)"
EMPTY_TEXT = (
    "No STORM dialogues in this database yet: run `playground storm …` (or open a database that"
    " has some)."
)
#: What the empty view suggests first (over the dialogues list).
EMPTY_HINT = (
    "<b>No STORM dialogues yet.</b><br>To make one, start a session with a simulated user"
    " (Session ▸ New session… ▸ Simulated users, or Participants ▸ Add simulated user… in a"
    " live session), or run <code>playground storm …</code> on this database; then press"
    " Refresh."
)


def _num(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.1f}%" if pct else f"{value:.2f}"


#: What each Table 2 figure is over: the dialogues that have it (see GroupMetrics).
_DENOMINATOR = {
    "average_satisfaction": ("n_rated", "with a rated satisfaction"),
    "high_rate": ("n_rated", "with a rated satisfaction"),
    "improved_rate": ("n_compared", "with two rated turns or more"),
    "clarify": ("judged", "judged"),
    "ssa": ("judged", "judged"),
}


def _over(g: Any, name: str) -> str:
    """A Table 2 cell's tooltip: how many dialogues the figure is over, how many turns unrated."""
    field, what = _DENOMINATOR[name]
    return (
        f"Over {getattr(g, field)} of {g.n} dialogues ({what});"
        f" satisfaction unrated in {g.missing_satisfaction} of {g.turns} user turns"
        " (counted in no figure)"
    )


def _unrated(metrics: Any) -> str:
    return (
        f"Unrated turns: satisfaction {metrics.missing_satisfaction}, clarity"
        f" {metrics.missing_clarity} of {metrics.turns} (counted in no figure)"
    )


class GroupCurves(pg.GraphicsLayoutWidget):
    """Mean satisfaction (left) and clarity (right) per turn, one line per group."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.plots: list[pg.PlotItem] = []
        for col, title in enumerate(("Mean satisfaction", "Mean intent clarity")):
            plot = self.addPlot(row=0, col=col, title=title)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.setMouseEnabled(x=False, y=False)
            plot.showGrid(y=True, alpha=0.25)
            plot.setYRange(0.0, 1.0, padding=0.1)
            plot.getAxis("left").setTicks([[(v / 4, f"{v / 4:g}") for v in range(5)]])
            plot.setLabel("bottom", "turn of the simulated user")
            self.plots.append(plot)
        self.legend = pg.LegendItem(colCount=4, labelTextSize="8pt", labelTextColor="#333")
        self.addItem(self.legend, row=1, col=0, colspan=2)
        self.lines: list[tuple[str, pg.PlotDataItem, pg.PlotDataItem]] = []

    def show_groups(self, groups: list[tuple[str, str, int, bool]], report: Any) -> None:
        """Draw ``groups`` (label, model, uncertainty, with profile) from ``report``'s rows."""
        for plot in self.plots:
            plot.clear()
        self.legend.clear()
        self.lines = []
        longest = 1
        several = len({model for _label, model, _unc, _access in groups}) > 1
        for label, model, unc, access in groups:
            row = next(
                r
                for r in report.rows
                if r.assistant_model == model and r.uncertainty == unc and r.label == label
            )
            curve = row.curves.get("with" if access else "without")
            if curve is None:
                continue
            pen = pg.mkPen(UNCERTAINTY_COLORS.get(unc, "#555"), width=2)
            if not access:
                pen.setDashPattern([5, 3])
            x = list(range(len(curve.satisfaction)))
            longest = max(longest, len(x) - 1)
            # Short names, so that the legend's four columns fit a 1024 px window.
            short = label if several else f"{unc}%"
            name = f"{short} {'w/' if access else 'w/o'} profile"
            # A turn no dialogue of the group rated is a gap, not a number.
            s = self.plots[0].plot(
                x, gaps(curve.satisfaction), pen=pen, name=name, connect="finite"
            )
            c = self.plots[1].plot(x, gaps(curve.clarity), pen=pen, name=name, connect="finite")
            self.legend.addItem(s, name)
            self.lines.append((name, s, c))
        for plot in self.plots:
            plot.setXRange(0, longest, padding=0.04)


class StormWindow(SessionsWindow):
    """The STORM dialogues of a database: curves, Table 2, replay (made as a
    :class:`SessionsWindow`).

    Attributes:
        report: the report shown (None before the first successful refresh).
    """

    TITLE = "STORM dialogues"

    def _build(self) -> None:
        self.report: Any = None

        self.replay_button = QPushButton("Open in replay")
        self.replay_button.setToolTip("Replay the selected dialogue's session in the main window")
        self.refresh_button = QPushButton("Refresh")
        self.model = QComboBox()
        self.model.setToolTip("The assistant whose groups the mean curves show")
        self.db_label = QLabel(f"Database: {self.db_path}")
        self.db_label.setStyleSheet("color:#555;")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Groups of"))
        bar.addWidget(self.model)
        bar.addStretch(1)
        bar.addWidget(self.db_label)
        bar.addWidget(self.replay_button)
        bar.addWidget(self.refresh_button)

        self.dialogues = _table(DIALOGUE_COLUMNS)
        self.dialogues.setToolTip("Double-click a dialogue to open its session in replay")
        self.empty_hint = QLabel(EMPTY_HINT)
        self.empty_hint.setObjectName("stormEmpty")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setStyleSheet("#stormEmpty { color:#555; padding:8px; }")
        self.empty_hint.hide()
        self.curve = StateSparkline(height=None)
        self.curve_box = _group("Dialogue", self.curve)
        self.groups = GroupCurves()
        self.groups_box = _group(
            "Mean per group (uncertainty × profile access; solid: with profile, dashed: without)",
            self.groups,
        )
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.curve_box)
        right.addWidget(self.groups_box)
        right.setChildrenCollapsible(False)
        right.setStretchFactor(0, 2)
        right.setStretchFactor(1, 3)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(_group("Dialogues", self.empty_hint, self.dialogues))
        top.addWidget(right)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 3)
        top.setChildrenCollapsible(False)
        top.setSizes([520, 900])

        self.table = _table(TABLE_COLUMNS)
        self.table.setHorizontalHeaderLabels([_two_lines(c) for c in TABLE_COLUMNS])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.methods = QLabel("")
        self.methods.setWordWrap(True)
        self.methods.setStyleSheet("color:#555; font-size:11px;")
        self.table_box = _group("Table 2: satisfaction and clarification", self.table, self.methods)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.addLayout(bar)
        lay.addWidget(top, 1)
        lay.addWidget(self.table_box)
        lay.addWidget(self.status)

        self.refresh_button.clicked.connect(self.refresh)
        self.replay_button.clicked.connect(lambda: self.open_selected())
        self.dialogues.itemSelectionChanged.connect(self._dialogue_selected)
        self.dialogues.itemDoubleClicked.connect(lambda _item: self.open_selected())
        self.model.currentIndexChanged.connect(lambda _i: self._show_groups())
        self.refresh()

    def resizeEvent(self, event: QResizeEvent) -> None:
        # A short window gives the curves the height; the methods stay in the tooltip.
        self.methods.setVisible(event.size().height() >= METHODS_MIN_HEIGHT)
        super().resizeEvent(event)

    # -- data ------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the report again and show it (a problem is said in the window)."""
        try:
            db = self.controller.database()
            report = storm_report.build_storm_report(db)
        except (errors.PlaygroundError, sqlite3.Error) as exc:
            self.show_error(f"STORM report: {exc}")
            return
        except Exception as exc:  # the window's boundary: a damaged row must not close it
            log.exception("building the STORM report")
            self.show_error(f"STORM report failed: {type(exc).__name__}: {exc}")
            return
        self.report = report
        self._fill_dialogues()
        self._fill_table()
        models = sorted({r.assistant_model for r in report.rows})
        keep = self.model.currentText()
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItem(ALL_MODELS)
        self.model.addItems(models)
        self.model.setCurrentIndex(max(0, self.model.findText(keep)))
        self.model.blockSignals(False)
        self._show_groups()
        n = len(report.dialogues)
        judge = f"judge {report.judge}" if report.judge else "no judge yet (Clarify: –)"
        self.status.setStyleSheet("color:#333;")
        self.status.setText(
            EMPTY_TEXT if not n else f"{n} dialogue{'s' if n != 1 else ''} · {judge}"
        )
        self.empty_hint.setVisible(not n)
        if n and self.dialogues.currentRow() < 0:
            self.dialogues.selectRow(0)
        # Open in replay only with a dialogue to open (an empty view has none).
        self.replay_button.setEnabled(self.selected_session() is not None)

    def _fill_dialogues(self) -> None:
        rows = self.report.dialogues
        self.dialogues.blockSignals(True)
        self.dialogues.setRowCount(len(rows))
        for i, d in enumerate(rows):
            access = "–" if d.profile_access is None else ("w/" if d.profile_access else "w/o")
            cells = [
                _item(d.user, d.session_id),
                _item(d.assistant_model + ("" if d.assistant in ("", "plain") else " · IT")),
                _item("–" if d.uncertainty is None else f"{d.uncertainty}%", right=True),
                _item(access),
                _item(str(d.metrics.turns), right=True),
                _item(_num(d.metrics.average_satisfaction), right=True),
                _item(f"{d.metrics.missing_satisfaction}/{d.metrics.turns}", right=True),
                _item(d.session_id),
            ]
            tip = f"{d.task} · session {d.session_id} ({d.status})\n{_unrated(d.metrics)}"
            for col, cell in enumerate(cells):
                cell.setToolTip(tip)
                self.dialogues.setItem(i, col, cell)
        self.dialogues.blockSignals(False)

    def _fill_table(self) -> None:
        rows = self.report.rows
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            w, wo = r.with_profile, r.without_profile

            def get(g: Any, name: str, pct: bool = False) -> Any:
                cell = _item(_num(getattr(g, name) if g is not None else None, pct), right=True)
                if g is not None:
                    cell.setToolTip(_over(g, name))
                return cell

            def unrated(g: Any) -> str:
                return "–" if g is None else f"{g.missing_satisfaction}/{g.turns}"

            cells = [
                _item(r.label),
                get(w, "average_satisfaction"),
                get(wo, "average_satisfaction"),
                get(w, "high_rate", True),
                get(wo, "high_rate", True),
                get(w, "improved_rate", True),
                get(wo, "improved_rate", True),
                get(wo, "clarify"),
                get(wo, "ssa"),
                _item(f"{w.n if w else 0} · {wo.n if wo else 0}", right=True),
                _item(f"{unrated(w)} · {unrated(wo)}", right=True),
            ]
            cells[-1].setToolTip(
                "User turns whose satisfaction could not be read (left out of every figure)"
                " / all user turns, with profile · without"
            )
            for col, cell in enumerate(cells):
                self.table.setItem(i, col, cell)
        fit_height(self.table, max(1, min(len(rows), TABLE_ROWS_SHOWN)))
        self.table.horizontalScrollBar().setValue(0)  # from its first column, always
        self.methods.setText(" · ".join(self.report.methods[:5]))
        self.methods.setToolTip("\n".join(self.report.methods))
        self.table.setToolTip("How each figure is computed:\n" + "\n".join(self.report.methods))

    # -- showing ---------------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        sid = selected_data(self.dialogues)
        return str(sid) if sid is not None else None

    def _dialogue_selected(self) -> None:
        sid = self.selected_session()
        d = next((d for d in self.report.dialogues if d.session_id == sid), None)
        self.replay_button.setEnabled(d is not None)
        if d is None:
            self.curve.set_points([], [], [])
            self.curve_box.setTitle("Dialogue")
            return
        self.curve.set_points(list(range(len(d.satisfaction))), d.satisfaction, d.clarity)
        self.curve_box.setToolTip(f"Session {d.session_id} ({d.status})")
        access = "" if d.profile_access is None else (" · w/" if d.profile_access else " · w/o")
        self.curve_box.setTitle(
            f"Dialogue — {d.user}: {d.task}"
            f" · {d.assistant_model}{'' if d.uncertainty is None else f' · {d.uncertainty}%'}"
            f"{access} profile"
        )

    def _show_groups(self) -> None:
        if self.report is None:
            return
        model = self.model.currentText()
        groups = [
            (r.label, r.assistant_model, r.uncertainty, access)
            for r in self.report.rows
            if model in ("", ALL_MODELS) or r.assistant_model == model
            for access in (True, False)
            if ("with" if access else "without") in r.curves
        ]
        self.groups.show_groups(groups, self.report)

    def group_curve_count(self) -> int:
        """How many group lines are drawn (each in both plots)."""
        return len(self.groups.lines)

    def open_selected(self) -> object:
        """Replay the selected dialogue's session in the main window."""
        sid = self.selected_session()
        if sid is None:
            self.show_error("Select a dialogue first.")
            return None
        return self.open_replay_at(self.db_path, sid)

    def show_error(self, text: str) -> None:
        show_status(self.status, text, WARNING_COLOR)
