"""The one piece of shared view state: which participant the side panes follow."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class SelectedParticipant(QObject):
    changed = Signal(str)  # participant name ("" for none)
    stimulus_focused = Signal(
        str
    )  # a ref like "memory:3" / "message:5" / "thought:2" ("" to clear)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = ""

    def select(self, name: str) -> None:
        if name != self.name:
            self.name = name
            self.changed.emit(name)

    def focus_stimulus(self, ref: str) -> None:
        self.stimulus_focused.emit(ref)
