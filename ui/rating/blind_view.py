"""Blind replay of one saved conversation: speaker names and text only, typed at human speed."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from playground.settings import RoomSettings
from playground.storage import SessionReader, library
from ui import theme
from ui.widgets.tool_window import button, white_page
from ui.widgets.typewriter import Typewriter

FLAG_OFF = "⚑ Unnatural?"
FLAG_ON = "⚑ Marked unnatural"


@dataclass(frozen=True)
class BlindMessage:
    """What a rater may see of one message."""

    id: int
    speaker: str
    text: str


def resolve_session(db: Any, session_id: str) -> str:
    """The full id of a session given its id or a unique prefix.

    Raises:
        SessionNotFound: no such session, or the prefix is ambiguous.
    """
    return SessionReader(db).resolve(session_id)  # a literal prefix: `%` is not a wildcard


def load_blind_messages(db: Any, session_id: str) -> list[BlindMessage]:
    """The messages of one session, reduced to id, speaker and text (nothing else is read).

    Raises:
        SessionNotFound: no such session.
    """
    sid = resolve_session(db, session_id)
    return [
        BlindMessage(int(i), str(speaker), str(text))
        for i, speaker, text in library.message_lines(db, sid)
    ]


def default_cps() -> int:
    """The app's human typing speed, in characters per second."""
    return max(1, round(RoomSettings().typing_cps))


class MessageCard(QFrame):
    """One message as a rater sees it, with a flag for unnatural turn-taking and a comment line."""

    mark_changed = Signal(int, bool, str)  # message id, marked, comment

    def __init__(self, msg: BlindMessage, color: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.msg = msg
        self.setObjectName("card")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(2)
        head = QHBoxLayout()
        self.speaker = QLabel(
            f"<span style='color:{color}; font-weight:bold'>{html.escape(msg.speaker)}</span>"
        )
        head.addWidget(self.speaker, 1)
        self.flag = QToolButton()
        self.flag.setText(FLAG_OFF)
        self.flag.setCheckable(True)
        self.flag.setAutoRaise(True)
        self.flag.setToolTip("Mark this message if the turn-taking felt unnatural here")
        self.flag.setAccessibleName("Mark turn-taking as unnatural")
        self.flag.toggled.connect(self._toggled)
        head.addWidget(self.flag)
        lay.addLayout(head)
        self.body = QLabel("")
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.body)
        self.comment = QLineEdit()
        self.comment.setPlaceholderText("What felt unnatural? (optional, Enter to save)")
        self.comment.setVisible(False)
        self.comment.editingFinished.connect(self._comment_done)
        lay.addWidget(self.comment)
        self._saved_comment = ""
        self._style()

    @property
    def marked(self) -> bool:
        return self.flag.isChecked()

    def show_chars(self, n: int) -> None:
        """Show the first ``n`` characters of the text."""
        self.body.setText(self.msg.text[:n])

    def set_mark(self, marked: bool, comment: str = "") -> None:
        """Restore a saved mark without emitting ``mark_changed``."""
        self.flag.blockSignals(True)
        self.flag.setChecked(marked)
        self.flag.blockSignals(False)
        self._saved_comment = comment if marked else ""
        self.comment.setText(self._saved_comment)
        self._refresh()

    def _toggled(self, on: bool) -> None:
        self._refresh()
        if on:
            self.comment.setFocus()
        else:
            self.comment.clear()
        self._saved_comment = self.comment.text().strip() if on else ""
        self.mark_changed.emit(self.msg.id, on, self._saved_comment)

    def _comment_done(self) -> None:
        text = self.comment.text().strip()
        if self.marked and text != self._saved_comment:
            self._saved_comment = text
            self.mark_changed.emit(self.msg.id, True, text)

    def _refresh(self) -> None:
        on = self.flag.isChecked()
        self.flag.setText(FLAG_ON if on else FLAG_OFF)
        self.comment.setVisible(on)
        self._style()

    def _style(self) -> None:
        bg = "#fff3e0" if self.flag.isChecked() else "white"
        self.setStyleSheet(
            f"#card {{ background:{bg}; border-bottom:1px solid #eee; }}"
            "QToolButton:checked { color:#e65100; font-weight:bold; }"
        )


