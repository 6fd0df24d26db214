"""What the dialogs share: OK / Cancel buttons, the proactivity preset picker, a dialog's
word-wrapped introduction, its number boxes and error line, and the values it keeps for next
time."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QSpinBox,
)

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


def spin_box(low: int, high: int, value: int, suffix: str = "") -> QSpinBox:
    """A whole-number box from ``low`` to ``high`` showing ``value`` (``suffix`` after it)."""
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    return box


def error_and_buttons(
    dialog: QDialog, lay: QBoxLayout, ok_text: str
) -> tuple[QLabel, QDialogButtonBox]:
    """Add to ``lay`` the dialog's error line (red, word-wrapped, hidden until
    :func:`show_error`) and OK / Cancel with OK named ``ok_text``; both."""
    error = QLabel("")
    error.setWordWrap(True)
    error.setStyleSheet("color:#c62828;")
    error.hide()
    lay.addWidget(error)
    buttons = ok_cancel(dialog)
    buttons.button(QDialogButtonBox.StandardButton.Ok).setText(ok_text)
    lay.addWidget(buttons)
    return error, buttons


def show_error(error: QLabel, text: str) -> None:
    """Say ``text`` on a dialog's error line (see :func:`error_and_buttons`)."""
    error.setText(f"⚠ {text}")
    error.show()


def kept(group: str) -> dict[str, str]:
    """The values kept under the ``QSettings`` group ``group`` (see :func:`keep`), as text."""
    store = QSettings()
    store.beginGroup(group)
    try:
        return {key: str(store.value(key)) for key in store.childKeys()}
    finally:
        store.endGroup()


def keep(group: str, values: Mapping[str, object]) -> None:
    """Keep ``values`` under the ``QSettings`` group ``group``, written out at once."""
    store = QSettings()
    store.beginGroup(group)
    for key, value in values.items():
        store.setValue(key, value)
    store.endGroup()
    store.sync()
