"""The conversation: messages with speaker colour, time, turn and markers; the human's composer,
private notes (reasons / reactions) and one-click in-the-moment questions."""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ui import theme
from ui.bridge import EngineBridge
from ui.deferred import Deferred
from ui.selection import SelectedParticipant

QUESTION = "How did you take {speaker}'s message?"
ANSWERS = ["Interesting", "Helpful", "Off-topic", "Too pushy", "Not sure"]


#: Most messages on screen. Each is a widget; a long session keeps its latest ones (the title
#: says how many exist), so the window stays fast at a thousand messages.
MAX_MESSAGES = 150
#: Messages laid out when a replay jumps to another moment: the ones just before it. Playing or
#: stepping on adds messages again (up to MAX_MESSAGES).
JUMP_MESSAGES = 40


def _fitted(w: QWidget) -> QSize:
    """The size a message needs at its fixed width: wrapped text gets the height it wraps to,
    not the taller height a narrower default width would give. (Its full size hint is not
    needed, and costs several times more: the header is rich text.)"""
    if w.hasHeightForWidth():
        return QSize(w.width(), w.heightForWidth(w.width()))
    return w.sizeHint()


class MessageWidget(QFrame):
    """One message, with the human's private notes underneath (shown only to them)."""

    note_submitted = Signal(int, str)

    def __init__(self, msg, color: str, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.msg = msg
        self.setObjectName("msg")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 5, 8, 5)
        lay.setSpacing(2)
        head = QHBoxLayout()
        self.header = QLabel()
        head.addWidget(self.header, 1)
        self.note_button = QToolButton()
        self.note_button.setText("✎ note")
        self.note_button.setAutoRaise(True)
        self.note_button.setVisible(False)
        self.note_button.clicked.connect(self.open_note)
        head.addWidget(self.note_button)
        lay.addLayout(head)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.body)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setVisible(False)
        self.notes.setStyleSheet("color:#5d4037; font-style:italic;")
        lay.addWidget(self.notes)
        self.note_edit = QLineEdit()
        self.note_edit.setVisible(False)
        self.note_edit.returnPressed.connect(self._submit_note)
        lay.addWidget(self.note_edit)
        self._note_lines: list[str] = []
        self._highlighted: bool | None = None
        self.bind(msg, color)

    def bind(self, msg, color: str) -> None:  # noqa: ANN001
        """Show ``msg`` (a replay recycles message widgets instead of making new ones)."""
        self.msg = msg
        marks = []
        if msg.interruption:
            marks.append("<span style='color:#c62828'>⚡ interrupts</span>")
        if msg.system == 1:
            marks.append("<span style='color:#6a1b9a'>System-1 reply</span>")
        if msg.thought_id is not None:
            marks.append(f"<span style='color:#888'>thought #{msg.thought_id}</span>")
        if msg.origin == "icebreaker":
            marks.append("<span style='color:#888'>icebreaker</span>")
        time = msg.at[11:19] if len(msg.at) >= 19 else msg.at
        self.header.setText(
            f"<span style='color:{color}; font-weight:bold'>{html.escape(msg.speaker)}</span> "
            f"<span style='color:#999'>#{msg.id} · {time}</span> " + " · ".join(marks)
        )
        self.body.setText(msg.text)
        self.clear_notes()
        self.note_edit.setVisible(False)
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

    def open_note(self) -> None:
        self.note_edit.setVisible(True)
        self.note_edit.setFocus()

    def _submit_note(self) -> None:
        text = self.note_edit.text().strip()
        if text:
            self.note_submitted.emit(self.msg.id, text)
        self.note_edit.clear()
        self.note_edit.setVisible(False)

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


