"""The main window's STORM wiring: Participants ▸ Add simulated user…, the profile editor behind
the left pane's Edit profile…, and View ▸ STORM dialogues… (also under Experiments)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence

from playground.domain.simulated_user import UserProfile
from ui.storm.profile_editor import ProfileEditorDialog
from ui.storm.seating import AddSimulatedUserDialog
from ui.widgets.tool_window import show_single
from ui.window.host import WindowHost


class StormMenu(QObject):
    """Adds the simulated-user commands and the STORM view to ``window``.

    Args:
        window: the main window (its controller, menus, memory pane and ``spawn``).

    Attributes:
        view: the STORM window, once opened.
        editor: the profile editor last opened.
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = w = window
        self.view: Any = None
        self.editor: ProfileEditorDialog | None = None
        self.add_dialog: AddSimulatedUserDialog | None = None
        menu = w.participants_menu
        self.act_add = menu.addAction("Add simulated user…")
        self.act_add.setToolTip(
            "Seat a STORM simulated user (a saved or generated profile) in the live session"
        )
        self.act_add.triggered.connect(lambda: self.open_add())
        menu.aboutToShow.connect(lambda: self.act_add.setEnabled(w.controller.room is not None))
        self.act_view = w.keys.view_menu.addAction("STORM dialogues…")
        self.act_view.setShortcut(QKeySequence("Ctrl+Shift+D"))
        self.act_view.setToolTip("Satisfaction and clarity curves and the Table-2 report")
        self.act_view.triggered.connect(lambda: self.open_view())
        w.experiments.menu.addAction(self.act_view)
        w.memory.profile_view.editable = True
        w.memory.profile_view.edit_requested.connect(self.open_editor)

    def open_add(self) -> AddSimulatedUserDialog:
        """Participants ▸ Add simulated user…; OK seats the ticked profiles."""
        w = self.window
        dlg = AddSimulatedUserDialog(w.controller, w.window())

        def seat() -> None:
            for seat in dlg.seats():
                w.spawn(
                    w.controller.simulated.add_simulated_user(
                        seat.profile, speak_probability=seat.speak_probability
                    )
                )

        dlg.accepted.connect(seat)
        self.add_dialog = dlg
        dlg.open()
        return dlg

    def open_editor(self, profile: UserProfile) -> ProfileEditorDialog:
        """The profile editor for ``profile``; Save writes its file in ``<personas>/users``."""
        w = self.window
        dlg = ProfileEditorDialog(profile, w.controller.simulated.save_profile, w.window())
        dlg.saved.connect(
            lambda p: w.hint(
                f"Saved profile {p.id} to {w.controller.simulated.users_dir}; it applies to new sessions."
            )
        )
        self.editor = dlg
        dlg.open()
        return dlg

    def open_view(self) -> Any:
        """The STORM window (one; an open one is refreshed and brought to the front)."""
        from ui.storm.view import StormWindow

        w = self.window
        self.view = show_single(
            self.view, lambda: StormWindow(w.controller, w.open_replay, w.window())
        )
        return self.view
