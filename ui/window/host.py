"""WindowHost: the main window as its helpers see it.

The helpers that add a feature to the main window (the Rating, Experiments and STORM menus, the
history and geometry views, the ended-session offer, the undo of a deleted thought) take the
window and use some of its members: its controller and bridge, its panes, its banner and status
line, its menus. :class:`WindowHost` lists exactly those members, so a helper types against it
instead of importing :class:`ui.window.main_window.MainWindow` (which imports every helper);
``MainWindow`` satisfies it structurally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from PySide6.QtCore import QObject
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QLabel, QMenu, QMenuBar, QSplitter, QStatusBar, QWidget

    from ui.bridge import EngineBridge
    from ui.panes.conversation.conversation_pane import ConversationPane
    from ui.panes.decisions.decision_strip import DecisionStrip
    from ui.panes.memory.memory_pane import MemoryPane
    from ui.panes.participants.participants_bar import ParticipantsBar
    from ui.panes.thoughts.thoughts_pane import ThoughtsPane
    from ui.replay.controller import ReplayController
    from ui.selection import SelectedParticipant
    from ui.session.controller import SessionController
    from ui.window.shortcuts import WindowKeys


class MenuOwner(Protocol):
    """A helper that owns a menu of the menu bar (the Experiments menu)."""

    @property
    def menu(self) -> QMenu: ...


class WindowHost(Protocol):
    """What the main window's helpers use of it."""

    controller: SessionController
    bridge: EngineBridge
    selection: SelectedParticipant
    #: The banner above the conversation (errors, notices; links once a change was refused).
    banner: QLabel
    participants: ParticipantsBar
    memory: MemoryPane
    conversation: ConversationPane
    decisions: DecisionStrip
    thoughts: ThoughtsPane
    #: The three panes, side by side.
    splitter: QSplitter
    #: The toolbar's Participants ▾ menu.
    participants_menu: QMenu
    #: The Session, View and Help menus and the window's shortcuts.
    keys: WindowKeys
    replay: ReplayController

    @property
    def experiments(self) -> MenuOwner:
        """The Experiments menu's owner (the STORM view is offered there too)."""
        ...

    def hint(self, text: str) -> None:
        """Say ``text`` in the status line."""
        ...

    def show_error(self, text: str) -> None:
        """Show ``text`` as an error in the banner (and the status line)."""
        ...

    def spawn(self, coro: Awaitable[object]) -> asyncio.Future[object]:
        """Run a controller command on the loop; its errors are already turned into messages."""
        ...

    def open_replay(self, db_path: str, session_id: str) -> asyncio.Future[object]:
        """Replay a saved session in the panes (a live session ends first, if the user agrees)."""
        ...

    def open_library(self, db_path: str | None = None) -> object:
        """The session library (File ▸ Open session…) of a database (default: the controller's)."""
        ...

    def new_session_like(self, db_path: str, session_id: str) -> object:
        """The New session dialog, filled in like a saved session."""
        ...

    async def confirm_leaving_live(self, target: str) -> bool:
        """True when nothing live would be lost by opening ``target``, or the user chose to end
        the live session; False when they cancelled."""
        ...

    # Qt's own, as QMainWindow has them.

    def window(self) -> QWidget:
        """The main window as a widget: the parent of the helpers' windows and Qt objects."""
        ...

    def statusBar(self) -> QStatusBar: ...

    def menuBar(self) -> QMenuBar: ...

    def centralWidget(self) -> QWidget | None: ...

    def addAction(self, action: QAction, /) -> None: ...

    def installEventFilter(self, filterObj: QObject, /) -> None: ...

    def height(self) -> int: ...

    def close(self) -> bool: ...
