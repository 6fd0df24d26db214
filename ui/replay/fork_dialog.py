"""The Fork dialog: continue a replayed session live from the current moment."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ui.dialogs.common import ok_cancel, preset_combo
from ui.screen_fit import fit_window


class ForkDialog(QDialog):
    """Options for a fork: proactivity, how many more messages, and whether a person joins."""

    def __init__(self, where: str, engine: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Fork from here")
        lay = QVBoxLayout(self)
        intro = QLabel(
            f"A new live session continues from <b>{where}</b> with the same participants, "
            "memories, thoughts and transcript. It is saved as a fork of this session.<br>"
            f"Engine: {engine} (change it with Engine… before forking)."
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        self.preset = preset_combo()
        self.preset.insertItem(0, "Keep each agent's own", "")
        self.preset.setCurrentIndex(0)
        self.more = QSpinBox()
        self.more.setRange(1, 1000)
        self.more.setValue(10)
        self.more.setSuffix(" more messages")
        self.join = QCheckBox("Join the conversation as a human, named")
        self.name = QLineEdit("You")
        self.name.setEnabled(False)
        self.join.toggled.connect(self.name.setEnabled)
        form.addRow("Proactivity", self.preset)
        form.addRow("Go on for", self.more)
        form.addRow(self.join, self.name)
        lay.addLayout(form)
        lay.addWidget(ok_cancel(self))
        fit_window(self, (520, 240))

    def options(self) -> dict:
        return {
            "preset": self.preset.currentData() or None,
            "more_messages": self.more.value(),
            "human": self.name.text().strip() if self.join.isChecked() else None,
        }
