"""One message of the conversation pane as a widget (speaker, turn, time, marks, text, the
human's private notes), the list that holds them, and the human's composer."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ui import theme
from ui.widgets.fitted_label import FittedLabel

#: The mark on a simulated user's messages.
SIMULATED_MARK = "simulated user"


def fitted_size(w: QWidget) -> QSize:
    """The size a message needs at its fixed width: wrapped text gets the height it wraps to,
    not the taller height a narrower default width would give. (Its full size hint is not
    needed, and costs several times more: the header is rich text.)"""
    if w.hasHeightForWidth():
        return QSize(w.width(), w.heightForWidth(w.width()))
    return w.sizeHint()


class _Body(FittedLabel):
    """A message's text, selectable with the mouse.

    Qt lays selectable text out through a text document, several times for each new text, and a
    replay jump gives a dozen rows new texts at once. So the text is drawn as plain text (the
    same, pixel for pixel, and the same height) and becomes selectable as soon as the mouse is
    over it, before any press or right-click reaches it."""

    def show_text(self, text: str) -> None:
        if not self.underMouse():
            self.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.setText(text)

    def make_selectable(self) -> None:
        if self.textInteractionFlags() != Qt.TextInteractionFlag.TextSelectableByMouse:
            self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def enterEvent(self, event) -> None:
        self.make_selectable()
        super().enterEvent(event)

    def mousePressEvent(self, event) -> None:
        self.make_selectable()
        super().mousePressEvent(event)

    def contextMenuEvent(self, event) -> None:
        self.make_selectable()
        super().contextMenuEvent(event)


class _NoteEdit(QLineEdit):
    """The note editor: Enter saves (``returnPressed``), Escape closes it unsaved."""

    cancelled = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)


class MessageWidget(QFrame):
    """One message, with the human's private notes underneath (shown only to them).

    The note editor opens on a line of its own below the message (its row grows to hold it:
    the pane refits the row on ``note_editing``)."""

    note_submitted = Signal(int, str)
    #: The note editor opened (True) or closed (False): the pane gives the row room for it and
    #: holds the view still while it is open.
    note_editing = Signal(bool)
    #: The pointer came onto (True) or left (False) the "✎ note" button: the pane holds the view
    #: still meanwhile, so that the button under the pointer stays this message's.
    note_pointed = Signal(bool)

    def __init__(self, msg, color: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.msg = msg
        self.setObjectName("msg")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 5, 8, 5)
        lay.setSpacing(2)
        head = QHBoxLayout()
        self.header = FittedLabel()
        head.addWidget(self.header, 1)
        self.note_button = QToolButton()
        self.note_button.setText("✎ note")
        self.note_button.setAutoRaise(True)
        # No taller than the header's line: showing it must not open a gap above the text.
        self.note_button.setStyleSheet("QToolButton { padding: 0px 3px; }")
        self.note_button.setFixedHeight(self.fontMetrics().height() + 2)
        self.note_button.setVisible(False)
        self.note_button.clicked.connect(self.open_note)
        self.note_button.installEventFilter(self)
        self.header.width_given_while_hidden = self.note_button
        head.addWidget(self.note_button)
        lay.addLayout(head)
        self.body = _Body()
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        lay.addWidget(self.body)
        self.notes = FittedLabel()
        self.notes.setWordWrap(True)
        self.notes.setVisible(False)
        self.notes.setStyleSheet("color:#5d4037; font-style:italic;")
        lay.addWidget(self.notes)
        self.note_edit = _NoteEdit()
        self.note_edit.setVisible(False)
        self.note_edit.setToolTip("Enter saves the note; Escape closes it unsaved")
        self.note_edit.returnPressed.connect(self._submit_note)
        self.note_edit.cancelled.connect(self.close_note)
        lay.addWidget(self.note_edit)
        self._note_lines: list[str] = []
        self._highlighted: bool | None = None
        self.bind(msg, color)

    def bind(self, msg, color: str) -> None:
        """Show ``msg`` (a replay recycles message widgets instead of making new ones)."""
        self.msg = msg
        marks = []
        if msg.interruption:
            marks.append("<span style='color:#c62828'>⚡ interrupts</span>")
        if msg.system == 1:
            marks.append("<span style='color:#6a1b9a'>System-1 reply</span>")
        if msg.thought_id is not None:
            marks.append(f"<span style='color:#888'>thought #{msg.thought_id}</span>")
        if getattr(msg, "kind", "ai") == "simulated":  # a STORM simulated user (docs/spec.md §2)
            marks.append(f"<span style='color:#6a1b9a'>{SIMULATED_MARK}</span>")
        if msg.origin == "icebreaker":
            marks.append("<span style='color:#888'>icebreaker</span>")
        if getattr(msg, "forced", False):  # the user clicked the thought bubble
            marks.append("<span style='color:#e65100; font-weight:bold'>forced by you</span>")
        time = msg.at[11:19] if len(msg.at) >= 19 else msg.at
        self.header.setText(
            f"<span style='color:{color}; font-weight:bold'>{html.escape(msg.speaker)}</span> "
            f"<span style='color:#999'>#{msg.id} · {time}</span> " + " · ".join(marks)
        )
        self.body.show_text(msg.text)
        self.clear_notes()
        self.close_note()
        self.set_highlight(False)

    def clear_notes(self) -> None:
        if self._note_lines:
            self._note_lines = []
            self.notes.setVisible(False)

    def enable_notes(self, human: str) -> None:
        own = self.msg.speaker == human
        self.note_button.setVisible(True)
        self.note_button.setToolTip(
            "Add a private reason for sending this (only you see it)"
            if own
            else "Add your private reaction to this message (only you see it)"
        )
        self.note_edit.setPlaceholderText(
            "Why I sent this… (Enter to save)" if own else "How I took this… (Enter to save)"
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.note_button and event.type() in (QEvent.Type.Enter, QEvent.Type.Leave):
            self.note_pointed.emit(event.type() == QEvent.Type.Enter)
        return super().eventFilter(watched, event)

    def open_note(self) -> None:
        opened = self.note_edit.isHidden()
        self.note_edit.setVisible(True)
        self.note_edit.setFocus()
        if opened:
            self.note_editing.emit(True)

    def close_note(self) -> None:
        """Close the note editor (what was typed is dropped)."""
        self.note_edit.clear()
        if not self.note_edit.isHidden():
            self.note_edit.setVisible(False)
            self.note_editing.emit(False)

    def is_editing_note(self) -> bool:
        return not self.note_edit.isHidden()

    def _submit_note(self) -> None:
        text = self.note_edit.text().strip()
        if text:
            self.note_submitted.emit(self.msg.id, text)
        self.close_note()

    def add_note(self, kind: str, text: str, at: str, author: str | None = None) -> None:
        who = f"{html.escape(author)}'s private" if author else "private"
        self._note_lines.append(f"{who} {kind} ({at[11:19]}): {html.escape(text)}")
        self.notes.setText("<br>".join(self._note_lines))
        self.notes.setVisible(True)

    def set_highlight(self, on: bool) -> None:
        if on == self._highlighted:
            return
        self._highlighted = on
        bg = theme.HIGHLIGHT_BG if on else "white"
        self.setStyleSheet(f"#msg {{ background:{bg}; border-bottom:1px solid #eee; }}")


class MessageList(QListWidget):
    """The list of messages; it reports when its view gets wider or narrower.

    Attributes:
        placeholder: what the empty list says (hidden by the pane once a message is shown).
    """

    def __init__(self, width_changed: Callable[[], None]) -> None:
        super().__init__()
        self._width_changed = width_changed
        self.placeholder = QLabel(self.viewport())
        self.placeholder.setObjectName("emptyHint")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet("#emptyHint { color:#666; font-size:14px; padding:24px; }")

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.placeholder.setGeometry(self.viewport().rect())
        if event.size().width() != event.oldSize().width():
            self._width_changed()


class Composer(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    submitted = Signal(str)

    def setPlaceholderText(self, text: str) -> None:
        """Qt repaints the placeholder only when it appears or disappears, not when its text
        changes: an empty composer would go on showing the old text (e.g. "Join as a human…"
        after joining) until something else repainted it."""
        if text != self.placeholderText():
            super().setPlaceholderText(text)
            self.viewport().update()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            text = self.toPlainText().strip()
            if text:
                self.submitted.emit(text)
                self.clear()
            return
        super().keyPressEvent(event)
