"""The New session dialog on a big screen and under a scrolling wheel (issue 34, point 7)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QComboBox, QSpinBox, QWidget

from playground import personas
from playground.settings import load_settings
from ui.dialogs.new_session import NewSessionDialog


def dialog(qtbot) -> NewSessionDialog:
    library = personas.load_personas()
    dlg = NewSessionDialog(library, personas.load_icebreakers(), load_settings({}))
    qtbot.addWidget(dlg)
    return dlg


def test_on_a_big_screen_every_persona_line_shows_whole(qtbot) -> None:
    """The tests' screen is 2560×1440: the dialog grows to the longest persona line and to the
    whole list, instead of keeping the 600×660 that suits a 1024×700 screen."""
    dlg = dialog(qtbot)
    dlg.show()
    qtbot.waitExposed(dlg)
    listing = dlg.list
    assert listing.sizeHintForColumn(0) <= listing.viewport().width()
    assert not listing.verticalScrollBar().isVisible()  # every persona in view
    assert dlg.width() > 600
    screen = dlg.screen().availableGeometry()
    assert dlg.width() <= screen.width()
    assert dlg.height() <= screen.height()


def wheel(widget: QWidget, notches: int = -1) -> None:
    """One real wheel turn over the middle of ``widget`` (negative: towards the user, down)."""
    at = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(
        at,
        QPointF(widget.mapToGlobal(at.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_form_past_the_boxes_until_one_is_clicked(qtbot) -> None:
    dlg = dialog(qtbot)
    dlg.show()
    dlg.resize(620, 320)  # a short screen: the form scrolls
    qtbot.waitUntil(lambda: dlg.scroll_area.verticalScrollBar().maximum() > 0)  # type: ignore[attr-defined]  # set by ui.screen_fit.scrolling_body
    bar = dlg.scroll_area.verticalScrollBar()  # type: ignore[attr-defined]  # set by ui.screen_fit.scrolling_body
    boxes: list[QComboBox | QSpinBox] = [
        dlg.icebreaker,
        dlg.preset,
        dlg.seed,
        dlg.policy_all,
        *dlg.policy_combos.values(),
    ]
    assert len(boxes) > 4
    before = [b.currentIndex() if isinstance(b, QComboBox) else b.value() for b in boxes]
    for box in boxes:
        bar.setValue(0)
        wheel(box)
        assert bar.value() > 0, box  # the form scrolled
        assert not box.hasFocus()
    after = [b.currentIndex() if isinstance(b, QComboBox) else b.value() for b in boxes]
    assert after == before

    policy = next(iter(dlg.policy_combos.values()))
    policy.setFocus(Qt.FocusReason.MouseFocusReason)  # a click gives it the wheel
    qtbot.waitUntil(policy.hasFocus)
    index = policy.currentIndex()
    wheel(policy)
    assert policy.currentIndex() != index
