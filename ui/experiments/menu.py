"""The main window's Experiments menu; it also stops a running experiment before the window closes."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeySequence

from ui.experiments.dialog import NewExperimentDialog
from ui.experiments.view import ExperimentsWindow
from ui.study_plans.menu import StudyPlansMenu
from ui.tool_window import show_single
from ui.window.host import WindowHost


class ExperimentsMenu(QObject):
    """Adds Experiments ▸ Experiments… and New experiment… to ``window`` (and, below them, Study
    plans… and New study plan…: :class:`ui.study_plans.menu.StudyPlansMenu`).

    Closing the main window while an experiment runs first cancels it and waits until its
    conversations in flight are saved ``interrupted`` (so Resume can redo them), then lets the
    window close as usual.

    Args:
        window: the main window; its ``controller`` gives the database, settings and shared
            embedding model, its ``open_replay(db_path, session_id)`` the replay.
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = window
        self.view: ExperimentsWindow | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.menu = menu = window.menuBar().addMenu("E&xperiments")
        self.act_open = menu.addAction("Experiments…")
        self.act_open.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.act_open.setToolTip("Launch, watch, cancel and resume batch experiments")
        self.act_new = menu.addAction("New experiment…")
        self.act_open.triggered.connect(lambda: self.open_view())
        self.act_new.triggered.connect(lambda: self.new_experiment())
        window.installEventFilter(self)
        menu.addSeparator()
        #: Study plans… and New study plan… (user studies from people's browsers).
        self.plans = StudyPlansMenu(window, menu)

    def open_view(self) -> ExperimentsWindow:
        """The Experiments window (one; an open one is refreshed and brought to the front)."""
        w = self.window
        self.view = show_single(
            self.view, lambda: ExperimentsWindow(w.controller, w.open_replay, w.window())
        )
        return self.view

    def new_experiment(self) -> NewExperimentDialog | None:
        return self.open_view().open_new_dialog()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.window or event.type() != QEvent.Type.Close:
            return False
        view = self.view
        if view is None or not view.running:
            if view is not None:
                with contextlib.suppress(RuntimeError):
                    view.close()
            return False
        # Stop the experiment first (it writes to the database the window closes), then close.
        event.ignore()

        async def finish() -> None:
            await view.stop()
            with contextlib.suppress(RuntimeError):  # the Qt objects are already gone
                view.close()
                self.window.close()

        task = asyncio.ensure_future(finish())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True
