"""Experiments ▸ Study plans… and New study plan…; closing the main window stops a running plan
first (its conversation saved interrupted, its server stopped), then lets the window close."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QMenu

from ui.study_plans.dialog import NewStudyPlanDialog
from ui.study_plans.view import StudyPlansWindow
from ui.tool_window import show_single
from ui.window.host import WindowHost


class StudyPlansMenu(QObject):
    """Adds Study plans… and New study plan… to ``menu`` (the Experiments menu).

    Args:
        window: the main window; its ``controller`` gives the database, settings, persona
            library and shared embedding model, its ``open_replay(db_path, session_id)`` the
            replay.
        menu: where the two actions go.
    """

    def __init__(self, window: WindowHost, menu: QMenu) -> None:
        super().__init__(window.window())
        self.window = window
        self.view: StudyPlansWindow | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.act_open = menu.addAction("Study plans…")
        self.act_open.setToolTip(
            "Run user studies of three conversations for one group of people, from their browsers"
        )
        self.act_new = menu.addAction("New study plan…")
        self.act_open.triggered.connect(lambda: self.open_view())
        self.act_new.triggered.connect(lambda: self.new_plan())
        window.installEventFilter(self)

    def open_view(self) -> StudyPlansWindow:
        """The Study plans window (one; an open one is refreshed and brought to the front)."""
        w = self.window
        self.view = show_single(
            self.view, lambda: StudyPlansWindow(w.controller, w.open_replay, w.window())
        )
        return self.view

    def new_plan(self) -> NewStudyPlanDialog | None:
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
        # Stop the plan first (it writes to the database the window closes), then close.
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
