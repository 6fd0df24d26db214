"""The Study plans window: the study plans in the session database and their conversations, a
New study plan dialog, and the plan running here — its links, who has joined, who is online and
who has answered — with Stop and Resume.

A plan runs as a task on the window's asyncio loop (qasync), with the window's engine settings,
persona library and shared embedding model; one at a time. The window reads where the plan is
once a second from the runner in memory (and the database's plan rows when they change), never
waiting on it. Closing this window leaves the plan running (Experiments ▸ Study plans… shows it
again); Stop, or closing the main window, stops it cleanly: the conversation on is saved
interrupted, every browser is told, the server stops, and Resume goes on with the same links.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QSizePolicy

from playground import errors
from playground.storage import study_rows
from playground.study.lock import plan_status
from playground.study.plan import Listen
from ui.jobs.job_window import JobWindow
from ui.study_plans.dialog import NewStudyPlanDialog, remembered
from ui.study_plans.live import LivePanel
from ui.study_plans.run import PlanRun, create, engine_mismatch, plan_rows, plan_settings
from ui.study_plans.tables import PLAN_COLUMNS, STEP_COLUMNS, fill_plans, fill_steps
from ui.widgets.tool_window import fit_height, group_box, min_rows, read_only_table

log = logging.getLogger(__name__)

#: How often the window reads where the running plan is, in milliseconds.
TICK_MS = 1000


class StudyPlansWindow(JobWindow):
    """Create, run, follow, stop and resume study plans; open their conversations in replay.

    Made as a :class:`SessionsWindow` (a :class:`JobWindow`); it uses more of the controller: its
    database, settings (the engine configured under Engine…), persona library and shared
    embedding model.
    """

    TITLE = "Study plans"
    LISTING = "Study plans"
    LISTING_ERRORS = (sqlite3.Error,)
    BUSY = "A study plan is running: stop it first, or wait for it to end."
    STOPPING = "Stopping: the conversation is being saved and every browser told…"
    NO_SESSION = "Select a conversation that has a session to open it in replay."

    job: PlanRun | None

    def _build(self) -> None:
        self.dialog: NewStudyPlanDialog | None = None
        self.review_minutes = 15.0
        self._seen: tuple[Any, ...] = ()

        lay = self._top_row(
            "New study plan…",
            "Run the selected plan on from where it stopped, with the same links: a"
            " conversation cut short runs again as a new session, a review reopens",
            "Stop",
            "Stop the plan for everyone: the conversation on is saved as interrupted, every"
            " browser is told; Resume goes on",
        )

        self.plans = read_only_table(PLAN_COLUMNS, PLAN_COLUMNS.index("Order"))
        min_rows(self.plans, 3)
        self.steps = read_only_table(STEP_COLUMNS, STEP_COLUMNS.index("Status"))
        self.steps.setToolTip("Double-click a conversation that has a session to open it in replay")
        fit_height(self.steps, 3)
        self.plans_box = group_box("Study plans in this database", self.plans)
        self.steps_box = group_box("Conversations", self.steps)
        self.live = LivePanel()
        fixed = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.steps_box.setSizePolicy(fixed)
        self.live.hide()
        self.live.setSizePolicy(fixed)  # as tall as its people (see LivePanel.show_live)
        for box, stretch in ((self.plans_box, 1), (self.steps_box, 0), (self.live, 0)):
            lay.addWidget(box, stretch)
        lay.addWidget(self._status_line())

        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self._wire(self.plans, self.steps, STEP_COLUMNS.index("Session"))

    # -- data ------------------------------------------------------------------------------------

    def _live_id(self) -> str | None:
        return self.job.plan_id if self.running and self.job is not None else None

    def _read_listing(self, db: Any) -> list[dict[str, Any]]:
        return plan_rows(db)

    def _fill_listing(self, found: list[dict[str, Any]]) -> list[str]:
        return fill_plans(self.plans, found, self._live_id())

    def _show_one(self, job_id: str | None) -> None:
        self.show_plan(job_id)

    def show_plan(self, plan_id: str | None) -> None:
        """The conversations of one plan."""
        self.shown_id = plan_id
        db = self._db() if plan_id else None
        live = plan_id is not None and plan_id == self._live_id()
        try:
            steps = study_rows.plan_steps(db, plan_id) if plan_id and db is not None else []
            saved = study_rows.plan(db, plan_id) if plan_id and db is not None else None
            # A plan another process runs (the command line) is live too.
            if not live and db is not None and saved is not None:
                live = plan_status(db, saved).state == "running"
        except sqlite3.Error as exc:
            self.show_error(f"Study plan {plan_id}: {exc}")
            steps = []
        keep = self.selected_session()
        self.steps.blockSignals(True)
        fill_steps(self.steps, steps, live, keep)
        self.steps.blockSignals(False)
        self.steps_box.setTitle(
            f"Conversations of {plan_id} — double-click one to open it in replay"
            if plan_id
            else "Conversations — no study plan yet: start one with “New study plan…”"
        )
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.running
        shown_done = False
        if self.shown_id is not None and (db := self._db()) is not None:
            try:
                saved = study_rows.plan(db, self.shown_id)
            except sqlite3.Error:
                saved = None  # said when the plans were read
            shown_done = saved is None or saved["status"] == "done"
        self.new_button.setEnabled(not running)
        self.resume_button.setEnabled(not running and self.shown_id is not None and not shown_done)
        self.stop_button.setEnabled(running)
        self.replay_button.setEnabled(self.selected_session() is not None)

    # -- commands --------------------------------------------------------------------------------

    def open_new_dialog(self) -> NewStudyPlanDialog | None:
        """The New study plan dialog (non-modal); Start saves the plan and runs it."""
        if self._busy():
            return None
        c = self.controller
        try:
            personas = len(c.library())
        except errors.PlaygroundError:
            personas = 0

        def creator(options: Any) -> str:
            db = c.database()
            return create(db, self.db_path, c.library(), c.settings, options)

        dlg = NewStudyPlanDialog(
            creator, engine_label=c.engine_label(), personas=personas, parent=self
        )
        dlg.accepted.connect(lambda: self._start_new(dlg))
        self.dialog = dlg
        dlg.open()
        return dlg

    def _start_new(self, dlg: NewStudyPlanDialog) -> None:
        opts, plan_id = dlg.chosen, dlg.plan_id
        if opts is None or plan_id is None:
            return
        settings = plan_settings(self.controller.settings, opts.show_thoughts)
        self.launch(plan_id, settings, Listen(opts.host, opts.port), opts.review_minutes)

    def resume(self) -> PlanRun | None:
        """Run the selected plan on from where it stopped, with the same links (the address,
        port and review time last chosen in the New study plan dialog)."""
        pid, db = self.shown_id, self._db()
        if pid is None or db is None:
            self.show_error("Select a study plan to resume.")
            return None
        try:
            saved = study_rows.plan(db, pid)
        except sqlite3.Error as exc:
            self.show_error(f"Resume: {exc}")
            return None
        if saved is None or saved["status"] == "done":
            self.show_error(f"Study plan {pid} is already done.")
            return None
        settings = plan_settings(self.controller.settings, bool(saved["show_thoughts"]))
        why = engine_mismatch(pid, saved["settings"], settings)
        if why is not None:
            self.show_error(f"Resume: {why}.")
            return None
        host, port, review = remembered()
        return self.launch(pid, settings, Listen(host, port), review, resuming=True)

    def launch(
        self,
        plan_id: str,
        settings: Any,
        listen: Listen,
        review_minutes: float,
        *,
        resuming: bool = False,
    ) -> PlanRun | None:
        """Run plan ``plan_id`` on the loop (one plan at a time)."""
        db = self._free_db()
        if db is None:
            return None
        c = self.controller
        try:
            library = c.library()
        except errors.PlaygroundError as exc:
            self.show_error(f"Personas: {exc}")
            return None
        job = PlanRun(
            db,
            self.db_path,
            plan_id,
            settings,
            library,
            c.embedding.get,
            listen=listen,
            review_minutes=review_minutes,
            parent=self,
        )
        job.served.connect(self._served)
        job.ended.connect(self._ended)
        self.job, self.review_minutes, self.shown_id = job, review_minutes, plan_id
        self._seen = ()
        self.hint(
            f"{'Resuming' if resuming else 'Starting'} study plan {plan_id} on {c.engine_label()}:"
            f" serving at {listen.host}:{listen.port}. Loading the embedding model and seating"
            " the agent…"
        )
        job.start()
        self.live.clear()
        self.live.show()
        self.timer.start()
        self.refresh()
        self._tick()
        return job

    def cancel(self) -> None:
        """Stop the plan: its rooms are saved, every browser told and its server stopped."""
        super().cancel()
        self._tick()  # shows "stopping" (nothing when no plan runs)

    # -- following the running plan ----------------------------------------------------------------

    def _tick(self) -> None:
        job = self.job
        live = job.live() if job is not None else None
        if live is None:
            return
        self.live.show_live(live, self.review_minutes)
        # The tables change when a conversation starts, ends its talk or its review.
        seen = (live.position, live.phase, tuple(p.answered for p in live.people))
        db = self._db()
        if db is None:
            return
        try:
            steps = tuple(s["status"] for s in study_rows.plan_steps(db, live.plan_id))
        except sqlite3.Error:
            log.warning("reading the plan's steps", exc_info=True)
            return
        if (seen, steps) != self._seen:
            self._seen = (seen, steps)
            self.refresh()

    def _served(self) -> None:
        if self.job is not None:
            self.hint(
                f"Study plan {self.job.plan_id} is running: give each person their own link"
                " (Copy link); it stays the same for all three conversations."
            )
        self._tick()

    def _ended(self, outcome: str, message: str) -> None:
        self.timer.stop()
        self.live.hide()
        self.live.clear()
        super()._ended(outcome, message)
