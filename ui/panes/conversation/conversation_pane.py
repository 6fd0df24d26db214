"""The conversation: messages with speaker colour, time, turn and markers; the human's composer,
private notes (reasons / reactions) and one-click in-the-moment questions.

The rows of messages are its base's (:class:`ui.panes.conversation.message_rows.MessageRows`); this pane
adds what a person does below them, and says who is thinking and when the agents wait for them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QWidget,
)

from playground import domain
from playground.domain.refs import ref_id
from ui.bridge import EngineBridge
from ui.panes.conversation.message_rows import MessageRows
from ui.panes.conversation.message_widget import Composer
from ui.selection import SelectedParticipant
from ui.widgets.flow_layout import FlowLayout

QUESTION = domain.MOMENT_QUESTION
ANSWERS = list(domain.MOMENT_ANSWERS)
#: The composer's invitation before a person joins, once they have, and while the agents wait.
JOIN_PLACEHOLDER = "Join as a human to take part (Enter sends, Shift+Enter for a new line)"
MESSAGE_PLACEHOLDER = "Message as {name} (Enter sends, Shift+Enter for a new line)"
WAITING_PLACEHOLDER = "The agents are waiting for you, {name}: say something (Enter to send)"
#: Above the composer when the agents stop for the person (``loops.agent_streak``).
WAITING_TEXT = "Agents are waiting for you to speak ({n} agent messages in a row)"


class ConversationPane(MessageRows):
    """The overt conversation, plus everything the human participant does."""

    send_requested = Signal(str)
    label_requested = Signal(int, str, str)  # message id, question, answer

    def __init__(
        self,
        bridge: EngineBridge,
        selection: SelectedParticipant,
        colors: dict[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(colors, parent)
        self.thinking: set[str] = set()
        #: Messages that arrived while the view held still for a person typing (see holding()).
        self._unseen = 0
        self._waiting = 0  # agent messages in a row while the agents wait for the person
        lay = self.column
        self.list.model().modelReset.connect(self._forget_unseen)  # the list was cleared
        # While a person types, new messages do not scroll the view: this says they came.
        self.jump_button = QPushButton()
        self.jump_button.setToolTip("Show the latest message")
        self.jump_button.setStyleSheet("QPushButton { color:#1565c0; font-weight:bold; }")
        self.jump_button.clicked.connect(self.jump_to_latest)
        self.jump_button.hide()
        lay.addWidget(self.jump_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self.thinking_label = QLabel("")
        self.thinking_label.setStyleSheet("color:#b26a00; font-style:italic;")
        lay.addWidget(self.thinking_label)
        # The one-click question: inside the conversation column, its answers wrapping to
        # more rows when the column is narrow (it never widens the column, or the window).
        self.card = QFrame()
        self.card.setObjectName("questionCard")
        self.card.setStyleSheet(
            "#questionCard { background:#f3f0ff; border:1px solid #d1c4e9; border-radius:6px; }"
        )
        card_lay = QHBoxLayout(self.card)
        card_lay.setContentsMargins(8, 4, 4, 4)
        answers = QWidget()
        flow = FlowLayout(answers, spacing=6)
        self.card_label = QLabel()
        self.card_label.setMinimumHeight(24)
        flow.addWidget(self.card_label)
        self.card_buttons: list[QPushButton] = []
        for answer in ANSWERS:
            b = QPushButton(answer)
            b.setFlat(False)
            b.clicked.connect(lambda _=False, a=answer: self._answer(a))
            flow.addWidget(b)
            self.card_buttons.append(b)
        card_lay.addWidget(answers, 1)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close the question without answering")
        close.setAutoRaise(True)
        close.clicked.connect(self.card.hide)
        card_lay.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.card_close = close
        self.card.hide()
        self._card_message: int | None = None
        lay.addWidget(self.card)
        self.waiting_label = QLabel("")
        self.waiting_label.setObjectName("agentsWaiting")
        self.waiting_label.setWordWrap(True)
        self.waiting_label.setStyleSheet(
            "#agentsWaiting { background:#e3f2fd; color:#0d47a1; padding:4px;"
            " border:1px solid #90caf9; border-radius:4px; }"
        )
        self.waiting_label.hide()
        lay.addWidget(self.waiting_label)
        row = QHBoxLayout()
        self.composer = Composer()
        self.composer.setPlaceholderText(JOIN_PLACEHOLDER)
        self.composer.setFixedHeight(56)
        self.composer.setEnabled(False)
        self.composer.submitted.connect(self.send_requested)
        self.composer.textChanged.connect(self._hold_changed)
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

    def reset(self) -> None:
        super().reset()
        self._card_message = None
        self.thinking.clear()
        self.thinking_label.setText("")
        self.card.hide()
        self.set_human(None)

    def set_human(self, name: str | None) -> None:
        self.set_note_taker(name)
        self.composer.setEnabled(bool(name))
        self.send_button.setEnabled(bool(name))
        if not name:
            self._waiting = 0
            self.waiting_label.hide()
        self._update_placeholder()
        if not name:
            self.card.hide()

    def set_composer_visible(self, visible: bool) -> None:
        """Hide the composer where nobody can type (a replay)."""
        self.composer.setVisible(visible)
        self.send_button.setVisible(visible)
        self._hold_changed()

    def show_waiting(self, streak: int) -> None:
        """Say that the agents wait for the person to speak after ``streak`` agent messages in a
        row (0: they do not wait)."""
        self._waiting = streak if self.human else 0
        self.waiting_label.setText(WAITING_TEXT.format(n=self._waiting))
        self.waiting_label.setVisible(bool(self._waiting))
        self._update_placeholder()

    def _update_placeholder(self) -> None:
        name = self.human
        self.composer.setPlaceholderText(
            JOIN_PLACEHOLDER
            if not name
            else WAITING_PLACEHOLDER.format(name=name)
            if self._waiting
            else MESSAGE_PLACEHOLDER.format(name=name)
        )

    # -- holding the view still while a person types ---------------------------------------------

    def holding(self) -> bool:
        """True while a person types a message (the composer holds text) or a private note (an
        editor is open): new messages must not move the view under them."""
        drafting = not self.composer.isHidden() and bool(self.composer.toPlainText().strip())
        return drafting or super().holding()

    def _hold_changed(self) -> None:
        """Typing ended: show what arrived meanwhile."""
        if self._unseen and not self.holding():
            self.jump_to_latest()

    def jump_to_latest(self) -> None:
        """Scroll to the latest message (the "N new messages ↓" button)."""
        self._unseen = 0
        self.jump_button.hide()
        if self._fit_pending:
            self._fit()
        self.list.scrollToBottom()

    def _count_unseen(self) -> None:
        self._unseen += 1
        n = self._unseen
        self.jump_button.setText(f"{n} new message{'' if n == 1 else 's'} ↓")
        self.jump_button.show()

    def _forget_unseen(self) -> None:
        self._unseen = 0
        self.jump_button.hide()

    def _send_clicked(self) -> None:
        text = self.composer.toPlainText().strip()
        if text:
            self.send_requested.emit(text)
            self.composer.clear()

    def begin_rebuild(self, keep: int) -> None:
        self.thinking.clear()
        self.thinking_label.setText("")
        self.card.hide()
        super().begin_rebuild(keep)

    def _posted(self, msg) -> bool:
        if not super()._posted(msg):
            return False
        if self.follow_latest and self.holding():
            self._count_unseen()
        if self.human and msg.kind == "ai":
            self._ask(msg)
        elif self.card.isVisible() and msg.speaker == self.human:
            self.card.hide()
        return True

    def _ask(self, msg) -> None:
        self._card_message = msg.id
        self.card_label.setText(QUESTION.format(speaker=msg.speaker))
        self.card.show()

    def _answer(self, answer: str) -> None:
        if self._card_message is not None:
            self.label_requested.emit(self._card_message, self.card_label.text(), answer.lower())
        self.card.hide()

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

    def _focus_ref(self, ref: str) -> None:
        message_id = ref_id(ref, "message")
        if message_id is not None:
            self.focus_message(message_id)
        elif not ref and self._focused is not None:
            self.focus_message(-1)
