"""Qt tests run headless; async UI tests run on a qasync loop (pytest-asyncio loop-factory hook).

Never call qtbot.wait*/waitUntil inside an async test: it spins a nested Qt loop under the running
qasync loop and hangs the session. Poll with ``await asyncio.sleep`` instead (see ``until``).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio  # noqa: E402
from collections.abc import Callable  # noqa: E402

import PySide6  # noqa: E402,F401 - bind qasync to PySide6
import qasync  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ui.collector import MainThreadCollector  # noqa: E402


def _qasync_loop() -> qasync.QEventLoop:
    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)  # closing a window must not stop the loop under test
    if app.findChild(MainThreadCollector) is None:
        MainThreadCollector(
            parent=app
        )  # as the app does: no widget is ever freed off the GUI thread
    return qasync.QEventLoop(app)


def pytest_asyncio_loop_factories(config, item):  # noqa: ANN001, ANN201
    return {"qasync": _qasync_loop}


async def until(pred: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> None:  # noqa: ASYNC109
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def app_window(qtbot, db_path, minilm, size: tuple[int, int] | None = (1440, 900)):  # noqa: ANN001, ANN201
    """The app's main window on ``db_path`` with the shared, already-loaded MiniLM, shown at
    ``size`` (None: Qt's default) and closed by ``qtbot`` after the test: ``(window, controller)``."""
    from playground.embedding.cache import CachingEmbedder
    from ui.app import build

    win, controller = build(db_path=str(db_path), environ={})
    controller._embedder = CachingEmbedder(minilm)
    qtbot.addWidget(win)
    if size is not None:
        win.resize(*size)
    win.show()
    return win, controller
