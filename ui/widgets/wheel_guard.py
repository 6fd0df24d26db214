"""Combo boxes and spin boxes in a scrolling form that a passing mouse wheel does not change.

Over a form that scrolls, a wheel turned to scroll the form changes whichever combo box or spin
box passes under the pointer: a persona's policy or the seed changes without the person seeing
it. A guarded box takes the wheel only once it has the focus (a click or Tab gives it); until
then the wheel scrolls the form.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QWidget


class _WheelGuard(QObject):
    """Sends the wheel over an unfocused box on to the scroll area around it (the form)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget):
            return False
        if watched.hasFocus():
            return False
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QCoreApplication.sendEvent(area.viewport(), event)
        return True


def guard_wheel(*boxes: QWidget) -> None:
    """Let ``boxes`` (combo boxes, spin boxes) take the mouse wheel only once focused.

    The wheel no longer gives them the focus either (``StrongFocus``: a click or Tab does).
    """
    for box in boxes:
        guard = box.findChild(_WheelGuard, options=Qt.FindChildOption.FindDirectChildrenOnly)
        if guard is None:
            box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            box.installEventFilter(_WheelGuard(box))
