"""The Experiments window: the experiments in the session database, a New experiment dialog,
live progress, Cancel and Resume, each conversation's run, and the per-condition summary.

An experiment runs as a task on the window's asyncio loop (qasync), with the window's shared
embedding model; closing this window (or the main window) while one runs cancels it cleanly:
the conversations in flight end ``interrupted`` and Resume redoes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
)

from playground import errors
from playground.experiments import results as experiment_report
from playground.experiments import runner as experiment
from ui.experiments.dialog import NewExperimentDialog
from ui.experiments.launch import ExperimentRun, Options, Plan, plan_new, plan_resume
from ui.experiments.progress import ProgressPanel
from ui.experiments.tables import (
    EXPERIMENT_COLUMNS,
    RUN_COLUMNS,
    fill_experiments,
    fill_runs,
    fill_summary,
)
from ui.theme import show_status, show_warning
from ui.tool_window import SessionsWindow, selected_data
from ui.tool_window import group_box as _group
from ui.tool_window import read_only_table as _table

log = logging.getLogger(__name__)


class ExperimentsWindow(SessionsWindow):
    """Launch, watch, cancel and resume experiments; open their conversations in replay.

    Made as a :class:`SessionsWindow`; it uses more of the controller: its database, settings
    (the engine configured under Engine…), environment, persona directory and shared embedding
    model.
    """

    TITLE = "Experiments"

    def _build(self) -> None:
        self.job: ExperimentRun | None = None
        self.shown_id: str | None = None
        self.concurrency = 8  # Resume uses the concurrency of the last launch
        self._closing = False
        self._seen: tuple[int, int] = (-1, -1)
        self._tasks: set[asyncio.Future[Any]] = set()
        self.dialog: NewExperimentDialog | None = None

        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        bar = QHBoxLayout()
        self.new_button = QPushButton("New experiment…")
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip(
            "Run the selected experiment's protocol again: finished conversations are skipped,"
            " interrupted and failed ones are run again"
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip(
            "Stop the running experiment: conversations in flight are saved as interrupted"
        )
        self.replay_button = QPushButton("Open in replay")
        self.replay_button.setToolTip("Replay the selected conversation in the main window")
        self.refresh_button = QPushButton("Refresh")
        for b in (self.new_button, self.resume_button, self.cancel_button):
            bar.addWidget(b)
        bar.addStretch(1)
        self.db_label = QLabel(f"Database: {self.db_path}")
        self.db_label.setStyleSheet("color:#555;")
        self.db_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar.addWidget(self.db_label)
        bar.addWidget(self.replay_button)
        bar.addWidget(self.refresh_button)
        lay.addLayout(bar)

        self.experiments = _table(EXPERIMENT_COLUMNS, EXPERIMENT_COLUMNS.index("Runs"))
        self.progress = ProgressPanel()
        self.summary = _table([label for _, label in experiment_report.COLUMNS], None)
        self.summary.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.summary.setToolTip(
            "Per condition, over its finished conversations: means per conversation, except"
            " calls and tokens per message (playground experiments ID shows the same table)"
        )
        self.runs = _table(RUN_COLUMNS, RUN_COLUMNS.index("Error"))
        self.runs.setToolTip("Double-click a conversation to open it in replay")

        self.experiments_box = _group("Experiments in this database", self.experiments)
        rows = self.experiments.verticalHeader().defaultSectionSize()
        self.experiments.setMinimumHeight(
            self.experiments.horizontalHeader().sizeHint().height() + 3 * rows + 4
        )
        self.summary_box = _group("Summary per condition", self.summary)
        self.runs_box = _group("Conversations", self.runs)
        fixed = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.progress.setSizePolicy(fixed)
        self.summary_box.setSizePolicy(fixed)
        # The list and the conversations share the spare height; progress and summary take
        # what they need.
        for w, stretch in (
            (self.experiments_box, 2),
            (self.progress, 0),
            (self.summary_box, 0),
            (self.runs_box, 5),
        ):
            lay.addWidget(w, stretch)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)

        self.new_button.clicked.connect(lambda: self.open_new_dialog())
        self.resume_button.clicked.connect(lambda: self.resume())
        self.cancel_button.clicked.connect(self.cancel)
        self.replay_button.clicked.connect(lambda: self.open_selected_run())
        self.refresh_button.clicked.connect(self.refresh)
        self.experiments.itemSelectionChanged.connect(self._selection_changed)
        self.runs.itemDoubleClicked.connect(lambda _item: self.open_selected_run())
        self.runs.itemSelectionChanged.connect(self._update_buttons)
        self.refresh()

    # -- data ------------------------------------------------------------------------------------

    def _db(self) -> Any:
        try:
            return self.controller.database()
        except errors.PlaygroundError as exc:
            self.show_error(f"Session database: {exc}")
            return None

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def selected_id(self) -> str | None:
        xid = selected_data(self.experiments)
        return str(xid) if xid is not None else None

    def selected_session(self) -> str | None:
        sid = selected_data(self.runs, RUN_COLUMNS.index("Session"))
        return str(sid) if sid else None

    def refresh(self) -> None:
        """Reload the list of experiments and the one shown."""
        db = self._db()
        if db is None:
            return
        try:
            found = experiment_report.list_experiments(db)
        except Exception as exc:  # a damaged database: say so, stay usable
            log.exception("listing experiments")
            self.show_error(f"Experiments: {exc}")
            return
        live = self.job.experiment_id if self.running and self.job else None
        keep = self.shown_id
        self.experiments.blockSignals(True)
        ids = fill_experiments(self.experiments, found, live)
        if keep not in ids:
            keep = ids[0] if ids else None
        if keep is not None:
            self.experiments.selectRow(ids.index(keep))
        self.experiments.blockSignals(False)
        self.show_experiment(keep)

    def _selection_changed(self) -> None:
        self.show_experiment(self.selected_id())

    def show_experiment(self, experiment_id: str | None) -> None:
        """Progress, summary and conversations of one experiment (live when it runs here)."""
        self.shown_id = experiment_id
        db = self._db() if experiment_id else None
        if experiment_id is None or db is None:
            self.progress.clear("No experiment yet: launch one with “New experiment…”.")
            self.summary.setRowCount(0)
            self.runs.setRowCount(0)
            self._update_buttons()
            return
        live = self._live_progress(experiment_id)
        if live is not None:
            self.progress.set_progress(live, live=True)
        else:
            self.progress.set_progress(
                experiment_report.stored_progress(db, experiment_id), live=False
            )
        self.progress.setTitle(f"Progress — {experiment_id}")
        self._fill_summary(db, experiment_id)
        self._fill_runs(db, experiment_id)
        self._update_buttons()

    def _live_progress(self, experiment_id: str) -> experiment.Progress | None:
        job = self.job
        if job is not None and job.experiment_id == experiment_id and job.progress is not None:
            return job.progress
        return None

    def _fill_summary(self, db: Any, experiment_id: str) -> None:
        try:
            rows = experiment_report.summarise(db, experiment_id)
        except errors.PlaygroundError as exc:
            self.show_error(str(exc))
            rows = []
        fill_summary(self.summary, rows)
        self.summary_box.setTitle(
            "Summary per condition (over finished conversations)"
            if rows
            else "Summary per condition"
        )

    def _fill_runs(self, db: Any, experiment_id: str) -> None:
        keep = self.selected_session()
        rows = experiment_report.runs(db, experiment_id)
        self.runs.blockSignals(True)
        fill_runs(self.runs, rows, keep)
        self.runs.blockSignals(False)
        self.runs_box.setTitle(
            f"Conversations ({len(rows)} started) — double-click one to open it in replay"
        )

    def _update_buttons(self) -> None:
        running = self.running
        self.new_button.setEnabled(not running)
        self.resume_button.setEnabled(not running and self.shown_id is not None)
        self.cancel_button.setEnabled(running)
        self.replay_button.setEnabled(self.selected_session() is not None)

    # -- messages --------------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        show_warning(self.status, text)

    def hint(self, text: str) -> None:
        show_status(self.status, text, "#333")

    # -- commands --------------------------------------------------------------------------------

    def _planner(self, options: Options) -> Plan:
        c = self.controller
        return plan_new(options, c.settings, c.environ)

    def open_new_dialog(self) -> NewExperimentDialog | None:
        """The New experiment dialog (non-modal); Launch starts the experiment."""
        if self.running:
            self.show_error("An experiment is running: cancel it first, or wait for it to end.")
            return None
        c = self.controller
        dlg = NewExperimentDialog(
            self._planner,
            personas_dir=str(c.personas_dir),
            server_label=_server_label(c),
            engine="openai" if c.settings.engine.engine == "openai" else "offline",
            parent=self,
        )
        dlg.accepted.connect(lambda: self.launch(dlg.plan) if dlg.plan is not None else None)
        self.dialog = dlg
        dlg.open()
        return dlg

    def resume(self) -> ExperimentRun | None:
        """Run the selected experiment again: its finished conversations are skipped."""
        xid = self.shown_id
        db = self._db()
        if xid is None or db is None:
            self.show_error("Select an experiment to resume.")
            return None
        c = self.controller
        try:
            plan = plan_resume(db, xid, c.settings, c.environ, self.concurrency)
        except errors.PlaygroundError as exc:
            self.show_error(f"Resume: {exc}")
            return None
        return self.launch(plan, resuming=True)

    def launch(self, plan: Plan, *, resuming: bool = False) -> ExperimentRun | None:
        """Start ``plan`` on the loop (one experiment at a time)."""
        if self.running:
            self.show_error("An experiment is running: cancel it first, or wait for it to end.")
            return None
        db = self._db()
        if db is None:
            return None
        self.concurrency = plan.concurrency
        job = ExperimentRun(db, plan, self.controller.embedder, parent=self)
        job.progress_changed.connect(self._progress)
        job.ended.connect(self._ended)
        self.job = job
        self._seen = (-1, -1)
        self.shown_id = plan.experiment_id
        p = plan.protocol
        self.hint(
            f"{'Resuming' if resuming else 'Launching'} experiment {plan.experiment_id}:"
            f" {', '.join(p.conditions)} × {p.conversations} conversations, {p.agents} agents,"
            f" {p.turns} turns, seed {p.seed}, {p.model if p.engine != 'offline' else 'offline'}"
            " engine. Loading the embedding model and connecting…"
        )
        job.start()
        self._update_buttons()
        return job

    def cancel(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.hint("Cancelling: the conversations in flight are being saved as interrupted…")

    async def stop(self) -> None:
        """Cancel a running experiment and wait until its conversations are saved."""
        if self.job is not None and self.job.running:
            await self.job.stop()

    def open_selected_run(self) -> object:
        sid = self.selected_session()
        if sid is None:
            self.show_error("Select a conversation that has started to open it in replay.")
            return None
        self.hint(f"Opening conversation {sid} in the main window's replay…")
        return self.open_replay_at(self.db_path, sid)

    # -- the run's signals -----------------------------------------------------------------------

    def _progress(self, p: experiment.Progress) -> None:
        if self._closing:
            return
        if self._seen == (-1, -1):
            skipped = sum(c.skipped for c in p.conditions.values())
            self.hint(
                f"Experiment {p.experiment_id} running: {p.total - skipped} conversations to run"
                + (f" ({skipped} finished before are skipped)." if skipped else ".")
            )
        seen = (p.finished, p.running)
        if seen != self._seen:
            # A conversation started or ended: the list, the runs and the summary change too.
            self._seen = seen
            self.refresh()
        elif self.shown_id == p.experiment_id:
            self.progress.set_progress(p, live=True)

    def _ended(self, outcome: str, message: str) -> None:
        if self._closing:
            return
        if outcome == "error":
            self.show_error(message)
        else:
            self.hint(message)
        self.refresh()
        job = self.job
        if job is not None and job.progress is not None and self.shown_id == job.experiment_id:
            self.progress.set_progress(job.progress, live=True)

    # -- closing ---------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.running:
            if self.dialog is not None:
                with contextlib.suppress(RuntimeError):
                    self.dialog.close()
            event.accept()
            return
        # Cancel cleanly first (in-flight conversations saved as interrupted), then close.
        event.ignore()
        self._closing = True

        async def finish() -> None:
            await self.stop()
            with contextlib.suppress(RuntimeError):  # already deleted on the C++ side
                self.close()
                self._closing = False

        task = asyncio.ensure_future(finish())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _server_label(controller: Any) -> str:
    from playground.urls import redact

    s = controller.settings
    return f"{s.llm.model} @ {redact(s.llm.base_url or 'api.openai.com')}"
