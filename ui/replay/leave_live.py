"""The question before the window leaves a live session for a saved one: a session that is still
running (even paused, even one a person has joined, or a STORM session with simulated users)
ends only when the user says so."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

#: The button that ends the live session and goes on (opens the saved one, starts the new one).
END_AND_OPEN = "End the session"


def live_room(controller: Any) -> Any:
    """The controller's session if it has not ended (running, paused, or set up), else None."""
    room = controller.room
    return room if room is not None and not room.ended else None


def describe(controller: Any, room: Any) -> str:
    """One sentence on what would be lost: the live session, its messages and who is in it."""
    n = len(room.messages)
    parts = [f"Session {room.session_id} is still live ({n} message{'' if n == 1 else 's'})"]
    if controller.human:
        parts.append(f"you joined it as {controller.human}")
    users = [u.name for u in getattr(room, "simulated_users", [])]
    if users:
        parts.append(f"with the simulated user{'' if len(users) == 1 else 's'} {', '.join(users)}")
    return ", ".join(parts) + "."


class LeaveLiveQuestion(QMessageBox):
    """“End the live session and open the saved one?” — window-modal, Cancel by default.

    Answer it with :meth:`ask` (awaitable; True: end the session). Closing it in any other way
    (Esc, the window's ✕, the window going away) counts as Cancel.

    Attributes:
        end_button: ends the live session and opens the saved one.
        cancel_button: leaves everything as it is.
    """

    def __init__(self, parent: QWidget, live: str, target: str) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle("End the live session?")
        self.setText(f"{live}\n\n{target[0].upper()}{target[1:]} ends it.")
        self.setInformativeText(
            "It is saved as interrupted, with what it has so far; it cannot be continued"
            " afterwards (a replay of it can be forked). Cancel keeps it running."
        )
        self.end_button = self.addButton(END_AND_OPEN, QMessageBox.ButtonRole.DestructiveRole)
        self.cancel_button = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(self.cancel_button)
        self.setEscapeButton(self.cancel_button)
        self._end = False
        self.buttonClicked.connect(self._clicked)

    def _clicked(self, button: object) -> None:
        self._end = button is self.end_button

    async def ask(self) -> bool:
        """Show the question (without blocking the event loop: the live session runs on
        meanwhile) and wait for the answer: True to end the session."""
        answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def settle(end: bool) -> None:
            if not answered.done():
                answered.set_result(end)

        self.finished.connect(lambda _result: settle(self._end))
        self.destroyed.connect(lambda *_: settle(False))
        self.open()
        return await answered
