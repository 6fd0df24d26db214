"""Rating ▸ Invite raters…: a rating plan served to the raters' own browsers from the window.

The same server as ``playground rate serve`` (:class:`~playground.rating.web.server.RaterServer`),
on the window's own event loop: one link per rater, or one open link for a crowdsourcing
platform. Stop (or closing the dialog) stops serving and tells every page; the links stay valid
for the next time.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.rating.store import RatingStore
from playground.rating.web.server import RaterServer
from ui.dialogs.invite import HOSTS
from ui.rating.blind_view import default_cps
from ui.screen_fit import fit_window

EXPOSED = (
    "Serving on the local network: anyone on it who has a link can rate as that rater."
    " Give each link to one rater only."
)


class InviteRatersDialog(QDialog):
    """Choose a plan, serve it, copy the links; Stop ends serving (non-modal)."""

    def __init__(self, db: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Invite raters")
        self.db = db
        self.store = RatingStore(db)
        self.server: RaterServer | None = None
        self._task: asyncio.Future[None] | None = None
        self.links = QPlainTextEdit()
        self.links.setReadOnly(True)
        # One link a line, scrolled sideways if need be: a wrapped link reads as two.
        self.links.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.links.setAccessibleName("Links for the raters")
        lay = QVBoxLayout(self)
        intro = QLabel(
            "Raters work from their own browsers, blind: they see the speakers and texts of the"
            " conversations only. Their answers go into this database as from the window."
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        self.plan = QComboBox()
        for p in self.store.plans():
            self.plan.addItem(f"{p.name} ({p.kind}, {len(p.raters)} raters)", p.id)
        form.addRow("Rating plan", self.plan)
        self.host = QComboBox()
        for label, host in HOSTS:
            self.host.addItem(label, host)
        form.addRow("Reachable from", self.host)
        self.open_link = QCheckBox("One open link for a crowdsourcing platform")
        self.open_link.setToolTip(
            "Each arrival gets the next free rater, and a completion code at the end"
        )
        form.addRow("", self.open_link)
        lay.addLayout(form)
        row = QHBoxLayout()
        self.start_button = QPushButton("Start serving")
        self.start_button.clicked.connect(self.start)
        row.addWidget(self.start_button)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        row.addWidget(self.stop_button)
        self.copy_button = QPushButton("Copy links")
        self.copy_button.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.links.toPlainText())
        )
        row.addWidget(self.copy_button)
        row.addStretch(1)
        lay.addLayout(row)
        self.where = QLabel("")
        self.where.setWordWrap(True)
        lay.addWidget(self.where)
        lay.addWidget(self.links, 1)
        self._refresh()
        fit_window(self, (760, 420))

    @property
    def serving(self) -> bool:
        return self.server is not None

    def start(self) -> None:
        """Start serving the chosen plan (on the window's loop)."""
        if self.serving or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.ensure_future(self.start_serving())

    def stop(self) -> None:
        """Stop serving; every open page is told."""
        self._task = asyncio.ensure_future(self.stop_serving())

    async def start_serving(self) -> None:
        """Serve the plan chosen in the dialog; the links, or what went wrong, are shown."""
        plan_id = self.plan.currentData()
        if plan_id is None:
            self.where.setText("There is no rating plan yet: make one in Rating ▸ Rating plans….")
            return
        server = RaterServer(
            self.db, int(plan_id), host=str(self.host.currentData()), cps=default_cps()
        )
        try:
            listening = await server.start()
        except errors.PlaygroundError as exc:
            self.where.setText(f"⚠ Not serving: {exc}")
            return
        self.server = server
        if self.open_link.isChecked():
            lines = [server.open_link()]
        else:
            lines = [f"{rater}\t{link}" for rater, link in server.rater_links()]
        self.links.setPlainText("\n".join(lines))
        where = f"Serving at {listening.origin}."
        self.where.setText(f"{where} {EXPOSED}" if server.host == "0.0.0.0" else where)
        self._refresh()

    async def stop_serving(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            await server.stop()
        self.where.setText("Not serving. The links stay valid for the next time.")
        self._refresh()

    def _refresh(self) -> None:
        serving = self.serving
        for w in (self.plan, self.host, self.open_link, self.start_button):
            w.setEnabled(not serving)
        self.stop_button.setEnabled(serving)
        self.copy_button.setEnabled(serving)
        if not serving and not self.where.text():
            self.where.setText("Not serving yet.")

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.server is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the process is ending
                self._task = asyncio.ensure_future(self.stop_serving())
        super().closeEvent(event)
