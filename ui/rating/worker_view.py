"""What the ratings report and study report windows share: a report of the session database
recomputed off the GUI thread on every refresh, where a newer refresh supersedes the one still
computing and closing the window drops it; Refresh and the summary beside it, the message above
the report, and a text that stays scrolled where the reader was."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import shiboken6
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from playground.storage.database import database_path
from ui.widgets.tool_window import ToolWindow, button

T = TypeVar("T")

#: A refresh's computation: made with its generation and the event that tells its thread to stop.
Work = Callable[[int, threading.Event], Coroutine[Any, Any, None]]


class WorkerView(ToolWindow):
    """A window whose report of ``db`` is computed in worker threads.

    A subclass lays out ``message`` (a hidden label, see :meth:`_say`), runs each refresh with
    :meth:`_start` and shows a result only while :meth:`_current`.

    Args:
        title: the window title.
        db: the session database.
        parent: the main window, or None.
    """

    message: QLabel

    def __init__(self, title: str, db: Any, parent: QWidget | None = None) -> None:
        super().__init__(title, (1440, 900), parent)
        self.db = db
        # The file the worker threads read (their own connections); a database in memory
        # cannot be shared with a thread, so its report is computed on the GUI thread.
        path = database_path(db)
        self._source: Any = path if path is not None else db
        self._generation = 0  # the refresh whose results are shown; older ones are dropped
        self._task: asyncio.Future[None] | None = None
        self._stop = threading.Event()
        self._closed_while_computing = False

    def _top_row(self, label: str, chooser: QComboBox, tip: str) -> QVBoxLayout:
        """The window's layout, its first row laid out: ``label`` and ``chooser`` (what the report
        covers), Refresh (``refresh_button``, saying ``tip``) and the summary after it
        (``summary``, which takes the spare width)."""
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        top = QHBoxLayout()
        top.addWidget(QLabel(label))
        top.addWidget(chooser)
        self.refresh_button = button("Refresh", tip, self.refresh)
        top.addWidget(self.refresh_button)
        self.summary = QLabel("")
        self.summary.setStyleSheet("color:#555;")
        top.addWidget(self.summary, 1)
        lay.addLayout(top)
        return lay

    # -- computing -------------------------------------------------------------------------------

    @property
    def computing(self) -> bool:
        """True while a refresh is still computing."""
        return self._task is not None and not self._task.done()

    def _start(self, work: Work) -> None:
        """Run ``work`` for a new generation, superseding the one still computing."""
        self._stop_work()
        self._closed_while_computing = False
        self._stop = threading.Event()
        coro = work(self._generation, self._stop)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            # No event loop runs (a script, a synchronous test): compute now, blocking as the
            # view always did there, on a loop of its own that leaves the thread's current loop
            # alone (asyncio.run would unset it). The app runs qasync's loop throughout.
            with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
                runner.run(coro)
            return
        self._task = asyncio.ensure_future(coro)

    def _stop_work(self) -> None:
        """Drop the computation under way: its result is never shown, and a thread that checks
        its stop event stops at its next check instead of computing on for nobody."""
        self._generation += 1
        self._stop.set()
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    def _current(self, generation: int) -> bool:
        """The computation ``generation`` is still wanted and the view still exists."""
        return generation == self._generation and shiboken6.isValid(self)

    async def _off_thread(self, job: Callable[..., T], *args: Any) -> T:
        """``job(source, *args)`` in a worker thread, ``source`` the database's file; on the GUI
        thread with the database itself when it is in memory."""
        if isinstance(self._source, Path):
            return await asyncio.to_thread(job, self._source, *args)
        return job(self._source, *args)

    # -- showing ---------------------------------------------------------------------------------

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(
            ("background:#fdecea; border:1px solid #f5c6cb; color:#b71c1c;" if error else
             "background:#fff8e1; border:1px solid #ffe082;")
            + " border-radius:4px; padding:8px;"
        )  # fmt: skip
        self.message.show()

    def _shown(self) -> None:
        """Called when the view is shown and nothing dropped at a close is recomputed."""

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._closed_while_computing:  # shown again: compute what was dropped at the close
            self.refresh()
        else:
            self._shown()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.computing:  # nobody will look at the result: stop computing it
            self._stop_work()
            self._closed_while_computing = True
        super().closeEvent(event)


def set_text_keeping_scroll(edit: QPlainTextEdit, text: str) -> None:
    """Replace ``edit``'s text, keeping where the reader scrolled to."""
    bars = (edit.verticalScrollBar(), edit.horizontalScrollBar())
    at = [b.value() for b in bars]
    edit.setPlainText(text)
    for b, v in zip(bars, at, strict=True):
        b.setValue(v)
