"""Invite people: seats of the live session that people join from their own browsers.

Lists each seat's link (Copy), who joined through it, whether their browser is connected, and a
Revoke button; adds seats. The first seats start serving the session (on this computer only,
unless the researcher picks the local network, which the dialog then says plainly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.dialogs.common import intro_label
from ui.screen_fit import fit_window
from ui.session.study import SeatRow, StudyHost

HOSTS = [
    ("This computer only (127.0.0.1)", "127.0.0.1"),
    ("The local network (0.0.0.0)", "0.0.0.0"),
]
COLUMNS = ["Seat", "Person", "Browser", "", "", "Link"]
#: The columns of text (the others hold Copy link and Revoke).
TEXT_COLUMNS = (0, 1, 2, 5)
EXPOSED = (
    "Serving on the local network: anyone on it who has a link can join as that seat."
    " Give each link to one person only."
)


class InviteDialog(QDialog):
    """Seats and links of the live session (non-modal: it follows who joins and connects)."""

    def __init__(
        self,
        study: StudyHost,
        invite: Callable[[int, str], Any],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Invite people")
        self.study = study
        self._invite = invite
        lay = QVBoxLayout(self)
        lay.addWidget(
            intro_label(
                "Each person opens their own link in a browser, picks a name and takes part in"
                " this conversation. What they say and note is saved with the session."
            )
        )
        row = QHBoxLayout()
        row.addWidget(QLabel("Add"))
        self.count = QSpinBox()
        self.count.setRange(1, 50)
        self.count.setValue(2)
        row.addWidget(self.count)
        row.addWidget(QLabel("seats, served to"))
        self.host = QComboBox()
        for label, host in HOSTS:
            self.host.addItem(label, host)
        row.addWidget(self.host, 1)
        self.add_button = QPushButton("Add seats")
        self.add_button.clicked.connect(self._add)
        row.addWidget(self.add_button)
        lay.addLayout(row)
        self.where = QLabel("")
        self.where.setWordWrap(True)
        lay.addWidget(self.where)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)  # a link is one long word: shown whole, not cut at a "/"
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)  # the link last: the buttons stay in view
        lay.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay.addWidget(buttons)
        study.changed.connect(self.refresh)
        self.refresh()
        fit_window(self, (820, 420))

    def _add(self) -> None:
        self._invite(self.count.value(), str(self.host.currentData()))

    def refresh(self) -> None:
        """Show the seats as the study server has them now."""
        serving = self.study.serving
        self.host.setEnabled(not serving)  # the address is chosen once, when serving starts
        if not serving:
            self.where.setText("Not serving yet: adding seats starts serving this session.")
        else:
            where = f"Serving at {self.study.address}."
            self.where.setText(f"{where} {EXPOSED}" if self.study.exposed else where)
        self.where.setStyleSheet("color:#b26a00;" if self.study.exposed else "color:#555;")
        seats = self.study.seats()
        self.table.setRowCount(len(seats))
        for i, seat in enumerate(seats):
            self._fill(i, seat)

    def _fill(self, i: int, seat: SeatRow) -> None:
        state = "revoked" if seat.revoked else ("online" if seat.online else "offline")
        if seat.online and seat.pages > 1:
            state = f"online · open in {seat.pages} windows"
        for col, text in zip(
            TEXT_COLUMNS,
            [str(seat.number), seat.name or "not joined yet", state, seat.link],
            strict=True,
        ):
            item = QTableWidgetItem(text)  # plain text: a name typed in a browser is shown as is
            item.setToolTip(text)
            self.table.setItem(i, col, item)
        copy = QPushButton("Copy link")
        copy.setEnabled(not seat.revoked)
        copy.clicked.connect(lambda _=False, link=seat.link: _copy(link))
        self.table.setCellWidget(i, 3, copy)
        revoke = QPushButton("Revoke")
        revoke.setToolTip("Close this seat for good: its link stops working at once")
        revoke.setEnabled(not seat.revoked)
        revoke.clicked.connect(lambda _=False, n=seat.number: self.study.revoke(n))
        self.table.setCellWidget(i, 4, revoke)


def _copy(link: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(link)