class BlindConversationView(QWidget):
    """Replays one conversation, a message at a time, at a chosen number of characters per second.

    The caller hands over :class:`BlindMessage` rows only. ``finished`` fires once every message is
    fully shown (played through or "Show all"); ``mark_changed`` when the rater flags a message.
    """

    finished = Signal()
    mark_changed = Signal(int, bool, str)  # message id, marked, comment

    def __init__(self, parent: QWidget | None = None, *, cps: int | None = None) -> None:
        super().__init__(parent)
        self.messages: list[BlindMessage] = []
        self.cards: list[MessageCard] = []
        self._colors: dict[str, str] = {}
        self._marks: dict[int, str] = {}
        self._typing = -1  # index of the card being typed, or -1
        self._base = 0  # characters of that card shown before the latest (re)start
        self._playing = False
        self.complete = False
        self.typewriter = Typewriter(self)
        self.typewriter.progressed.connect(self._progress)
        self.typewriter.finished.connect(self._message_done)
        self._gap = QTimer(self)
        self._gap.setSingleShot(True)
        self._gap.timeout.connect(self._next)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        top = QHBoxLayout()
        self.title = QLabel("<b>Conversation</b>")
        top.addWidget(self.title, 1)
        self.play_button = button("Pause", "Pause or resume the typing", self.toggle)
        top.addWidget(self.play_button)
        self.show_all_button = button(
            "Show all", "Show the rest of the conversation at once", self.show_all
        )
        top.addWidget(self.show_all_button)
        top.addWidget(QLabel("Speed"))
        self.speed = QSpinBox()
        self.speed.setRange(1, 1000)
        self.speed.setSuffix(" chars/s")
        self.speed.setValue(cps or default_cps())
        self.speed.setToolTip("Typing speed in characters per second")
        self.speed.setAccessibleName("Typing speed")
        self.speed.valueChanged.connect(self.set_cps)
        top.addWidget(self.speed)
        lay.addLayout(top)

        self.scroll_area, inner = white_page("blindInner")
        self._list = QVBoxLayout(inner)
        self._list.setContentsMargins(0, 0, 0, 0)
        self._list.setSpacing(0)
        self._list.addStretch(1)
        self.scroll_area.setWidget(inner)
        self._stick = True  # follow the newest text while the rater stays at the bottom
        bar = self.scroll_area.verticalScrollBar()
        bar.rangeChanged.connect(self._follow)
        bar.valueChanged.connect(lambda v: setattr(self, "_stick", v >= bar.maximum() - 8))
        lay.addWidget(self.scroll_area, 1)
        self.status = QLabel("")
        self.status.setStyleSheet("color:#666;")
        lay.addWidget(self.status)

    # -- loading and control ------------------------------------------------------------------------

    def load(
        self, messages: list[BlindMessage], title: str, marks: dict[int, str] | None = None
    ) -> None:
        """Show a new conversation (nothing typed yet); ``marks`` are the rater's saved marks."""
        self.stop()
        for card in self.cards:
            card.deleteLater()
        self.cards = []
        self.messages = list(messages)
        self._marks = dict(marks or {})
        self._colors = {}
        for m in self.messages:
            if m.speaker not in self._colors:
                self._colors[m.speaker] = theme.color_for(len(self._colors))
        self.title.setText(f"<b>{html.escape(title)}</b>")
        self.complete = not self.messages
        self._typing = -1
        self._stick = True
        self._update_status()

    def play(self) -> None:
        """Start or resume typing."""
        if self.complete:
            return
        self._playing = True
        self.play_button.setText("Pause")
        if self._typing >= 0:
            card = self.cards[self._typing]
            self._base = len(card.body.text())
            self.typewriter.start(len(card.msg.text) - self._base, self.speed.value())
        elif not self._gap.isActive():
            self._next()

    def pause(self) -> None:
        """Stop typing; the text shown so far stays."""
        self._playing = False
        self.play_button.setText("Play")
        self.typewriter.stop()
        self._gap.stop()

    def toggle(self) -> None:
        if self._playing:
            self.pause()
        else:
            self.play()

    def stop(self) -> None:
        self.pause()

    @property
    def playing(self) -> bool:
        return self._playing

    def set_cps(self, cps: int) -> None:
        """Change the typing speed, also mid-message."""
        if self.speed.value() != cps:
            self.speed.setValue(cps)  # comes back here through valueChanged
            return
        self.typewriter.set_cps(cps)

    def show_all(self) -> None:
        """Reveal every remaining message at once."""
        self.typewriter.stop()
        self._gap.stop()
        if self._typing >= 0:
            self.cards[self._typing].show_chars(len(self.cards[self._typing].msg.text))
        while len(self.cards) < len(self.messages):
            self._add_card(self.messages[len(self.cards)]).show_chars(10**9)
        self._typing = -1
        self._finish()

    # -- typing -------------------------------------------------------------------------------------

    def _add_card(self, msg: BlindMessage) -> MessageCard:
        card = MessageCard(msg, self._colors.get(msg.speaker, "#333"))
        if msg.id in self._marks:
            card.set_mark(True, self._marks[msg.id])
        card.mark_changed.connect(self._mark)
        self._list.insertWidget(self._list.count() - 1, card)
        self.cards.append(card)
        self._update_status()
        return card

    def _next(self) -> None:
        if not self._playing or self.complete:
            return
        if len(self.cards) >= len(self.messages):
            self._finish()
            return
        self._typing = len(self.cards)
        card = self._add_card(self.messages[self._typing])
        self._base = 0
        self.typewriter.start(len(card.msg.text), self.speed.value())

    def _progress(self, n: int) -> None:
        if self._typing >= 0:
            self.cards[self._typing].show_chars(self._base + n)

    def _message_done(self) -> None:
        if self._typing < 0:
            return
        self._typing = -1
        if len(self.cards) >= len(self.messages):
            self._finish()
        elif self._playing:
            # A short reading pause between messages, as long as typing a few words would take.
            self._gap.start(int(min(1000, max(40, 20_000 / self.speed.value()))))

    def _finish(self) -> None:
        self._playing = False
        self.play_button.setText("Play")
        already = self.complete
        self.complete = True
        self._update_status()
        if not already:
            self.finished.emit()

    def _mark(self, message_id: int, marked: bool, comment: str) -> None:
        if marked:
            self._marks[message_id] = comment
        else:
            self._marks.pop(message_id, None)
        self._update_status()
        self.mark_changed.emit(message_id, marked, comment)

    def _update_status(self) -> None:
        self.play_button.setEnabled(not self.complete)
        self.show_all_button.setEnabled(not self.complete)
        marks = len(self._marks)
        mark_text = f" · {marks} marked unnatural" if marks else ""
        if self.complete:
            self.status.setText(
                f"End of the conversation ({len(self.messages)} messages){mark_text}"
            )
        else:
            self.status.setText(f"Message {len(self.cards)} of {len(self.messages)}{mark_text}")

    def _follow(self, _min: int, maximum: int) -> None:
        if self._stick:
            self.scroll_area.verticalScrollBar().setValue(maximum)

    def texts(self) -> list[str]:
        """The text shown so far in each card (for tests and screenshots)."""
        return [c.body.text() for c in self.cards]
