"""The ratings report in a window: the text table and the Likert and preference plots, recomputed
from the database on every refresh."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFontDatabase, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.plots import figure_png, likert_figure, preference_figure
from playground.report import build_report, render_table
from ui.rating.agreement_table import AgreementPanel
from ui.tool_window import ToolWindow

ALL = "All sessions"
MIN_DPI, MAX_DPI = 70, 110
WIDE = 1200  # px: table and plots side by side from this width, one above the other below it
NO_RATINGS = (
    "No ratings yet{scope}. Raters add them under Rating › Rate conversations (blind)…, after a "
    "researcher creates a plan under Rating › Rating plans…; a person who joined a session can "
    "answer its questionnaire. Press Refresh to recompute."
)


class ReportView(ToolWindow):
    """Table and plots of every rating in the database (or one experiment's sessions)."""

    def __init__(self, db: Any, parent: QWidget | None = None) -> None:
        super().__init__("Ratings report", (1440, 900), parent)
        self.db = db
        self.report: Any = None
        self._pixmaps: dict[str, QPixmap] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        top = QHBoxLayout()
        top.addWidget(QLabel("Experiment"))
        self.experiment = QComboBox()
        self.experiment.setEditable(True)
        self.experiment.setMinimumWidth(280)
        self.experiment.setToolTip("Only the sessions of this experiment; empty for all sessions")
        edit = self.experiment.lineEdit()
        assert edit is not None
        edit.returnPressed.connect(self.refresh)
        self.experiment.activated.connect(lambda _i: self.refresh())
        top.addWidget(self.experiment)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Recompute everything from the database")
        self.refresh_button.clicked.connect(self.refresh)
        top.addWidget(self.refresh_button)
        self.summary = QLabel("")
        self.summary.setStyleSheet("color:#555;")
        top.addWidget(self.summary, 1)
        lay.addLayout(top)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(
            "background:#fff8e1; border:1px solid #ffe082; border-radius:4px; padding:8px;"
        )
        self.message.hide()
        lay.addWidget(self.message)

        self.table = QPlainTextEdit()
        self.table.setReadOnly(True)
        self.table.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSize(9)
        self.table.setFont(mono)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QWidget()
        inner.setObjectName("plots")
        inner.setStyleSheet("#plots { background:white; }")
        il = QVBoxLayout(inner)
        self.agreement = AgreementPanel()
        il.addWidget(self.agreement)
        self.likert_image = QLabel()
        self.likert_image.setAccessibleName("Conversation ratings by condition (Likert plot)")
        self.preference_image = QLabel()
        self.preference_image.setAccessibleName("Pairwise preferences (plot)")
        for img in (self.likert_image, self.preference_image):
            img.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            img.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            il.addWidget(img)
        il.addStretch(1)
        self.scroll_area.setWidget(inner)
        self.scroll_area.viewport().installEventFilter(self)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.table)
        self.split.addWidget(self.scroll_area)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)
        self._wide: bool | None = None
        self._shown_once = False
        self._fill_experiments()
        self.refresh()

    def _fill_experiments(self) -> None:
        current = self.experiment.currentText()
        self.experiment.blockSignals(True)
        self.experiment.clear()
        self.experiment.addItem(ALL, None)
        for eid, name in self.db.execute(
            "SELECT id, name FROM experiments ORDER BY created_at DESC"
        ).fetchall():
            self.experiment.addItem(str(eid), eid)
            if name:
                self.experiment.setItemData(
                    self.experiment.count() - 1, str(name), Qt.ItemDataRole.ToolTipRole
                )
        self.experiment.setCurrentText(current or ALL)
        self.experiment.blockSignals(False)

    def set_experiment(self, experiment: str | None) -> None:
        """Filter on one experiment (None: all sessions) and recompute."""
        self.experiment.setCurrentText(experiment or ALL)
        self.refresh()

    def selected_experiment(self) -> str | None:
        text = self.experiment.currentText().strip()
        return None if not text or text == ALL else text

    def refresh(self) -> None:
        """Recompute the report and the plots from the database."""
        experiment = self.selected_experiment()
        self._fill_experiments()
        self.experiment.setCurrentText(experiment or ALL)
        self.report = None
        self._pixmaps = {}
        for img in (self.likert_image, self.preference_image):
            img.clear()
            img.hide()
        self.agreement.set_agreement(None)
        try:
            report = build_report(self.db, experiment=experiment)
        except errors.PlaygroundError as exc:
            self.table.setPlainText("")
            self.summary.setText("")
            self._say(f"⚠ {exc}", error=True)
            return
        self.report = report
        c = report.counts
        self.summary.setText(
            f"{c.sessions} sessions · {c.rated_sessions} rated · {c.raters} raters · "
            f"{c.preferences} preferences · {c.questionnaires} questionnaires"
        )
        self.table.setPlainText(render_table(report))
        self.agreement.set_agreement(report.agreement_with_humans)
        if report.empty:
            scope = f" for experiment {experiment}" if experiment else ""
            self._say(NO_RATINGS.format(scope=scope))
            return
        self.message.hide()
        if c.conversation_ratings:
            self._show(self.likert_image, self._png(likert_figure(report)))
        if report.preferences:
            self._show(self.preference_image, self._png(preference_figure(report)))

    def _png(self, fig: Any) -> bytes:
        """The figure as PNG, at a resolution that fits the plot area's width (within limits)."""
        inches = float(fig.get_figwidth())
        dpi = min(MAX_DPI, max(MIN_DPI, int((self.scroll_area.viewport().width() - 24) / inches)))
        return figure_png(fig, dpi=dpi)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(
            ("background:#fdecea; border:1px solid #f5c6cb; color:#b71c1c;" if error else
             "background:#fff8e1; border:1px solid #ffe082;")
            + " border-radius:4px; padding:8px;"
        )  # fmt: skip
        self.message.show()

    def _show(self, label: QLabel, png: bytes) -> None:
        pm = QPixmap()
        pm.loadFromData(png)
        self._pixmaps[label.accessibleName()] = pm
        label.show()
        self._fit(label)

    def images(self) -> list[QPixmap]:
        """The plots shown (tests and screenshots)."""
        return [
            img.pixmap()
            for img in (self.likert_image, self.preference_image)
            if img.isVisibleTo(self) and not img.pixmap().isNull()
        ]

    def _fit(self, label: QLabel) -> None:
        pm = self._pixmaps.get(label.accessibleName())
        if pm is None:
            return
        width = max(200, self.scroll_area.viewport().width() - 24)
        if pm.width() > width:
            pm = pm.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
        label.setPixmap(pm)
        label.setFixedHeight(pm.height())  # the scroll area then scrolls through the plots

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._shown_once:  # draw the plots again at the size they are shown at
            self._shown_once = True
            QTimer.singleShot(0, self, self._redraw)

    def _redraw(self) -> None:
        if self.report is not None and self._pixmaps:
            self.refresh()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        wide = self.width() >= WIDE
        if wide != self._wide:
            self._wide = wide
            self.split.setOrientation(
                Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
            )
            size = self.split.width() if wide else self.split.height()
            first = int(size * (0.52 if wide else 0.4))
            self.split.setSizes([first, size - first])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.scroll_area.viewport() and event.type() == QEvent.Type.Resize:
            for img in (self.likert_image, self.preference_image):
                self._fit(img)
        return False