class Composer(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    submitted = Signal(str)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
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


class ConversationPane(QWidget):
    """The overt conversation, plus everything the human participant does."""

    send_requested = Signal(str)
    note_requested = Signal(int, str)  # message id, text
    label_requested = Signal(int, str, str)  # message id, question, answer

    def __init__(
        self,
        bridge: EngineBridge,
        selection: SelectedParticipant,
        colors: dict[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.colors = colors
        self.human: str | None = None
        self._widgets: dict[int, MessageWidget] = {}
        # After a replay jump, until the deferred fill: rows (above the view) whose widget still
        # shows an earlier message, and the notes that belong on them.
        self._unbound: dict[int, object] = {}
        self._unbound_notes: list = []
        self._fill = Deferred(self._fill_rows, self)
        self.items: dict[int, QListWidgetItem] = {}
        self.thinking: set[str] = set()
        self._unfitted: set[int] = set()
        self._pending: list = []
        self._rebuilding = False
        self._keep = 0
        self._pending_notes: list = []
        # Hidden rows (item, widget) after the shown ones, in row order, for reuse.
        self._spare: list[tuple[QListWidgetItem, MessageWidget]] = []
        #: Show every participant's private notes (a researcher replaying a session), not only
        #: the human's own.
        self.all_notes = False
        self._focused: int | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("<b>Conversation</b>")
        lay.addWidget(self.title)
        self.list = QListWidget()
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        lay.addWidget(self.list, 1)
        self.thinking_label = QLabel("")
        self.thinking_label.setStyleSheet("color:#b26a00; font-style:italic;")
        lay.addWidget(self.thinking_label)
        self.card = QFrame()
        self.card.setStyleSheet(
            "QFrame { background:#f3f0ff; border:1px solid #d1c4e9; border-radius:6px; }"
        )
        card_lay = QHBoxLayout(self.card)
        card_lay.setContentsMargins(8, 4, 8, 4)
        self.card_label = QLabel()
        card_lay.addWidget(self.card_label)
        self.card_buttons: list[QPushButton] = []
        for answer in ANSWERS:
            b = QPushButton(answer)
            b.setFlat(False)
            b.clicked.connect(lambda _=False, a=answer: self._answer(a))
            card_lay.addWidget(b)
            self.card_buttons.append(b)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.card.hide)
        card_lay.addWidget(close)
        self.card.hide()
        self._card_message: int | None = None
        lay.addWidget(self.card)
        row = QHBoxLayout()
        self.composer = Composer()
        self.composer.setPlaceholderText(
            "Join as a human to take part (Enter sends, Shift+Enter for a new line)"
        )
        self.composer.setFixedHeight(56)
        self.composer.setEnabled(False)
        self.composer.submitted.connect(self.send_requested)
        self.send_button = QPushButton("Send")
        self.send_button.setEnabled(False)
        self.send_button.clicked.connect(self._send_clicked)
        row.addWidget(self.composer, 1)
        row.addWidget(self.send_button)
        lay.addLayout(row)
        bridge.message_posted.connect(self._posted)
        bridge.state_changed.connect(self._state)
        bridge.annotation_added.connect(self._annotation)
        selection.stimulus_focused.connect(self._focus_ref)

    @property
    def widgets(self) -> dict[int, MessageWidget]:
        """The message widgets on screen, by message id (finishing any deferred work first)."""
        self.settle()
        return self._widgets

    def settle(self) -> None:
        """Finish any work put off after a replay jump (rows above the view)."""
        self._fill.flush()

    def reset(self) -> None:
        self._fill.cancel()
        self._unbound.clear()
        self._unbound_notes.clear()
        self.list.clear()
        self._widgets.clear()
        self.items.clear()
        self._spare.clear()
        self._unfitted.clear()
        self._trim()
        self.thinking.clear()
        self.thinking_label.setText("")
        self.card.hide()
        self.set_human(None)

    def set_human(self, name: str | None) -> None:
        self.human = name
        self.composer.setEnabled(bool(name))
        self.send_button.setEnabled(bool(name))
        self.composer.setPlaceholderText(
            f"Message as {name} (Enter sends, Shift+Enter for a new line)"
            if name
            else "Join as a human to take part (Enter sends, Shift+Enter for a new line)"
        )
        for w in self._widgets.values():
            if name:
                w.enable_notes(name)
            else:
                w.note_button.setVisible(False)
        if not name:
            self.card.hide()

    def set_composer_visible(self, visible: bool) -> None:
        """Hide the composer where nobody can type (a replay)."""
        self.composer.setVisible(visible)
        self.send_button.setVisible(visible)

    def messages(self) -> list[tuple[str, str]]:
        self.settle()
        return [(w.msg.speaker, w.msg.text) for w in self._widgets.values()]

    def _send_clicked(self) -> None:
        text = self.composer.toPlainText().strip()
        if text:
            self.send_requested.emit(text)
            self.composer.clear()

    def begin_rebuild(self, keep: int) -> None:
        """A replay jumps: keep messages up to ``keep``; the messages published until
        :meth:`end_rebuild` are collected and laid out once, the last :data:`JUMP_MESSAGES`."""
        self._keep = keep
        for w in self._widgets.values():
            w.clear_notes()  # the rebuild brings every note again
        self._pending_notes = []
        if self._focused is not None and self._focused > keep:
            self._focused = None
        self.thinking.clear()
        self.thinking_label.setText("")
        self.card.hide()
        self._pending = []
        self._rebuilding = True

    def end_rebuild(self) -> None:
        self._rebuilding = False
        self._fill.cancel()  # the rows it would have bound are taken over below
        pending, self._pending = self._pending, []
        unbound, self._unbound = self._unbound, {}
        msgs = {
            w.msg.id: w.msg
            for mid, w in self._widgets.items()
            if mid <= self._keep and mid not in unbound
        }
        msgs.update((mid, m) for mid, m in unbound.items() if mid <= self._keep)
        msgs.update((m.id, m) for m in pending)
        final = sorted(msgs)[-JUMP_MESSAGES:]
        # Rows stay in id order. Each row's widget is rebound to the message that row now shows,
        # so a jump costs a few label updates per message instead of new widgets.
        rows = [(self.items[m], self._widgets[m]) for m in sorted(self._widgets)]
        self._widgets.clear()
        self.items.clear()
        stale = []
        for r, mid in enumerate(final):
            if r < len(rows):
                item, w = rows[r]
                self._widgets[mid] = w
                self.items[mid] = item
                if w.msg.id != mid or mid in unbound:
                    stale.append(mid)
            else:
                self._add(msgs[mid])
        # The rows in view (from the bottom up, as far as the view reaches) are rebound and
        # measured now; the ones above them by the deferred fill.
        room = self.list.viewport().height()
        for mid in reversed(final):
            if room <= 0:
                self._unbound.update((m, msgs[m]) for m in stale if m <= mid)
                break
            if stale and stale[-1] == mid:
                stale.pop()
                self._bind(mid, msgs[mid])
                self._unfitted.discard(mid)
                room -= self._measure(mid)
            else:
                room -= self.items[mid].sizeHint().height()
        # Rows no longer needed are hidden, not removed: removing a row deletes its widget, and
        # the next jump forward would have to make it again.
        self._spare = rows[len(final) :] + self._spare
        for item, _w in rows[len(final) :]:
            item.setHidden(True)
        notes, self._pending_notes = self._pending_notes, []
        self._unbound_notes = [e for e in notes if e.message_id in self._unbound]
        for e in notes:
            if e.message_id not in self._unbound:
                self._annotation(e)
        self._trim()
        if self._unbound:
            self._fill.schedule()

    def _bind(self, mid: int, msg) -> None:  # noqa: ANN001
        self._widgets[mid].bind(msg, self.colors.get(msg.speaker, "#333"))
        if not self._unfitted:
            QTimer.singleShot(0, self, self._fit)
        self._unfitted.add(mid)

    def _measure(self, mid: int) -> int:
        """Size a row to its message now; its height."""
        w = self._widgets[mid]
        w.setFixedWidth(max(200, self.list.viewport().width() - 4))
        size = _fitted(w)
        self.items[mid].setSizeHint(size)
        return size.height()

    def _fill_rows(self) -> None:
        unbound, self._unbound = self._unbound, {}
        for mid, msg in unbound.items():
            if mid in self._widgets:
                self._bind(mid, msg)
        notes, self._unbound_notes = self._unbound_notes, []
        for e in notes:
            self._annotation(e)
        self._fit()

    def _remove(self, mid: int) -> None:
        item = self.items.pop(mid)
        self._widgets.pop(mid)
        self.list.takeItem(self.list.row(item))

    def _trim(self) -> None:
        """At most MAX_MESSAGES message widgets: the oldest go (the title says how many)."""
        while len(self._widgets) > MAX_MESSAGES:
            self._remove(min(self._widgets))
        shown = len(self._widgets)
        total = max(self._widgets, default=0)  # message ids are turn numbers: 1, 2, 3…
        self.title.setText(
            "<b>Conversation</b>"
            + (
                f" <span style='color:#888'>— the last {shown} of {total} messages</span>"
                if total > shown
                else ""
            )
        )

    def _posted(self, msg) -> None:  # noqa: ANN001
        if self._rebuilding:
            if msg.id > self._keep or msg.id not in self._widgets:  # not already on screen
                self._pending.append(msg)
            return
        self.settle()
        if msg.id in self._widgets:
            return
        self._add(msg)
        self._trim()
        if self.human and msg.kind == "ai":
            self._ask(msg)
        elif self.card.isVisible() and msg.speaker == self.human:
            self.card.hide()

    def _add(self, msg) -> None:  # noqa: ANN001
        color = self.colors.get(msg.speaker, "#333")
        if self._spare:  # a hidden row left by a replay jump: show it again with this message
            item, w = self._spare.pop(0)
            w.bind(msg, color)
            item.setHidden(False)
        else:
            w = MessageWidget(msg, color)
            w.note_submitted.connect(self.note_requested)
            item = QListWidgetItem()
            self.list.addItem(item)
            self.list.setItemWidget(item, w)
        if self.human:
            w.enable_notes(self.human)
        self._widgets[msg.id] = w
        self.items[msg.id] = item
        # Size new messages once laid out, all in one go. The pane is the timer's context: no
        # call after it is gone; _fit looks items up again, since a reset deletes them.
        if not self._unfitted:
            QTimer.singleShot(0, self, self._fit)
        self._unfitted.add(msg.id)

    def _fit(self) -> None:
        for mid in self._unfitted:
            if mid in self.items:
                self._measure(mid)
        self._unfitted.clear()
        self.list.scrollToBottom()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        for mid in self.items:
            self._measure(mid)

    def _ask(self, msg) -> None:  # noqa: ANN001
        self._card_message = msg.id
        self.card_label.setText(QUESTION.format(speaker=msg.speaker))
        self.card.show()

    def _answer(self, answer: str) -> None:
        if self._card_message is not None:
            self.label_requested.emit(self._card_message, self.card_label.text(), answer.lower())
        self.card.hide()

    def _annotation(self, e) -> None:  # noqa: ANN001
        if self._rebuilding:
            self._pending_notes.append(e)
            return
        self.settle()
        w = self._widgets.get(e.message_id)
        if w is not None and (e.author == self.human or self.all_notes):
            w.add_note(e.note_kind, e.text, e.at, e.author if self.all_notes else None)
            self._refit(e.message_id)

    def reveal(self, message_id: int, chars: int | None) -> None:
        """Show only the first ``chars`` characters of a message, as if being typed (replay);
        ``None`` shows all of it."""
        self.settle()
        w = self._widgets.get(message_id)
        if w is None:
            return
        text = w.msg.text
        typing = chars is not None and chars < len(text)
        w.body.setText(text[:chars] + "▍" if typing else text)
        self._refit(message_id)
        if message_id in self.items:
            self.list.scrollToItem(self.items[message_id])

    def _refit(self, message_id: int) -> None:
        if message_id in self.items:
            self.items[message_id].setSizeHint(_fitted(self._widgets[message_id]))

    def _state(self, name: str, state: str) -> None:
        if state == "thinking":
            self.thinking.add(name)
        else:
            self.thinking.discard(name)
        names = sorted(self.thinking)
        if not names:
            self.thinking_label.setText("")
        else:
            who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            self.thinking_label.setText(f"{who} {'is' if len(names) == 1 else 'are'} thinking…")

    def focus_message(self, message_id: int) -> None:
        self.settle()
        if self._focused in self._widgets:
            self._widgets[self._focused].set_highlight(False)
        self._focused = message_id if message_id in self._widgets else None
        if self._focused is not None:
            self._widgets[message_id].set_highlight(True)
            self.list.scrollToItem(self.items[message_id])

    def _focus_ref(self, ref: str) -> None:
        if ref.startswith("message:"):
            self.focus_message(int(ref.split(":")[1]))
        elif not ref and self._focused is not None:
            self.focus_message(-1)
