"""The study report in a window: what ``playground study-report`` prints for one study plan, or
for every plan pooled, recomputed from the database on every refresh.

The report is built by :func:`playground.report.study.build_study_report` and written by
:func:`playground.report.study_format.render_table`, as on the command line (without a judge). It
is computed in a worker thread, in two passes: without the similarities first, shown at once
while the view says it is still computing; then, once the window's shared embedding model has
embedded the texts the report compares (on the event loop, in the model's own thread), with them.
A refresh supersedes the one still computing, and closing the view drops it. Without an embedding
model (none given, or it cannot be used) the report is shown without the similarities, and the
view says so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QWidget

from playground import errors
from playground.report import study
from playground.report.study_model import StudyReport
from playground.storage import study_rows
from ui.rating.study_report_jobs import Computed, compute_on, looked_up, texts_to_embed
from ui.rating.worker_view import WorkerView, set_text_keeping_scroll

log = logging.getLogger(__name__)

ALL = "All plans"
NO_PLANS = (
    "No study plans in this database yet. Run one from this window with Experiments ▸ New study"
    " plan… (Experiments ▸ Study plans… follows it), or from the command line with"
    " `playground study new --humans 2` (and `--db` naming this database when it is not the"
    " default one). Its conversations, questionnaires and answers then show here. Press Refresh"
    " to look again."
)
COMPUTING = "Computing the report…"
EMBEDDING = "Computing the similarities (the embedding model loads on first use)…"
NO_EMBEDDER = "this view has no embedding model"
NO_SIMILARITY = "Shown without the similarities: {why}. The rest of the report is complete."
FAILED = (
    "The study report could not be computed ({error}). The details are in the log; press Refresh"
    " to try again."
)

#: Gives the shared embedder (``await embedder.embed(texts)`` → one row per text), loaded.
EmbedderSource = Callable[[], Awaitable[Any]]


class StudyReportView(WorkerView):
    """The study report of one plan, or of every plan pooled.

    Args:
        db: the session database.
        parent: the main window, or None.
        embedder: gives the window's shared embedder (the controller's ``embedding.get``); None
            leaves the similarities out.
    """

    def __init__(
        self, db: Any, parent: QWidget | None = None, *, embedder: EmbedderSource | None = None
    ) -> None:
        super().__init__("Study report", db, parent)
        self.embedder = embedder
        self.report: StudyReport | None = None
        self.plan = QComboBox()
        self.plan.setMinimumWidth(360)
        self.plan.setToolTip("One study plan, or every plan pooled")
        self.plan.activated.connect(lambda _i: self.refresh())
        lay = self._top_row("Plan", self.plan, "Recompute the report from the database")
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()
        lay.addWidget(self.message)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # the Methods line
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setAccessibleName("Study report")
        lay.addWidget(self.text, 1)
        self.refresh()

    # -- the plans -------------------------------------------------------------------------------

    def _fill_plans(self, chosen: str | None) -> None:
        self.plan.clear()
        self.plan.addItem(ALL, None)
        try:
            rows = study_rows.plans(self.db)
        except Exception:  # an unreadable database: the report says why
            log.exception("study report: the plans could not be read")
            rows = []
        for p in rows:
            self.plan.addItem(f"{p['id']} · group {p['grp']} · {p['status']}", str(p["id"]))
            self.plan.setItemData(
                self.plan.count() - 1,
                f"created {str(p['created_at'])[:16]}, {p['humans']} people",
                Qt.ItemDataRole.ToolTipRole,
            )
        self.plan.setCurrentIndex(max(0, self.plan.findData(chosen)) if chosen else 0)

    def selected_plan(self) -> str | None:
        """The plan chosen (None: all plans)."""
        data = self.plan.currentData()
        return None if data is None else str(data)

    def set_plan(self, plan: str | None) -> None:
        """Show one plan's report (None: every plan, pooled) and recompute."""
        self._fill_plans(plan)
        self.refresh()

    # -- computing -------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Recompute the report from the database in a worker thread; a refresh still computing
        is superseded by this one."""
        plan = self.selected_plan()
        self._fill_plans(plan)
        plan = self.selected_plan()  # all plans, if that one is gone
        self.report = None
        self.message.hide()
        self.text.setPlainText("")
        self.summary.setText(COMPUTING)
        self._start(lambda generation, _stop: self._compute(generation, plan))

    async def _in_worker(self, plan: str | None, embed: study.EmbedFn | None) -> Computed | None:
        return await self._off_thread(compute_on, plan, embed)

    async def _vectors(self, texts: list[str]) -> dict[str, np.ndarray]:
        if not texts:
            return {}
        assert self.embedder is not None
        rows = np.asarray(await (await self.embedder()).embed(texts))
        return dict(zip(texts, rows, strict=True))

    async def _compute(self, generation: int, plan: str | None) -> None:
        try:
            quick = await self._in_worker(plan, None)
            if not self._current(generation):
                return
            if quick is None or self.embedder is None:
                self._show(quick, note=None if quick is None else NO_EMBEDDER)
                return
            self._show(quick, computing=True)
            try:
                vectors = await self._vectors(texts_to_embed(quick.report))
            except Exception as exc:  # the model is not installed, or failed to load
                log.warning("study report: the similarities are left out", exc_info=True)
                if self._current(generation):
                    why = f"the embedding model could not be used ({type(exc).__name__}: {exc})"
                    self._show(quick, note=why)
                return
            if not self._current(generation):
                return
            full = await self._in_worker(plan, looked_up(vectors))
            if self._current(generation):
                self._show(full)
        except errors.PlaygroundError as exc:  # the plan is gone, the database is unreadable
            log.warning("study report: %s", exc)
            if self._current(generation):
                self._failed(f"⚠ {exc} (press Refresh to try again)")
        except Exception as exc:  # a view must never take the window down (logged)
            log.exception("study report: computing the report failed")
            if self._current(generation):
                self._failed(f"⚠ {FAILED.format(error=f'{type(exc).__name__}: {exc}')}")

    # -- showing ---------------------------------------------------------------------------------

    def _show(
        self, computed: Computed | None, *, computing: bool = False, note: str | None = None
    ) -> None:
        if computed is None:
            self.report = None
            self.text.setPlainText("")
            self.summary.setText("")
            self._say(NO_PLANS)
            return
        self.report = computed.report
        set_text_keeping_scroll(self.text, computed.text)
        self.summary.setText(EMBEDDING if computing else f"Computed at {time.strftime('%H:%M:%S')}")
        if note:
            self._say(NO_SIMILARITY.format(why=note))
        else:
            self.message.hide()

    def _failed(self, text: str) -> None:
        self.report = None
        self.text.setPlainText("")
        self.summary.setText("")
        self._say(text, error=True)
