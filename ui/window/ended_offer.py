"""After a change to an ended session is refused, the banner offers the ways to go on.

The controller refuses force-express, memory and thought edits and the composer once the session
on screen has ended, and says why in the banner. This adds two links under that message: a new
session with the same settings (:meth:`WindowHost.new_session_like`), and opening the session for
replay, where Fork continues it live from any moment (:meth:`MainWindow.open_fork`).
"""

from __future__ import annotations

import html

from PySide6.QtCore import QObject, Qt

from ui.window.host import WindowHost

LIKE = "like"
REPLAY = "replay"


class EndedSessionOffer(QObject):
    """Adds "New session like this" and "Replay to fork it" links to the refusal in the banner.

    Args:
        window: the main window (its banner, controller, ``new_session_like`` and ``open_replay``).
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = window
        self.session_id = ""
        window.banner.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        window.banner.linkActivated.connect(self.follow)
        window.controller.error.connect(self._plain)  # connected after the window's show_error
        window.controller.session_refused.connect(self.offer)

    def _plain(self, _text: str = "") -> None:
        """Any other message is shown as the text it is (no links)."""
        self.window.banner.setTextFormat(Qt.TextFormat.AutoText)
        self.window.banner.setToolTip("")

    def offer(self, session_id: str) -> None:
        """Append the two ways on to the refusal the banner shows now."""
        self.session_id = session_id
        banner = self.window.banner
        said = html.escape(banner.text())
        banner.setTextFormat(Qt.TextFormat.RichText)
        banner.setText(
            f"{said}<br><a href='{LIKE}'>New session like this</a>"
            f" &nbsp;·&nbsp; <a href='{REPLAY}'>Open it in replay to fork it</a>"
        )
        banner.setToolTip(
            "New session like this: the same participants, settings and icebreaker, as a new"
            " session. Replay: step through this session and fork it live from any moment."
        )

    def follow(self, link: str) -> None:
        """Open the way on that ``link`` names."""
        c = self.window.controller
        if not self.session_id:
            return
        if link == LIKE:
            self.window.new_session_like(str(c.db_path), self.session_id)
        elif link == REPLAY:
            self.window.open_replay(str(c.db_path), self.session_id)
