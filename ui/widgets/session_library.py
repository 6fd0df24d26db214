"""The session library (File ▸ Open session…): saved sessions, searchable, sortable, filterable.

The dialog owns its own connection to the database it shows; opening, "new session like this"
and replay are the main window's business: it only emits ``open_requested`` and
``new_like_requested`` with the database path and the session id.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import cast

import sqlite_utils
from PySide6.QtCore import (
    QItemSelectionModel,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.storage import library, open_database
from playground.transfer.export import ExportFormat, write_export
from ui.screen_fit import fit_window
from ui.theme import show_status, show_warning
from ui.widgets.placeholder import placeholder_label
from ui.widgets.session_table import (
    COLUMNS,
    ENGINE_COLUMN,
    PARTICIPANTS_COLUMN,
    SessionTableModel,
    local_time,
)

EXPORT_FILTERS = {"JSON Lines (*.jsonl)": "jsonl", "JSON (*.json)": "json", "CSV (*.csv)": "csv"}
EMPTY_TEXT = "No saved sessions yet — start one with New session…"
NO_MATCH_TEXT = "No saved session matches the search and filters."


def file_options() -> QFileDialog.Option:
    """Qt's own file dialog where no native one can show (offscreen, tests)."""
    offscreen = QGuiApplication.platformName() in ("offscreen", "minimal")
    return QFileDialog.Option.DontUseNativeDialog if offscreen else QFileDialog.Option(0)


def ask_database_path(parent: QWidget | None, start: str = "") -> str | None:
    """Ask for a session database file to open; ``None`` when cancelled."""
    path, _ = QFileDialog.getOpenFileName(
        parent,
        "Open a session database",
        start,
        "Session databases (*.db *.sqlite *.sqlite3);;All files (*)",
        options=file_options(),
    )
    return path or None


def in_experiment(seat: library.ExperimentSeat) -> str:
    """What deleting a session of an experiment does to the experiment (the Delete question)."""
    name = f" “{seat.name}”" if seat.name else ""
    which = (
        f"conversation {seat.draw + 1} ({seat.condition}) of"
        if seat.draw is not None
        else "part of"
    )
    return (
        f"This session is {which} experiment {seat.experiment_id}{name}"
        f" ({seat.conversations} conversation(s) started). Deleting it takes it out of the"
        " experiment's summary and reports, and the experiment counts that conversation as not"
        " run: Experiments ▸ Experiments… ▸ Resume runs it again, as a new session."
    )


