"""The dialog that adds or edits one memory of a participant: its kind, text and weight."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from ui.dialogs.common import ok_cancel

#: The kinds a person may give a memory (the engine also makes utterance and thought memories).
EDITABLE_KINDS = ("fact", "objective", "interest", "knowledge", "experience")


class MemoryEditDialog(QDialog):
    """Add or edit one memory: kind, text and weight. OK stays disabled while the text is blank."""

    def __init__(
        self,
        title: str,
        memory: domain.MemoryItem | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(360)

        self.kind_combo = QComboBox()
        self.kind_combo.addItems(EDITABLE_KINDS)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setPlaceholderText("What the participant remembers…")
        self.text_edit.setTabChangesFocus(True)
        self.weight_spin = QDoubleSpinBox()
        self.weight_spin.setRange(0.0, 1.0)
        self.weight_spin.setSingleStep(0.05)
        self.weight_spin.setDecimals(2)
        self.weight_spin.setValue(1.0)

        if memory is not None:
            if self.kind_combo.findText(memory.kind) < 0:
                # Engine-made kinds (utterance, thought) are kept as they are when editing.
                self.kind_combo.addItem(memory.kind)
            self.kind_combo.setCurrentText(memory.kind)
            self.text_edit.setPlainText(memory.text)
            self.weight_spin.setValue(memory.weight)

        self.button_box = ok_cancel(self)
        self.ok_button = self.button_box.button(QDialogButtonBox.StandardButton.Ok)

        form = QFormLayout()
        form.addRow("Kind", self.kind_combo)
        form.addRow("Text", self.text_edit)
        form.addRow("Weight", self.weight_spin)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.button_box)

        self.text_edit.textChanged.connect(self._update_ok)
        self._update_ok()

    def kind(self) -> str:
        return self.kind_combo.currentText()

    def text(self) -> str:
        return self.text_edit.toPlainText().strip()

    def weight(self) -> float:
        return round(self.weight_spin.value(), 2)

    def accept(self) -> None:
        if not self.text():
            return
        super().accept()

    def _update_ok(self) -> None:
        self.ok_button.setEnabled(bool(self.text()))
