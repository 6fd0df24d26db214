"""What the Experiments and Study plans windows share: a window that runs one job at a time on the
GUI's loop, lists the jobs in the session database above the shown one's conversations and opens
a conversation in replay; and the menu that opens it, which stops a running job before the main
window closes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTableWidget, QVBoxLayout

from playground import errors
from ui.jobs.loop_job import LoopJob
from ui.theme import show_status, show_warning
from ui.widgets.tool_window import SessionsWindow, selected_data, show_single
from ui.window.host import WindowHost


class JobWindow(SessionsWindow):
    """A :class:`SessionsWindow` that runs one job (:class:`LoopJob`) at a time.

    A subclass lays itself out in ``_build``: it makes its layout and buttons with
    :meth:`_top_row`, the two tables and the status line (:meth:`_status_line`), then calls
    :meth:`_wire`. It reads and fills the list (:meth:`_read_listing`,
    :meth:`_fill_listing`), shows one job (:meth:`_show_one`) and enables the buttons
    (:meth:`_update_buttons`); New… calls its ``open_new_dialog``, Resume its ``resume``.

    Attributes:
        job: the job started here (None: none yet).
        shown_id: the job whose conversations are shown.
    """

    #: What the list is called in messages ("Experiments").
    LISTING = ""
    #: What reading the list may raise (a damaged database): said, and the window stays usable.
    LISTING_ERRORS: tuple[type[Exception], ...] = (Exception,)
    #: Said when a job is asked for while one runs.
    BUSY = ""
    #: Said by Stop.
    STOPPING = ""
    #: Said by Open in replay when no conversation with a session is selected.
    NO_SESSION = ""

    job: LoopJob | None = None
    shown_id: str | None = None

    # -- building --------------------------------------------------------------------------------

    def _top_row(self, new: str, resume_tip: str, stop: str, stop_tip: str) -> QVBoxLayout:
        """The window's layout, its first row laid out: ``new``, Resume and ``stop`` on the
        left; the database, Open in replay and Refresh on the right (``new_button``,
        ``resume_button``, ``stop_button``, ``db_label``, ``replay_button``,
        ``refresh_button``)."""
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        bar = QHBoxLayout()
        self.new_button = QPushButton(new)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip(resume_tip)
        self.stop_button = QPushButton(stop)
        self.stop_button.setToolTip(stop_tip)
        self.replay_button = QPushButton("Open in replay")
        self.replay_button.setToolTip("Replay the selected conversation in the main window")
        self.refresh_button = QPushButton("Refresh")
        for b in (self.new_button, self.resume_button, self.stop_button):
            bar.addWidget(b)
        bar.addStretch(1)
        self.db_label = QLabel(f"Database: {self.db_path}")
        self.db_label.setStyleSheet("color:#555;")
        self.db_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for w in (self.db_label, self.replay_button, self.refresh_button):
            bar.addWidget(w)
        lay.addLayout(bar)
        return lay

    def _status_line(self) -> QLabel:
        """The window's message line (``status``), word-wrapped, to be laid out last."""
        self.status = QLabel("")
        self.status.setWordWrap(True)
        return self.status

    def _wire(self, listing: QTableWidget, conversations: QTableWidget, session: int) -> None:
        """Connect the buttons, the list of jobs (``listing``) and the shown job's
        ``conversations`` (their session ids in column ``session``), then read the list."""
        self._listing, self._conversations, self._session_column = listing, conversations, session
        self.new_button.clicked.connect(lambda: self.open_new_dialog())
        self.resume_button.clicked.connect(lambda: self.resume())
        self.stop_button.clicked.connect(self.cancel)
        self.replay_button.clicked.connect(lambda: self.open_selected_session())
        self.refresh_button.clicked.connect(self.refresh)
        listing.itemSelectionChanged.connect(self._selection_changed)
        conversations.itemDoubleClicked.connect(lambda _item: self.open_selected_session())
        conversations.itemSelectionChanged.connect(self._update_buttons)
        self.refresh()

    # -- what the subclass provides --------------------------------------------------------------

    def open_new_dialog(self) -> object:
        """The New… dialog."""
        raise NotImplementedError

    def resume(self) -> object:
        """Run the shown job on from where it stopped."""
        raise NotImplementedError

    def _read_listing(self, db: Any) -> Any:
        """The jobs in ``db`` (may raise :attr:`LISTING_ERRORS`)."""
        raise NotImplementedError

    def _fill_listing(self, found: Any) -> list[str]:
        """Fill the list with ``found``; the ids, row by row."""
        raise NotImplementedError

    def _show_one(self, job_id: str | None) -> None:
        """Show job ``job_id`` (None: none) below the list."""
        raise NotImplementedError

    def _update_buttons(self) -> None:
        raise NotImplementedError

    # -- data ------------------------------------------------------------------------------------

    def _db(self) -> Any:
        try:
            return self.controller.database()
        except errors.PlaygroundError as exc:
            self.show_error(f"Session database: {exc}")
            return None

    def _busy(self) -> bool:
        """A job runs here (then said: one at a time)."""
        if not self.running:
            return False
        self.show_error(self.BUSY)
        return True

    def _free_db(self) -> Any:
        """The database, when no job runs (None: one runs, or it cannot be opened; said)."""
        return None if self._busy() else self._db()

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def selected_id(self) -> str | None:
        job_id = selected_data(self._listing)
        return str(job_id) if job_id is not None else None

    def selected_session(self) -> str | None:
        sid = selected_data(self._conversations, self._session_column)
        return str(sid) if sid else None

    def refresh(self) -> None:
        """Read the list again and show the job shown before (else the first)."""
        db = self._db()
        if db is None:
            return
        try:
            found = self._read_listing(db)
        except self.LISTING_ERRORS as exc:  # a damaged database: say so, stay usable
            logging.getLogger(type(self).__module__).exception("listing %s", self.LISTING.lower())
            self.show_error(f"{self.LISTING}: {exc}")
            return
        keep = self.shown_id
        self._listing.blockSignals(True)
        ids = self._fill_listing(found)
        if keep not in ids:
            keep = ids[0] if ids else None
        if keep is not None:
            self._listing.selectRow(ids.index(keep))
        self._listing.blockSignals(False)
        self._show_one(keep)

    def _selection_changed(self) -> None:
        self._show_one(self.selected_id())

    # -- messages --------------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        show_warning(self.status, text)

    def hint(self, text: str) -> None:
        show_status(self.status, text, "#333")

    # -- commands --------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running job (Stop); it ends on its own."""
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.hint(self.STOPPING)

    async def stop(self) -> None:
        """Stop a running job and wait until it has ended (what it must save, saved)."""
        if self.job is not None and self.job.running:
            await self.job.stop()

    def open_selected_session(self) -> object:
        sid = self.selected_session()
        if sid is None:
            self.show_error(self.NO_SESSION)
            return None
        self.hint(f"Opening conversation {sid} in the main window's replay…")
        return self.open_replay_at(self.db_path, sid)

    def _ended(self, outcome: str, message: str) -> None:
        """The job ended: say how, and read the list again."""
        if outcome == "error":
            self.show_error(message)
        else:
            self.hint(message)
        self.refresh()