class SessionLibraryDialog(QDialog):
    """Saved sessions of one database: open, start a new one like it, export, delete.

    Attributes:
        confirm: asks a yes/no question (the delete confirmation); replaceable in tests.
        ask_database_path: asks for a database file to open; ``None`` when cancelled.
        ask_export_path: asks for an export file; ``(path, format)`` or ``None`` when cancelled.
    """

    open_requested = Signal(str, str)  # db path, session id
    new_like_requested = Signal(str, str)  # db path, session id
    rate_requested = Signal(str, str)  # db path, session id (rate it blind)

    def __init__(
        self, db_path: str | os.PathLike[str] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Saved sessions")
        self.db: sqlite_utils.Database | None = None
        self.db_path: str = ""
        self.confirm: Callable[[str], bool] = self._ask_yes_no
        self.ask_database_path: Callable[[], str | None] = self._ask_database_path
        self.ask_export_path: Callable[[], tuple[str, str] | None] = self._ask_export_path
        self._build()
        if db_path is not None:
            self.set_database(db_path)
        fit_window(self, (980, 560))

    # -- building --------------------------------------------------------------------------------

    def _build(self) -> None:
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.path_label = QLabel("")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_db_button = QPushButton("Open database…")
        top.addWidget(QLabel("Database:"))
        top.addWidget(self.path_label, 1)
        self.count_label = QLabel("")
        self.count_label.setStyleSheet("color:#666;")
        top.addWidget(self.count_label)
        top.addWidget(self.open_db_button)
        lay.addLayout(top)

        filters = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search participants or message text…")
        self.search.setClearButtonEnabled(True)
        self.status_filter = self._combo("All statuses")
        self.condition_filter = self._combo("All conditions")
        self.engine_filter = self._combo("All engines")
        filters.addWidget(self.search, 1)
        for combo in (self.status_filter, self.condition_filter, self.engine_filter):
            filters.addWidget(combo)
        lay.addLayout(filters)

        self.model = SessionTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setResizeContentsPrecision(60)  # fitting stays fast
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(PARTICIPANTS_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        self.placeholder = placeholder_label(
            EMPTY_TEXT, style="color:#666; font-size:14px; padding:24px;"
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.placeholder)
        lay.addWidget(self.stack, 1)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        lay.addWidget(self.message)

        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open")
        self.open_button.setDefault(True)
        self.new_like_button = QPushButton("New session like this")
        self.rate_button = QPushButton("Rate blind…")
        self.rate_button.setToolTip(
            "Watch it as a rater would (no thoughts, scores or settings) and rate it"
        )
        self.export_button = QPushButton("Export…")
        self.delete_button = QPushButton("Delete…")
        self.close_button = QPushButton("Close")
        for b in (
            self.open_button,
            self.new_like_button,
            self.rate_button,
            self.export_button,
            self.delete_button,
        ):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        lay.addLayout(buttons)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _: self._debounce.start())
        for combo in (self.status_filter, self.condition_filter, self.engine_filter):
            combo.currentIndexChanged.connect(lambda _: self.refresh())
        self.open_db_button.clicked.connect(self.choose_database)
        self.table.doubleClicked.connect(lambda _: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.open_button.clicked.connect(self.open_selected)
        self.new_like_button.clicked.connect(self.new_like_selected)
        self.rate_button.clicked.connect(self.rate_selected)
        self.export_button.clicked.connect(lambda: self.export_selected())
        self.delete_button.clicked.connect(self.delete_selected)
        self.close_button.clicked.connect(self.reject)
        self._update_buttons()

    @staticmethod
    def _combo(all_label: str) -> QComboBox:
        combo = QComboBox()
        combo.addItem(all_label, None)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(14)
        return combo

    def _fit_columns(self) -> None:
        """Columns as wide as their contents (a long engine capped); participants take the rest."""
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        for col, title in enumerate(COLUMNS):
            if col == PARTICIPANTS_COLUMN:
                continue
            width = max(self.table.sizeHintForColumn(col), metrics.horizontalAdvance(title) + 24)
            header.resizeSection(col, min(width, 180) if col == ENGINE_COLUMN else width)

    # -- database --------------------------------------------------------------------------------

    def set_database(self, path: str | os.PathLike[str]) -> bool:
        """Show another database. A missing file shows as empty (nothing is created); a corrupt
        or foreign file shows the error here and the previous database stays."""
        path = str(path)
        db = None
        if Path(path).exists():
            try:
                db = open_database(path, create=False)
            except errors.PlaygroundError as exc:
                self.show_error(str(exc))
                return False
        if self.db is not None:
            self.db.close()
        self.db, self.db_path = db, path
        self.path_label.setText(path)
        self.path_label.setToolTip(str(Path(path).resolve()))
        self.message.clear()
        self._fill_filters()
        self.refresh()
        return True

    def choose_database(self) -> bool:
        path = self.ask_database_path()
        return bool(path) and self.set_database(path or "")

    def _fill_filters(self) -> None:
        values = library.facets(self.db) if self.db is not None else {}
        for column, combo in (
            ("status", self.status_filter),
            ("condition", self.condition_filter),
            ("engine", self.engine_filter),
        ):
            current = combo.currentData()
            combo.blockSignals(True)
            while combo.count() > 1:
                combo.removeItem(1)
            for v in values.get(column, []):
                combo.addItem(v, v)
            combo.setCurrentIndex(max(0, combo.findData(current)) if current else 0)
            combo.blockSignals(False)

    def refresh(self) -> None:
        """Re-query the database with the current search and filters; keeps the selection."""
        self._debounce.stop()
        keep = set(self.selected_ids())
        rows: list[library.SessionSummary] = []
        total = 0
        if self.db is not None:
            try:
                total = library.count_sessions(self.db)
                rows = library.list_sessions(
                    self.db,
                    search=self.search.text() or None,
                    status=self.status_filter.currentData(),
                    condition=self.condition_filter.currentData(),
                    engine=self.engine_filter.currentData(),
                )
            except Exception as exc:  # noqa: BLE001 - shown in the dialog (a file changed under us)
                self.show_error(f"{self.db_path}: cannot read the sessions ({exc})")
        self.model.set_rows(rows)
        self._fit_columns()
        shown = f"{len(rows)} of {total}" if len(rows) != total else str(total)
        self.count_label.setText(f"{shown} session{'' if total == 1 else 's'}")
        self.placeholder.setText(EMPTY_TEXT if total == 0 else NO_MATCH_TEXT)
        self.stack.setCurrentWidget(self.table if rows else self.placeholder)
        for sid in keep:
            self.select_session(sid, clear=False)
        self._update_buttons()

    # -- selection -------------------------------------------------------------------------------

    def proxy_row(self, session_id: str) -> int:
        """The row where a session is shown, or -1."""
        for r in range(self.proxy.rowCount()):
            if self.session_at(r).id == session_id:
                return r
        return -1

    def session_at(self, row: int) -> library.SessionSummary:
        return self.model.rows[self.proxy.mapToSource(self.proxy.index(row, 0)).row()]

    def select_session(self, session_id: str, *, clear: bool = True) -> bool:
        row = self.proxy_row(session_id)
        sel = self.table.selectionModel()
        if clear:
            sel.clearSelection()
        if row < 0:
            return False
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        sel.select(self.proxy.index(row, 0), flags)
        sel.setCurrentIndex(self.proxy.index(row, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
        self.table.scrollTo(self.proxy.index(row, 0))
        return True

    def selected(self) -> list[library.SessionSummary]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.session_at(r) for r in rows]

    def selected_ids(self) -> list[str]:
        return [s.id for s in self.selected()]

    def _update_buttons(self) -> None:
        n = len(self.table.selectionModel().selectedRows())
        for b in (self.open_button, self.new_like_button, self.rate_button, self.delete_button):
            b.setEnabled(n == 1)
        self.export_button.setEnabled(n >= 1)

    def _one(self) -> library.SessionSummary | None:
        chosen = self.selected()
        if len(chosen) != 1:
            self.show_error("Select one session first.")
            return None
        return chosen[0]

    # -- actions ---------------------------------------------------------------------------------

    def open_selected(self) -> None:
        s = self._one()
        if s is not None:
            self.open_requested.emit(self.db_path, s.id)
            self.accept()

    def new_like_selected(self) -> None:
        s = self._one()
        if s is not None:
            self.new_like_requested.emit(self.db_path, s.id)
            self.accept()

    def rate_selected(self) -> None:
        s = self._one()
        if s is not None:
            self.rate_requested.emit(self.db_path, s.id)
            self.accept()

    def export_selected(self, path: str | None = None, fmt: str | None = None) -> int | None:
        """Export the selected sessions; asks for the file unless given. Returns the count written."""
        ids = self.selected_ids()
        if not ids or self.db is None:
            self.show_error("Select the sessions to export first.")
            return None
        if path is None:
            answer = self.ask_export_path()
            if answer is None:
                return None
            path, fmt = answer
        fmt = fmt or {".json": "json", ".csv": "csv"}.get(Path(path).suffix.lower(), "jsonl")
        try:
            written = write_export(self.db, ids, path, cast(ExportFormat, fmt))
        except errors.PlaygroundError as exc:
            self.show_error(f"Export: {exc}")
            return None
        self.show_info(f"Exported {len(ids)} session(s) to {path} ({fmt}).")
        return int(written)

    def delete_selected(self) -> bool:
        """Delete the selected session after confirmation. Returns whether it was deleted."""
        s = self._one()
        if s is None or self.db is None:
            return False
        who = ", ".join(s.names) or "no participants"
        question = (
            f"Delete session {s.id} ({local_time(s.created_at)}, {who})?\n\n"
            f"{s.turns} message(s) and {s.ratings} rating record(s) will be lost. "
            "This cannot be undone."
        )
        seat = library.experiment_seat(self.db, s.id) if s.experiment_id else None
        if seat is not None:
            question += "\n\n" + in_experiment(seat)
        if not self.confirm(question):
            return False
        try:
            library.delete_session(self.db, s.id)
        except errors.PlaygroundError as exc:
            self.show_error(f"Delete: {exc}")
            return False
        self._fill_filters()
        self.refresh()
        self.show_info(f"Deleted session {s.id}.")
        return True

    # -- messages and questions ----------------------------------------------------------------

    def show_error(self, text: str) -> None:
        show_warning(self.message, text)

    def show_info(self, text: str) -> None:
        show_status(self.message, text, "#2e7d32")

    def _ask_yes_no(self, question: str) -> bool:
        answer = QMessageBox.question(self, "Delete session", question)
        return answer == QMessageBox.StandardButton.Yes

    def _ask_database_path(self) -> str | None:
        return ask_database_path(self, str(Path(self.db_path).parent) if self.db_path else "")

    def _ask_export_path(self) -> tuple[str, str] | None:
        ids = self.selected_ids()
        name = f"{ids[0]}.jsonl" if len(ids) == 1 else "sessions.jsonl"
        start = str(Path(self.db_path).parent / name) if self.db_path else name
        path, chosen = QFileDialog.getSaveFileName(
            self,
            "Export sessions",
            start,
            ";;".join(EXPORT_FILTERS),
            options=file_options(),
        )
        if not path:
            return None
        by_suffix = {".json": "json", ".csv": "csv", ".jsonl": "jsonl"}
        fmt = by_suffix.get(Path(path).suffix.lower()) or EXPORT_FILTERS.get(chosen, "jsonl")
        return path, fmt

    def done(self, result: int) -> None:
        """Closing releases the connection."""
        super().done(result)
        if self.db is not None:
            self.db.close()
            self.db = None
