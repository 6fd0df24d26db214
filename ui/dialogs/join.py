"""The Join dialog: the name a person takes in the conversation they join."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QFormLayout, QLabel, QLineEdit, QWidget

from ui.dialogs.common import ok_cancel
from ui.screen_fit import fit_window


class JoinDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Join the conversation")
        lay = QFormLayout(self)
        self.name = QLineEdit("Me")
        lay.addRow("Your name", self.name)
        hint = QLabel(
            "The conversation switches to real time: every message you send triggers the agents; "
            "after a pause they may speak up on their own."
        )
        hint.setWordWrap(True)
        lay.addRow(hint)
        buttons = ok_cancel(self)
        lay.addRow(buttons)
        fit_window(self, self.sizeHint())
