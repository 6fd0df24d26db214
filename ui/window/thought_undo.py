"""Undo of a thought deleted by ✕: Ctrl+Z, or the status bar's Undo button for a few seconds."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QToolButton

from ui.window.host import WindowHost

#: How long the status bar offers Undo after a deletion (Ctrl+Z works as long as the session lives).
UNDO_OFFER_MS = 8000


class ThoughtUndo(QObject):
    """Remembers the thoughts the user deleted in the live session, latest last, and restores
    them on request. The engine restores a thought as it was (``Room.restore_thought``); the
    bubble comes back from the ``thought_restored`` event, and the database row is undeleted.

    Attributes:
        action: "Undo delete thought" (Ctrl+Z), enabled while there is something to undo.
        button: the status bar's "Undo" button, shown for :data:`UNDO_OFFER_MS` after a deletion.
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._deleted: list[tuple[str, int]] = []
        self.action = QAction("Undo delete thought", window.window())
        self.action.setShortcut(QKeySequence.StandardKey.Undo)
        self.action.setToolTip("Bring back the thought you deleted last (Ctrl+Z)")
        self.action.setEnabled(False)
        window.addAction(self.action)  # the shortcut works wherever the focus is in the window
        self.button = QToolButton()
        self.button.setText("Undo")
        self.button.setAutoRaise(True)
        self.button.setStyleSheet("QToolButton { color: #1565c0; font-weight: bold; }")
        self.button.hide()
        window.statusBar().addPermanentWidget(self.button)
        self._offer = QTimer(self)
        self._offer.setSingleShot(True)
        self._offer.timeout.connect(self.button.hide)
        self.action.triggered.connect(self.undo)
        self.button.clicked.connect(self.undo)
        c = window.controller
        c.thought_deleted_by_user.connect(self._on_deleted)
        c.session_changed.connect(lambda _sid: self.forget())
        c.about_to_start.connect(self.forget)

    def pending(self) -> list[tuple[str, int]]:
        """The deletions that can still be undone, oldest first: (agent, thought id)."""
        return list(self._deleted)

    def forget(self) -> None:
        """Nothing to undo any more (another session is on screen)."""
        self._deleted.clear()
        self._offer.stop()
        self.button.hide()
        self.action.setEnabled(False)

    def _on_deleted(self, agent: str, thought_id: int) -> None:
        self._deleted.append((agent, thought_id))
        self.action.setEnabled(True)
        self.button.setToolTip(f"Bring back {agent}'s thought {thought_id} (Ctrl+Z)")
        self.button.show()
        self._offer.start(UNDO_OFFER_MS)
        self._window.hint(f"Deleted {agent}'s thought {thought_id}. Undo: Ctrl+Z.")

    def undo(self) -> None:
        """Restore the latest deletion (its errors, e.g. an ended session, go to the banner)."""
        if not self._deleted:
            return
        agent, thought_id = self._deleted.pop()
        self.action.setEnabled(bool(self._deleted))
        if not self._deleted:
            self._offer.stop()
            self.button.hide()

        async def go() -> None:
            if await self._window.controller.room_commands.restore_thought(agent, thought_id):
                self._window.hint(f"Restored {agent}'s thought {thought_id}.")

        self._window.spawn(go())
