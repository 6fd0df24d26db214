"""Experiments ▸ Study plans… and New study plan…; closing the main window stops a running plan
first (its conversation saved interrupted, its server stopped), then lets the window close."""

from __future__ import annotations

from PySide6.QtWidgets import QMenu

from ui.jobs.job_window import JobMenu
from ui.study_plans.dialog import NewStudyPlanDialog
from ui.study_plans.view import StudyPlansWindow
from ui.window.host import WindowHost


class StudyPlansMenu(JobMenu[StudyPlansWindow]):
    """Adds Study plans… and New study plan… to ``menu`` (the Experiments menu); closing the
    main window while a plan runs stops it first (:class:`JobMenu`).

    Args:
        window: the main window; its ``controller`` gives the database, settings, persona
            library and shared embedding model, its ``open_replay(db_path, session_id)`` the
            replay.
        menu: where the two actions go.
    """

    def __init__(self, window: WindowHost, menu: QMenu) -> None:
        super().__init__(window, StudyPlansWindow)
        self.act_open = menu.addAction("Study plans…")
        self.act_open.setToolTip(
            "Run user studies of three conversations for one group of people, from their browsers"
        )
        self.act_new = menu.addAction("New study plan…")
        self.act_open.triggered.connect(lambda: self.open_view())
        self.act_new.triggered.connect(lambda: self.new_plan())

    def new_plan(self) -> NewStudyPlanDialog | None:
        return self.open_view().open_new_dialog()
