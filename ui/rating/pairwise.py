"""Pairwise preference: two blind conversations, the rater picks the more natural one and says why."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ui.rating.blind_view import BlindConversationView, BlindMessage

WIDE = 1200  # px: side by side from this window width, one above the other below it
NAMES = ("A", "B")


class PairwiseView(QWidget):
    """Two conversations shown in the order given (A first), a choice and a required reason.

    ``submitted(index, reason)`` gives 0 for the first conversation, 1 for the second;
    ``mark_changed(index, message id, marked, comment)`` relays unnatural-turn marks.
    """

    submitted = Signal(int, str)
    mark_changed = Signal(int, int, bool, str)

    def __init__(self, parent: QWidget | None = None, *, cps: int | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.views: list[BlindConversationView] = []
        for i in range(2):
            v = BlindConversationView(cps=cps)
            v.mark_changed.connect(
                lambda mid, on, comment, i=i: self.mark_changed.emit(i, mid, on, comment)
            )
            v.finished.connect(self._update)
            self.views.append(v)
            self.splitter.addWidget(v)
        self.views[0].finished.connect(self._first_done)
        lay.addWidget(self.splitter, 1)

        choice = QWidget()
        choice.setObjectName("choice")
        choice.setStyleSheet("#choice { background:#f7f7fb; border-top:1px solid #ddd; }")
        cl = QVBoxLayout(choice)
        cl.setContentsMargins(8, 6, 8, 6)
        cl.addWidget(
            QLabel("<b>Which conversation felt more natural and human-like?</b> Say why below.")
        )
        row = QHBoxLayout()
        self.group = QButtonGroup(self)
        self.options: list[QRadioButton] = []
        for i, name in enumerate(NAMES):
            b = QRadioButton(f"Conversation {name}")
            self.group.addButton(b, i)
            self.options.append(b)
            row.addWidget(b)
        row.addStretch(1)
        cl.addLayout(row)
        self.reason = QPlainTextEdit()
        self.reason.setPlaceholderText(
            "Why? (required) e.g. who spoke when, how replies followed on…"
        )
        self.reason.setFixedHeight(54)
        self.reason.setAccessibleName("Reason for your choice")
        cl.addWidget(self.reason)
        bottom = QHBoxLayout()
        self.hint = QLabel("")
        self.hint.setWordWrap(True)
        bottom.addWidget(self.hint, 1)
        self.submit = QPushButton("Submit choice")
        self.submit.clicked.connect(self._submit)
        bottom.addWidget(self.submit)
        cl.addLayout(bottom)
        lay.addWidget(choice)
        self.group.idClicked.connect(lambda _i: self._update())
        self.reason.textChanged.connect(self._clear_error)
        self._error = False
        self._update()

    def load(
        self,
        first: list[BlindMessage],
        second: list[BlindMessage],
        marks: tuple[dict[int, str], dict[int, str]] = ({}, {}),
    ) -> None:
        """Show a new pair; nothing chosen; the first conversation starts typing."""
        for i, (view, msgs) in enumerate(zip(self.views, (first, second), strict=True)):
            view.load(msgs, f"Conversation {NAMES[i]}", marks[i])
        self.group.setExclusive(False)
        for b in self.options:
            b.setChecked(False)
        self.group.setExclusive(True)
        self.reason.clear()
        self._error = False
        self._update()
        self.views[0].play()

    def choose(self, index: int, reason: str) -> None:
        """Pick a conversation and write the reason (as the rater would)."""
        self.options[index].click()
        self.reason.setPlainText(reason)

    @property
    def both_shown(self) -> bool:
        return all(v.complete for v in self.views)

    def _first_done(self) -> None:
        if not self.views[1].complete:
            self.views[1].play()

    def _clear_error(self) -> None:
        if self._error:
            self._error = False
            self._update()

    def _update(self) -> None:
        chosen = self.group.checkedId() in (0, 1)
        self.submit.setEnabled(self.both_shown and chosen)
        if self._error:
            return
        self.hint.setStyleSheet("color:#555;")
        if not self.both_shown:
            self.hint.setText("Watch both conversations to the end (or use “Show all”) first.")
        elif not chosen:
            self.hint.setText("Choose the conversation that felt more natural.")
        else:
            self.hint.setText("Write why, then submit.")

    def _submit(self) -> None:
        index = self.group.checkedId()
        reason = self.reason.toPlainText().strip()
        if index not in (0, 1) or not self.both_shown:
            return
        if not reason:
            self._error = True
            self.hint.setStyleSheet("color:#c62828;")
            self.hint.setText("Please write why you chose it: a reason is required.")
            self.reason.setFocus()
            return
        self.submitted.emit(index, reason)

    def show_error(self, text: str) -> None:
        self._error = True
        self.hint.setStyleSheet("color:#c62828;")
        self.hint.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        wide = self.window().width() >= WIDE
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
            size = self.splitter.width() if wide else self.splitter.height()
            self.splitter.setSizes([size // 2, size - size // 2])
