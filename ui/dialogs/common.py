"""What the dialogs share: OK / Cancel buttons, the proactivity preset picker and a dialog's
word-wrapped introduction."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QLabel

PRESET_LABELS = {
    "simulation": "Simulation default (paper)",
    "non-stop-chatter": "Non-stop chatter",
    "active-contributor": "Active contributor",
    "selective-participant": "Selective participant",
}


def ok_cancel(dialog: QDialog, on_ok: Callable[[], object] | None = None) -> QDialogButtonBox:
    """OK / Cancel wired to the dialog's accept (or ``on_ok``, which checks before accepting) /
    reject."""
    buttons = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
    )
    buttons.accepted.connect(dialog.accept if on_ok is None else on_ok)
    buttons.rejected.connect(dialog.reject)
    return buttons


def intro_label(text: str) -> QLabel:
    """A dialog's opening text (rich text allowed), wrapped to the dialog's width."""
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def preset_combo(current: str = "simulation", *, custom: bool = False) -> QComboBox:
    """The proactivity presets (and "Custom" when ``custom``), ``current`` chosen."""
    combo = QComboBox()
    for key, label in PRESET_LABELS.items():
        combo.addItem(label, key)
    if custom:
        combo.addItem("Custom", "custom")
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo
