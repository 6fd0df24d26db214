"""The report view's "Agreement" tables: the judge against the human raters per metric, and the
pairwise accuracy of geometry, judge and both next to TRACE's Table 1."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from playground.report.agreement_format import TITLE, metric_cells, percent, shown
from playground.report.agreement_model import PREDICTOR_LABELS, AgreementWithHumans

METRIC_HEADERS = ["Judge", "Metric", "Sessions", "Humans", "ρ", "α (with judge)", "α (humans)"]
PAIR_HEADERS = ["Predictor", "Pairs", "Accuracy [Wilson 95 %]", "TRACE paper"]
NO_JUDGE = "No judge ratings yet: run `playground judge` (the offline engine has no judge)."
NO_SHARED = "No session is rated by both a judge and a human yet."
COMPUTING = (
    "Computing agreement… (leave-one-out regressions over the rated pairs take a while; the rest "
    "of the report is ready)"
)
HELP = (
    "ρ: Spearman between the judge's score and the mean human rating per session. α: "
    "Krippendorff's alpha (ordinal), with the judge as one more rater and among the humans only. "
    "Pairwise: how often each predictor picks the conversation most human raters preferred "
    "(geometry and both: logistic regression, leave-one-out)."
)


def _table(headers: list[str], name: str, stretch: int) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setObjectName(name)
    t.setAccessibleName(name)
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().hide()
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    t.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    t.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    header = t.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    return t


def _fill(
    t: QTableWidget, rows: list[list[str]], left: int, tips: list[str | None] | None = None
) -> None:
    """Rows of text; the first ``left`` columns left-aligned, numbers right-aligned."""
    t.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            align = Qt.AlignmentFlag.AlignLeft if c < left else Qt.AlignmentFlag.AlignRight
            item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
            tip = tips[r] if tips else None
            if tip:
                item.setToolTip(tip)
            t.setItem(r, c, item)
    t.resizeRowsToContents()
    height = t.horizontalHeader().height() + 2 * t.frameWidth()
    height += sum(t.rowHeight(r) for r in range(t.rowCount()))
    t.setFixedHeight(height)


class AgreementPanel(QWidget):
    """Two small tables; hidden while there is no judge and no human pairwise preference."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agreement")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 10)
        self.title = QLabel(f"<b>{TITLE}</b>")
        lay.addWidget(self.title)
        self.metrics_note = QLabel("")
        self.metrics_note.setWordWrap(True)
        self.metrics_note.setStyleSheet("color:#555;")
        lay.addWidget(self.metrics_note)
        self.metrics = _table(METRIC_HEADERS, "Judge against human raters per metric", 1)
        lay.addWidget(self.metrics)
        self.pairs_note = QLabel("")
        self.pairs_note.setWordWrap(True)
        lay.addWidget(self.pairs_note)
        self.pairwise = _table(PAIR_HEADERS, "Pairwise accuracy", 0)
        lay.addWidget(self.pairwise)
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.details.setStyleSheet("color:#555;")
        self.details.setToolTip(HELP)
        lay.addWidget(self.details)
        self.status = QLabel("")  # computing, or why it could not be computed
        self.status.setObjectName("agreement status")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.agreement: AgreementWithHumans | None = None
        #: True from :meth:`set_computing` until a result or a failure arrives.
        self.computing = False
        self.hide()

    def _only_status(self, text: str, style: str) -> None:
        self.agreement = None
        for w in (self.metrics_note, self.metrics, self.pairs_note, self.pairwise, self.details):
            w.hide()
        self.status.setStyleSheet(style)
        self.status.setText(text)
        self.status.show()
        self.show()

    def set_computing(self) -> None:
        """Say that the agreement is being computed (the tables are hidden meanwhile)."""
        self.computing = True
        self._only_status(COMPUTING, "color:#555; font-style:italic;")

    def set_failed(self, text: str) -> None:
        """Say that the agreement could not be computed, and why."""
        self.computing = False
        self._only_status(f"⚠ {text}", "color:#b71c1c;")

    def set_agreement(self, a: AgreementWithHumans | None) -> None:
        """Show a report's agreement record (hidden when there is nothing to show)."""
        self.computing = False
        self.agreement = a
        self.status.hide()
        if a is None or not shown(a):
            self.hide()
            return
        for w in (self.pairs_note, self.pairwise, self.details):
            w.show()
        rows = [metric_cells(m, with_p=False, missing="–") for m in a.metrics]
        _fill(self.metrics, rows, 2, [m.note for m in a.metrics])
        self.metrics.setVisible(bool(rows))
        self.metrics_note.setText("" if rows else NO_SHARED if a.judges else NO_JUDGE)
        self.metrics_note.setVisible(not rows)
        ties = f", {a.tied_pairs} tied left out" if a.tied_pairs else ""
        self.pairs_note.setText(
            f"Predicting the human preference: {a.human_pairs} session"
            f" pair{'' if a.human_pairs == 1 else 's'} with a human "
            f"majority{ties}; below {a.min_pairs} pairs a predictor shows no accuracy"
        )
        _fill(
            self.pairwise,
            [
                [PREDICTOR_LABELS[p.predictor], str(p.n), percent(p), f"{p.paper:.1f} %"]
                for p in a.pairwise
            ],
            1,
        )
        bits = []
        if a.pairwise_judge:
            bits.append(f"judge {a.pairwise_judge}")
        if a.features_model:
            bits.append(f"{len(a.features)} geometry features ({a.features_model})")
        self.details.setText(" · ".join([*bits, "hover for the methods"]))
        self.show()

    def cell(self, table: QTableWidget, row: int, column: int) -> str:
        """A cell's text (tests and screenshots)."""
        item = table.item(row, column)
        return "" if item is None else item.text()
