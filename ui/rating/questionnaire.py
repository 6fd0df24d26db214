"""The human participant's questionnaire (the user study's 10 statements) and a picker of sessions
a person joined."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.rating.store import PARTICIPANT_ITEMS, RatingStore
from playground.storage import library
from ui.dialogs.common import intro_label
from ui.rating.forms import LikertForm
from ui.screen_fit import fit_window
from ui.theme import show_warning


class QuestionnaireDialog(QDialog):
    """Ten statements about the AI participants, 1 (strongly disagree) to 7 (strongly agree).

    Saving stores the answers with ``RatingStore.answer_questionnaire``; errors stay in the dialog.
    """

    saved = Signal(str, str)  # session id, respondent

    def __init__(
        self, db: Any, session_id: str, respondent: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("How was the conversation?")
        fit_window(self, (720, 760))  # its statements scroll on a short screen
        self.store = RatingStore(db)
        self.session_id = session_id
        lay = QVBoxLayout(self)
        lay.addWidget(
            intro_label(
                "<b>You took part in this conversation.</b> How much do you agree with each "
                "statement about the AI participants? Your answers are saved with the session."
            )
        )
        form = QFormLayout()
        self.respondent = QLineEdit(respondent)
        self.respondent.setPlaceholderText("your name, as in the conversation")
        self.respondent.textChanged.connect(self._update)
        form.addRow("Your name", self.respondent)
        lay.addLayout(form)
        self.form = LikertForm(PARTICIPANT_ITEMS)
        self.form.changed.connect(self._update)
        lay.addWidget(self.form, 1)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        lay.addWidget(self.message)
        self.buttons = QDialogButtonBox()
        self.save_button = QPushButton("Save answers")
        self.buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton("Not now", QDialogButtonBox.ButtonRole.RejectRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        if respondent.strip():
            try:
                self.form.set_values(self.store.questionnaire(session_id, respondent))
            except errors.PlaygroundError as exc:
                self._error(str(exc))
        self._update()

    def _update(self) -> None:
        name = bool(self.respondent.text().strip())
        self.save_button.setEnabled(self.form.missing() == 0 and name)
        self.message.setStyleSheet("color:#555;")
        self.message.setText(self.form.progress_text() if name else "Enter your name.")

    def _error(self, text: str) -> None:
        show_warning(self.message, text)

    def accept(self) -> None:
        """Save, then close; on an error the dialog stays open with the message."""
        respondent = self.respondent.text()
        try:
            self.store.answer_questionnaire(self.session_id, respondent, self.form.values())
        except errors.PlaygroundError as exc:
            self._error(str(exc))
            return
        self.saved.emit(self.session_id, respondent.strip())
        super().accept()


class JoinedSessionPicker(QDialog):
    """Pick a session a person joined; the questionnaire then opens for that person."""

    def __init__(self, db: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Questionnaire for a session I joined")
        fit_window(self, (620, 420))
        self.db = db
        self.questionnaire: QuestionnaireDialog | None = None
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Sessions with a human participant:"))
        self.list = QListWidget()
        for s in library.human_sessions(db):
            when = str(s["created_at"])[:16].replace("T", " ")
            item = QListWidgetItem(
                f"{when} · {s['human']} with {s['others'] or 'nobody else'}  ({s['id']})"
            )
            item.setData(Qt.ItemDataRole.UserRole, (s["id"], s["human"]))
            self.list.addItem(item)
        self.list.itemDoubleClicked.connect(lambda _i: self.accept())
        lay.addWidget(self.list, 1)
        self.empty = QLabel(
            "No session has a human participant yet. Use “Join as human…” in a session first."
        )
        self.empty.setWordWrap(True)
        self.empty.setVisible(self.list.count() == 0)
        lay.addWidget(self.empty)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.open_button = buttons.addButton(
            "Answer the questionnaire…", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.open_button.setEnabled(self.list.count() > 0)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        if self.list.count():
            self.list.setCurrentRow(0)

    def chosen(self) -> tuple[str, str] | None:
        item = self.list.currentItem()
        return None if item is None else tuple(item.data(Qt.ItemDataRole.UserRole))  # type: ignore[return-value]

    def accept(self) -> None:
        """Open the questionnaire for the chosen session, with its human as the respondent."""
        chosen = self.chosen()
        if chosen is None:
            return
        sid, human = chosen
        self.questionnaire = QuestionnaireDialog(self.db, sid, human, self.parentWidget())
        self.questionnaire.setWindowTitle(f"How was the conversation? ({human}, {sid})")
        self.questionnaire.open()
        super().accept()
