"""The ratings report in a window: the text table, the agreement tables and the Likert and
preference plots, recomputed from the database on every refresh.

The computing runs in worker threads (:mod:`ui.rating.report_jobs`), in two steps: the counts,
statistics, table and plots first (about a second), then the judge/geometry agreement, whose
leave-one-out regressions take seconds to tens of seconds with a few hundred rated pairs. The view
says what it is computing and stays usable meanwhile. A refresh supersedes the one still
computing (its thread is told to stop and its result is dropped), and closing the view stops it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFontDatabase, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.experiments import results
from playground.report.format import count
from playground.report.model import Report
from ui.rating import report_jobs
from ui.rating.agreement_table import AgreementPanel
from ui.rating.worker_view import WorkerView, set_text_keeping_scroll
from ui.widgets.tool_window import white_page

log = logging.getLogger(__name__)

ALL = "All sessions"
WIDE = 1200  # px: table and plots side by side from this width, one above the other below it
NO_RATINGS = (
    "No ratings yet{scope}. Raters add them under Rating › Rate conversations (blind)…, after a "
    "researcher creates a plan under Rating › Rating plans…; a person who joined a session can "
    "answer its questionnaire. Press Refresh to recompute."
)
COMPUTING = "Computing the report…"
COMPUTING_AGREEMENT = "computing agreement…"
FAILED = "The report could not be computed ({error}). The details are in the log; press Refresh to try again."
AGREEMENT_FAILED = "The agreement could not be computed ({error}); the details are in the log."

T = TypeVar("T")


class ReportView(WorkerView):
    """Table and plots of every rating in the database (or one experiment's sessions); it is
    computing (:attr:`computing`) until the agreement is computed too."""

    def __init__(self, db: Any, parent: QWidget | None = None) -> None:
        super().__init__("Ratings report", db, parent)
        self.report: Report | None = None
        self._pixmaps: dict[str, QPixmap] = {}
        self._plots_width: int | None = None
        self.experiment = QComboBox()
        self.experiment.setEditable(True)
        self.experiment.setMinimumWidth(280)
        self.experiment.setToolTip("Only the sessions of this experiment; empty for all sessions")
        edit = self.experiment.lineEdit()
        assert edit is not None
        edit.returnPressed.connect(self.refresh)
        self.experiment.activated.connect(lambda _i: self.refresh())
        lay = self._top_row("Experiment", self.experiment, "Recompute everything from the database")
        # Wraps rather than widening the window: its text grows while the agreement computes
        # ("· computing agreement…"), and a window fitted then would not fit a 1024 px screen.
        self.summary.setWordWrap(True)
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
        self.table.setPlaceholderText(COMPUTING)
        self.scroll_area, inner = white_page("plots")
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
        for eid, name in results.experiment_names(self.db):
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
        """Recompute the report and the plots from the database, in worker threads; a refresh
        still computing is superseded by this one."""
        experiment = self.selected_experiment()
        self._fill_experiments()
        self.experiment.setCurrentText(experiment or ALL)
        self.report = None
        self._clear_plots()
        self.message.hide()
        self.table.setPlainText("")
        self.summary.setText(COMPUTING)
        self.agreement.set_computing()
        self._start(lambda generation, stop: self._compute(generation, stop, experiment))

    # -- computing -------------------------------------------------------------------------------

    async def _in_worker(self, job: Callable[..., T], *args: Any) -> T:
        """``job(db, *args)`` in a worker thread (see :func:`report_jobs.run_on`); its thread
        stops at its next check (between two regressions) once the view drops it."""
        return await self._off_thread(report_jobs.run_on, job, *args)

    async def _compute(
        self, generation: int, stop: threading.Event, experiment: str | None
    ) -> None:
        step = "report"
        try:
            quick = await self._in_worker(
                report_jobs.quick_part, experiment, self._plot_width(), stop
            )
            if not self._current(generation):
                return
            self._show_quick(quick)
            step = "agreement"
            full = await self._in_worker(report_jobs.with_agreement, quick.report, stop)
            if self._current(generation):
                self._show_full(full, experiment)
        except errors.Cancelled:
            pass  # superseded, or the view closed: nobody is waiting for it
        except errors.PlaygroundError as exc:  # an unknown experiment, an unreadable database
            if self._current(generation):
                self._failed(step, str(exc), expected=True)
        except Exception as exc:  # a view must never take the window down (logged)
            log.exception("ratings report: computing the %s failed", step)
            if self._current(generation):
                self._failed(step, f"{type(exc).__name__}: {exc}", expected=False)
        finally:
            # A cancelled task does not stop its thread: this does, at the thread's next check.
            stop.set()

    # -- showing ---------------------------------------------------------------------------------

    def _plot_width(self) -> int:
        return self.scroll_area.viewport().width()

    def _summary(self, report: Report, *, computing: bool) -> None:
        c = report.counts
        self.summary.setText(
            f"{count(c.sessions, 'session')} · {c.rated_sessions} rated · "
            f"{count(c.raters, 'rater')} · {count(c.preferences, 'preference')} · "
            f"{count(c.questionnaires, 'questionnaire')}"
            + (f" · {COMPUTING_AGREEMENT}" if computing else "")
        )

    def _show_quick(self, quick: report_jobs.Computed) -> None:
        """The counts, statistics and plots, while the agreement is still being computed."""
        self.report = quick.report
        self._summary(quick.report, computing=True)
        set_text_keeping_scroll(self.table, quick.table)
        if quick.plots is not None:
            for label, png in (
                (self.likert_image, quick.plots.likert),
                (self.preference_image, quick.plots.preference),
            ):
                if png is not None:
                    self._show(label, png)
            self._plots_width = quick.plots.width

    def _show_full(self, full: report_jobs.Computed, experiment: str | None) -> None:
        self.report = full.report
        self._summary(full.report, computing=False)
        set_text_keeping_scroll(self.table, full.table)
        self.agreement.set_agreement(full.report.agreement_with_humans)
        if full.report.empty:
            scope = f" for experiment {experiment}" if experiment else ""
            self._say(NO_RATINGS.format(scope=scope))
        else:
            self.message.hide()

    def _failed(self, step: str, error: str, *, expected: bool) -> None:
        """Say what could not be computed; what was computed before stays on screen."""
        if step == "agreement":
            if self.report is not None:
                self._summary(self.report, computing=False)
            self.agreement.set_failed(error if expected else AGREEMENT_FAILED.format(error=error))
            return
        self.table.setPlainText("")
        self.summary.setText("")
        self.agreement.set_agreement(None)
        self._say(f"⚠ {error}" if expected else f"⚠ {FAILED.format(error=error)}", error=True)

    def _clear_plots(self) -> None:
        self._pixmaps = {}
        self._plots_width = None
        for img in (self.likert_image, self.preference_image):
            img.clear()
            img.hide()

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

    def _shown(self) -> None:
        if not self._shown_once:  # draw the plots again at the size they are shown at
            self._shown_once = True
            QTimer.singleShot(0, self, self._redraw)

    def _redraw(self) -> None:
        # Plots drawn before the view was shown (a script computing at once) are drawn again for
        # the width they are shown at; a computation still running reads that width itself.
        if (
            self.report is not None
            and self._pixmaps
            and not self.computing
            and self._plots_width != self._plot_width()
        ):
            self.refresh()

    def resizeEvent(self, event: QResizeEvent) -> None:
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

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.scroll_area.viewport() and event.type() == QEvent.Type.Resize:
            for img in (self.likert_image, self.preference_image):
                self._fit(img)
        return False
