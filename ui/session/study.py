"""The window's study server: the live session's invited seats, served to people's browsers.

Started from Session ▸ Invite people…: the session goes on in real time (as when a person joins
at the window), the page is served on the window's own event loop, and each seat gets its own
link. The server stops when the session ends, another one starts, or the window closes; every
browser is told.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from playground import errors
from playground.room.room import Room
from playground.study.hub import StudyHub
from playground.study.seats import SeatBook
from playground.study.server import StudyServer, is_loopback


class StudyController(Protocol):
    """What the study server needs of the session controller."""

    def require_live_room(self) -> Room: ...

    def database(self) -> Any: ...

    async def go_realtime(self) -> None: ...


@dataclass(frozen=True)
class SeatRow:
    """One seat as the Invite dialog lists it."""

    number: int
    link: str
    name: str | None
    online: bool
    revoked: bool
    #: Pages open on its link now (more than one: the link was opened twice).
    pages: int = 1


class StudyHost(QObject):
    """Serves the live session's seats (one server at a time, for the session on screen)."""

    changed = Signal()  # a seat was added, taken, revoked, connected or dropped; or serving changed

    def __init__(self, controller: StudyController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.server: StudyServer | None = None
        self._unsubscribe: Any = None

    @property
    def serving(self) -> bool:
        return self.server is not None

    @property
    def exposed(self) -> bool:
        """Listening beyond this machine (on the local network)."""
        return self.server is not None and not is_loopback(self.server.host)

    @property
    def address(self) -> str:
        listening = self.server.listening if self.server is not None else None
        return listening.origin if listening is not None else ""

    def seats(self) -> list[SeatRow]:
        if self.server is None:
            return []
        hub = self.server.hub
        return [
            SeatRow(s.number, self.server.link(s), s.name, hub.online(s), s.revoked, hub.pages(s))
            for s in hub.book.seats
        ]

    async def invite(self, n: int, *, host: str = "127.0.0.1", port: int = 0) -> None:
        """Add ``n`` seats to the live session, serving it first if it is not served yet.

        Raises:
            PlaygroundError: no live session, or the address cannot be listened on.
        """
        room = self._controller.require_live_room()
        if self.server is None:
            book = SeatBook(self._controller.database(), room.session_id)
            hub = StudyHub(room, book)
            hub.on_pages = self.changed.emit  # a link opened twice shows in the seat list
            server = StudyServer(hub, host=host, port=port)
            await server.start()
            self.server = server
            self._unsubscribe = room.bus.subscribe(
                lambda _e: self.changed.emit(), kinds=["participant_joined", "presence_changed"]
            )
            await self._controller.go_realtime()
        elif self.server.hub.room is not room:
            raise errors.PlaygroundError("the study server belongs to another session")
        self.server.hub.book.add(n, room.clock.now_iso())
        self.changed.emit()

    def revoke(self, number: int) -> None:
        if self.server is not None:
            self.server.hub.revoke(number)
            self.changed.emit()

    async def stop(self, reason: str) -> None:
        """Stop serving (browsers are told ``reason``); nothing happens when not serving."""
        server, self.server = self.server, None
        if server is None:
            return
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await server.stop(reason)
        self.changed.emit()
