"""The GUI's composition root: QApplication, the qasync loop, controller, window; `playground` with no arguments."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import cast

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import PySide6  # noqa: F401 - imported before qasync so qasync binds to PySide6
import qasync
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from playground import errors
from playground.embedding.cache import CachingEmbedder
from playground.storage import library, open_database
from playground.storage.database import DEFAULT_DB
from ui.bridge import EngineBridge
from ui.collector import MainThreadCollector
from ui.screen_fit import keep_geometry
from ui.session.controller import SessionController
from ui.widgets.session_library import SessionLibraryDialog
from ui.window.main_window import MainWindow

#: Where the window geometry is kept (QSettings: ~/.config/thought-playground/ on Linux).
ORGANIZATION = "thought-playground"
APPLICATION = "Thought Playground"
#: The windows' font size (points), in the system's default family.
FONT_POINTS = 10


def use_app_font(app: QApplication) -> None:
    """The font every window of the app is laid out for (run(); screenshot scripts and layout
    tests use it too)."""
    app.setFont(QFont(app.font().family(), FONT_POINTS))


def build(
    *,
    db_path: str | None = None,
    environ: dict[str, str] | None = None,
    embedder: CachingEmbedder | None = None,
) -> tuple[MainWindow, SessionController]:
    """Create the bridge, controller and window (a QApplication must exist).

    Args:
        db_path: The session database (default: ``sessions/playground.db``).
        environ: The environment settings are read from (default: the process's).
        embedder: An embedding model ready to use (already loaded), shared with whoever made it:
            the window loads none. None: :func:`start` loads the packaged MiniLM in the
            background.
    """
    bridge = EngineBridge()
    controller = SessionController(
        bridge, db_path=db_path or DEFAULT_DB, environ=environ, embedder=embedder
    )
    window = MainWindow(controller, bridge)
    bridge.setParent(window)
    controller.setParent(window)
    return window, controller


def open_library_at_start(window: MainWindow) -> SessionLibraryDialog | None:
    """Show the saved sessions when the database already holds some; a database that cannot be
    used is reported in the window's banner (the window stays usable)."""
    path = Path(window.controller.db_path)
    if not path.exists():
        return None
    try:
        db = open_database(path, create=False)
        try:
            count = library.count_sessions(db)
        finally:
            db.close()
    except errors.PlaygroundError as exc:
        window.show_error(f"Session database: {exc}")
        return None
    return window.open_library(str(path)) if count else None


def start(window: MainWindow, controller: SessionController) -> SessionLibraryDialog | None:
    """Show the window, offer the saved sessions, and start loading the embedding model at once,
    in the background (its own worker thread; the window stays responsive): by the time the user
    has chosen a first session's participants the wait is usually over. A set-up that still has
    to wait says so over the conversation pane."""
    window.show()
    dialog = open_library_at_start(window)
    controller.embedding.start()
    return dialog


def run(argv: list[str] | None = None) -> int:
    """Open the playground window; returns when it is closed."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app = cast(
        QApplication, QApplication.instance() or QApplication(sys.argv[:1] + list(argv or []))
    )
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    use_app_font(app)
    # Each window opens at the size and place it was last given (fitted to its screen).
    keep_geometry(lambda: QSettings(ORGANIZATION, APPLICATION))

    collector = MainThreadCollector(parent=app)  # noqa: F841 - lives as the app's child

    received: list[int] = []

    async def main() -> None:
        app.setQuitOnLastWindowClosed(False)
        closed = asyncio.Event()
        app.lastWindowClosed.connect(closed.set)
        window, controller = build()

        def on_signal(signum: int, _frame: object) -> None:
            # Ctrl-C or SIGTERM closes the window as its close button does: a running session
            # ends `interrupted`, then the app exits with 128 + the signal, quietly.
            received.append(signum)
            QTimer.singleShot(0, window.close)

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, on_signal)
        # Python runs its signal handlers only when it gets control: wake it now and then.
        wake = QTimer(app)
        wake.timeout.connect(lambda: None)
        wake.start(200)
        start(window, controller)
        await closed.wait()
        await controller.shutdown()
        wake.stop()

    qasync.run(main())
    return 128 + received[0] if received else 0
