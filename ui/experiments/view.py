"""The Experiments window: the experiments in the session database, a New experiment dialog,
live progress, Cancel and Resume, each conversation's run, and the per-condition summary.

An experiment runs as a task on the window's asyncio loop (qasync), with the window's shared
embedding model; closing this window (or the main window) while one runs cancels it cleanly:
the conversations in flight end ``interrupted`` and Resume redoes them.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QAbstractItemView, QSizePolicy

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
from ui.jobs.job_window import JobWindow
from ui.widgets.tool_window import group_box as _group
from ui.widgets.tool_window import min_rows
from ui.widgets.tool_window import read_only_table as _table

RESUME_TIP = (
    "Run the selected experiment's protocol again: finished conversations are skipped,"
    " interrupted and failed ones are run again"
)
COMPLETE_TIP = (
    "Every conversation of this experiment finished: there is nothing to resume (New"
    " experiment… runs another)"
)


class ExperimentsWindow(JobWindow):
    """Launch, watch, cancel and resume experiments; open their conversations in replay.

    Made as a :class:`SessionsWindow` (a :class:`JobWindow`); it uses more of the controller: its
    database, settings (the engine configured under Engine…), environment, persona directory and
    shared embedding model. Its Stop button is Cancel (``cancel_button``).
    """

    TITLE = "Experiments"
    LISTING = "Experiments"
    BUSY = "An experiment is running: cancel it first, or wait for it to end."
    STOPPING = "Cancelling: the conversations in flight are being saved as interrupted…"
    NO_SESSION = "Select a conversation that has started to open it in replay."

    job: ExperimentRun | None

    def _build(self) -> None:
        self.concurrency = 8  # Resume uses the concurrency of the last launch
        self._closing = False
        self._seen: tuple[int, int] = (-1, -1)
        self._tasks: set[asyncio.Future[Any]] = set()
        self.dialog: NewExperimentDialog | None = None

        #: Every conversation of the experiment shown has finished: nothing to resume.
        self.complete = False
        lay = self._top_row(
            "New experiment…",
            RESUME_TIP,
            "Cancel",
            "Stop the running experiment: conversations in flight are saved as interrupted",
        )
        self.cancel_button = self.stop_button

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
        min_rows(self.experiments, 3)
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
        lay.addWidget(self._status_line())
        self._wire(self.experiments, self.runs, RUN_COLUMNS.index("Session"))

    # -- data ------------------------------------------------------------------------------------

    def _read_listing(self, db: Any) -> list[dict[str, Any]]:
        return experiment_report.list_experiments(db)

    def _fill_listing(self, found: list[dict[str, Any]]) -> list[str]:
        live = self.job.experiment_id if self.running and self.job else None
        return fill_experiments(self.experiments, found, live)

    def _show_one(self, job_id: str | None) -> None:
        self.show_experiment(job_id)

    def show_experiment(self, experiment_id: str | None) -> None:
        """Progress, summary and conversations of one experiment (live when it runs here)."""
        self.shown_id = experiment_id
        db = self._db() if experiment_id else None
        self.complete = False
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
        # What the database holds decides (a conversation deleted from the library since is
        # not done any more, whatever the last run counted).
        self.complete = all_finished(experiment_report.stored_progress(db, experiment_id))
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
        self.resume_button.setEnabled(
            not running and self.shown_id is not None and not self.complete
        )
        self.resume_button.setToolTip(COMPLETE_TIP if self.complete else RESUME_TIP)
        self.cancel_button.setEnabled(running)
        self.replay_button.setEnabled(self.selected_session() is not None)

    # -- commands --------------------------------------------------------------------------------

    def _planner(self, options: Options) -> Plan:
        c = self.controller
        return plan_new(options, c.settings, c.environ)

    def open_new_dialog(self) -> NewExperimentDialog | None:
        """The New experiment dialog (non-modal); Launch starts the experiment."""
        if self._busy():
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
        db = self._free_db()
        if db is None:
            return None
        self.concurrency = plan.concurrency
        job = ExperimentRun(db, plan, self.controller.embedding.get, parent=self)
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
        super()._ended(outcome, message)
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


def all_finished(progress: experiment.Progress) -> bool:
    """Every planned conversation of every condition finished (none failed, none left, none
    deleted since), in this run or an earlier one."""
    conditions = progress.conditions.values()
    return bool(conditions) and all(
        c.total > 0 and c.done + c.skipped >= c.total for c in conditions
    )


def _server_label(controller: Any) -> str:
    from playground.urls import redact

    s = controller.settings
    return f"{s.llm.model} @ {redact(s.llm.base_url or 'api.openai.com')}"
