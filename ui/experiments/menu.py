"""The main window's Experiments menu; it also stops a running experiment before the window closes."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from ui.experiments.dialog import NewExperimentDialog
from ui.experiments.view import ExperimentsWindow
from ui.jobs.job_window import JobMenu
from ui.study_plans.menu import StudyPlansMenu
from ui.window.host import WindowHost


class ExperimentsMenu(JobMenu[ExperimentsWindow]):
    """Adds Experiments ▸ Experiments… and New experiment… to ``window`` (and, below them, Study
    plans… and New study plan…: :class:`ui.study_plans.menu.StudyPlansMenu`).

    Closing the main window while an experiment runs first cancels it and waits until its
    conversations in flight are saved ``interrupted`` (so Resume can redo them), then lets the
    window close as usual (:class:`JobMenu`).

    Args:
        window: the main window; its ``controller`` gives the database, settings and shared
            embedding model, its ``open_replay(db_path, session_id)`` the replay.
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window, ExperimentsWindow)
        self.menu = menu = window.menuBar().addMenu("E&xperiments")
        self.act_open = menu.addAction("Experiments…")
        self.act_open.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.act_open.setToolTip("Launch, watch, cancel and resume batch experiments")
        self.act_new = menu.addAction("New experiment…")
        self.act_open.triggered.connect(lambda: self.open_view())
        self.act_new.triggered.connect(lambda: self.new_experiment())
        menu.addSeparator()
        #: Study plans… and New study plan… (user studies from people's browsers).
        self.plans = StudyPlansMenu(window, menu)

    def new_experiment(self) -> NewExperimentDialog | None:
        return self.open_view().open_new_dialog()
