"""A person's private note while agents go on posting (ui/panes/conversation/message_rows.py): the editor
opens in view, even on a message that has just arrived, and stays there as the list grows; a
✎ under the pointer stays where it was drawn, so a click acts on the message it was drawn for.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QWidget

from tests.ui.test_conversation_typing import _msg, _pane
from ui.panes.conversation.conversation_pane import ConversationPane
from ui.panes.conversation.message_widget import MessageWidget


def _in_view(pane: ConversationPane, part: QWidget) -> bool:
    """``part`` is wholly inside the list's viewport (the person sees it)."""
    vp = pane.list.viewport()
    return vp.rect().contains(QRect(part.mapTo(vp, QPoint(0, 0)), part.size()))


def _message_at(pane: ConversationPane, pos: QPoint) -> MessageWidget | None:
    """The message whose row is at ``pos`` in the viewport."""
    w = pane.list.viewport().childAt(pos)
    while w is not None and not isinstance(w, MessageWidget):
        w = w.parentWidget()
    return w


def test_the_editor_opens_in_view_on_the_newest_message(qtbot):
    bridge, pane = _pane(qtbot)
    w = pane.widgets[12]
    w.note_button.click()
    qtbot.wait(50)
    assert _in_view(pane, w.note_edit), "the editor opened below the view"
    for i in range(13, 17):  # the agents go on posting: the person still sees what they type
        bridge.message_posted.emit(_msg(i))
        qtbot.wait(20)
        assert _in_view(pane, w.note_edit), f"message {i} pushed the editor out of view"
    assert pane.jump_button.text() == "4 new messages ↓"


def test_the_editor_opens_in_view_on_a_message_that_has_just_arrived(qtbot):
    """The ✎ of a message posted a moment ago: its row was not sized yet, and the view had not
    followed it yet either."""
    bridge, pane = _pane(qtbot)
    bridge.message_posted.emit(_msg(13))
    w = pane.widgets[13]
    w.note_button.click()  # before the pane's deferred fit of the new row
    qtbot.wait(50)
    assert _in_view(pane, w.note_edit)
    assert _in_view(pane, w.body), "its message shows above the editor"
    bridge.message_posted.emit(_msg(14))
    qtbot.wait(50)
    assert _in_view(pane, w.note_edit)


def test_a_note_button_under_the_pointer_stays_on_its_message(qtbot):
    bridge, pane = _pane(qtbot)
    vp = pane.list.viewport()
    aimed = pane.widgets[11]
    assert _in_view(pane, aimed.note_button)
    spot = aimed.note_button.mapTo(vp, aimed.note_button.rect().center())
    qtbot.mouseMove(vp, spot)  # the person points at #11's ✎ …
    qtbot.wait(20)
    for i in range(13, 16):  # … while the agents post
        bridge.message_posted.emit(_msg(i))
        qtbot.wait(20)
    under = _message_at(pane, spot)
    assert under is not None, "the pointer is over no message now"
    assert under is aimed, f"the pointer is over #{under.msg.id}'s ✎ now"
    button = vp.childAt(spot)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.wait(20)
    assert aimed.is_editing_note(), "the click opened #11's editor"
    assert [m for m, x in pane.widgets.items() if x.is_editing_note()] == [11]
    # The pointer leaves and the editor closes: the view follows the conversation again.
    aimed.close_note()
    qtbot.mouseMove(pane.title)
    qtbot.wait(50)
    bar = pane.list.verticalScrollBar()
    assert bar.value() == bar.maximum()
