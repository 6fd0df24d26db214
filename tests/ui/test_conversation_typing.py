"""While a person types (a message or a private note) the conversation holds still: new messages
do not scroll the view under them; a "N new messages ↓" button says what arrived and jumps there.
The note editor gets a row of its own below its message."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from playground import domain
from ui.bridge import EngineBridge
from ui.panes.conversation.conversation_pane import ConversationPane
from ui.selection import SelectedParticipant

LONG = "A longer message that wraps over a few lines of the conversation pane. " * 3


def _msg(i: int, speaker: str = "Ana", kind: str = "ai") -> domain.Message:
    return domain.Message(
        id=i, speaker=speaker, text=f"{i}: {LONG}", step=i, at="2024-01-01T10:00:00", kind=kind
    )


def _pane(qtbot, n: int = 12):
    bridge = EngineBridge()
    pane = ConversationPane(bridge, SelectedParticipant(), {"Ana": "#1f77b4", "Zoe": "#d62728"})
    qtbot.addWidget(pane)
    pane.resize(520, 520)
    pane.show()
    qtbot.waitExposed(pane)
    pane.set_human("Zoe")
    for i in range(1, n + 1):
        bridge.message_posted.emit(_msg(i))
    qtbot.wait(50)
    return bridge, pane


def _at_bottom(pane: ConversationPane) -> bool:
    bar = pane.list.verticalScrollBar()
    return bar.value() == bar.maximum()


def test_the_note_editor_has_a_row_of_its_own_below_its_message(qtbot):
    _bridge, pane = _pane(qtbot, 3)
    w = pane.widgets[2]
    before = pane.items[2].sizeHint().height()
    w.note_button.click()
    qtbot.wait(50)
    assert w.note_edit.isVisible()
    # The row grew by the editor's height: nothing is squashed, nothing overlaps the text.
    assert pane.items[2].sizeHint().height() >= before + w.note_edit.sizeHint().height()
    assert w.height() >= w.heightForWidth(w.width())
    assert w.note_edit.geometry().top() >= w.body.geometry().bottom()
    assert w.note_edit.height() >= w.note_edit.sizeHint().height()
    assert w.note_edit.geometry().bottom() <= w.contentsRect().bottom()
    # Enter saves and the row shrinks back.
    w.note_edit.setText("felt rushed")
    w.note_edit.returnPressed.emit()
    qtbot.wait(50)
    assert not w.note_edit.isVisible()
    assert pane.items[2].sizeHint().height() == before


def test_the_view_holds_still_while_a_person_types_a_message(qtbot):
    bridge, pane = _pane(qtbot)
    assert _at_bottom(pane)
    bar = pane.list.verticalScrollBar()
    pane.composer.setFocus()
    pane.composer.setPlainText("I think that")
    still = bar.value()
    for i in range(13, 16):
        bridge.message_posted.emit(_msg(i))
    qtbot.wait(50)
    assert bar.value() == still, "the view moved under the person typing"
    assert pane.jump_button.isVisible()
    assert pane.jump_button.text() == "3 new messages ↓"
    # Done typing (sent): the view follows again and shows the latest message.
    pane.composer.clear()
    qtbot.wait(50)
    assert _at_bottom(pane)
    assert not pane.jump_button.isVisible()


def test_the_jump_button_shows_the_new_messages(qtbot):
    bridge, pane = _pane(qtbot)
    pane.composer.setPlainText("Wait")
    bridge.message_posted.emit(_msg(13))
    qtbot.wait(50)
    assert pane.jump_button.text() == "1 new message ↓"
    pane.jump_button.click()
    qtbot.wait(50)
    assert _at_bottom(pane)
    assert not pane.jump_button.isVisible()
    assert pane.composer.toPlainText() == "Wait", "the draft is kept"


def test_the_view_holds_still_while_a_note_is_open(qtbot):
    bridge, pane = _pane(qtbot)
    bar = pane.list.verticalScrollBar()
    w = pane.widgets[11]
    pane.list.scrollToItem(pane.items[11])
    w.note_button.click()
    qtbot.wait(50)
    still = bar.value()
    top = w.note_edit.mapTo(pane, w.note_edit.rect().topLeft())
    for i in range(13, 15):
        bridge.message_posted.emit(_msg(i))
    qtbot.wait(50)
    assert bar.value() == still
    assert w.note_edit.mapTo(pane, w.note_edit.rect().topLeft()) == top, "the editor moved"
    assert pane.jump_button.text() == "2 new messages ↓"
    w.note_edit.setText("odd")
    w.note_edit.returnPressed.emit()
    qtbot.wait(50)
    assert _at_bottom(pane)
    assert not pane.jump_button.isVisible()
    assert QApplication.instance() is not None