V = TypeVar("V", bound=JobWindow)


class JobMenu(QObject, Generic[V]):
    """A main-window helper that opens a :class:`JobWindow` (kept as ``view``) and, when the
    main window is closed while that window's job runs, stops the job first (what it must save,
    saved: it writes to the database the window closes), then closes the main window.

    Args:
        window: the main window; its ``controller`` and ``open_replay`` make the view.
        make: the view's class.
    """

    def __init__(self, window: WindowHost, make: type[V]) -> None:
        super().__init__(window.window())
        self.window = window
        self.view: V | None = None
        self._make = make
        self._tasks: set[asyncio.Future[Any]] = set()
        window.installEventFilter(self)

    def open_view(self) -> V:
        """The view (one; an open one is refreshed and brought to the front)."""
        w, make = self.window, self._make
        self.view = show_single(self.view, lambda: make(w.controller, w.open_replay, w.window()))
        return self.view

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.window or event.type() != QEvent.Type.Close:
            return False
        view = self.view
        if view is None or not view.running:
            if view is not None:
                with contextlib.suppress(RuntimeError):
                    view.close()
            return False
        # Stop the job first (it writes to the database the window closes), then close.
        event.ignore()

        async def finish() -> None:
            await view.stop()
            with contextlib.suppress(RuntimeError):  # the Qt objects are already gone
                view.close()
                self.window.close()

        task = asyncio.ensure_future(finish())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True
