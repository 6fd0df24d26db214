"""What the separate windows (Experiments, STORM dialogues, the rating windows) share: the window
itself, opening one at a time and bringing it to the front, their read-only tables, buttons and
scrolling white pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHeaderView,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.screen_fit import fit_window


class ToolWindow(QWidget):
    """A top-level window of its own, owned by the main window (deleted with it).

    Args:
        title: The window title.
        size: The (width, height) in pixels it opens at when its screen has room and it was
            never resized (see :mod:`ui.screen_fit`).
        parent: The main window, or None for a window of its own (tests).
    """

    def __init__(self, title: str, size: tuple[int, int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if parent is not None:
            self.setWindowFlag(Qt.WindowType.Window)
        self.setWindowTitle(title)
        fit_window(self, size)  # no larger than its screen; the size it was last given

    def refresh(self) -> None:
        """Read what the window shows again (the windows that show data override it)."""


class SessionsWindow(ToolWindow):
    """A tool window over the main window's session database that opens sessions in replay.

    A subclass is titled :attr:`TITLE` and lays itself out in :meth:`_build`, which the
    constructor calls last (the attributes below are set by then).

    Args:
        controller: The main window's session controller (``db_path``, ``database()``).
        open_replay: Opens ``(database path, session id)`` in the main window's replay.
        parent: The main window, or None.

    Attributes:
        db_path: The database shown, as a string.
        open_replay_at: ``open_replay``.
    """

    #: The window title.
    TITLE = ""

    def __init__(
        self,
        controller: Any,
        open_replay: Callable[[str, str], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(self.TITLE, (1440, 900), parent)
        self.controller = controller
        self.open_replay_at = open_replay
        self.db_path = str(controller.db_path)
        self._build()

    def _build(self) -> None:
        """Lay the window out and connect its parts."""
        raise NotImplementedError


W = TypeVar("W", bound=QWidget)
T = TypeVar("T", bound=ToolWindow)


def bring_to_front(w: W) -> W:
    """Show ``w``, raise it above the other windows and give it the focus."""
    w.show()
    w.raise_()
    w.activateWindow()
    return w


def show_single(current: T | None, make: Callable[[], T]) -> T:
    """The one window of a kind: ``current`` refreshed, or a new one from ``make``, in front.

    Args:
        current: The window opened before (None: none yet).
        make: Builds the window the first time.

    Returns:
        The window shown.
    """
    if current is None:
        current = make()
    else:
        current.refresh()
    return bring_to_front(current)


def read_only_item(text: object, data: object = None, *, right: bool = False) -> QTableWidgetItem:
    """A selectable, non-editable cell; ``data`` goes under ``Qt.UserRole``; ``right`` aligns
    numbers to the right. ``None`` shows as an empty cell."""
    item = QTableWidgetItem("" if text is None else str(text))
    item.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
    if data is not None:
        item.setData(Qt.ItemDataRole.UserRole, data)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def read_only_table(columns: list[str], stretch: int | None = None) -> QTableWidget:
    """A table of whole-row single selection, not editable, 22 px rows, columns sized to their
    contents (``stretch``: the column that takes the spare width)."""
    t = QTableWidget(0, len(columns))
    t.setHorizontalHeaderLabels(columns)
    t.verticalHeader().setVisible(False)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setAlternatingRowColors(True)
    t.setWordWrap(False)
    header = t.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if stretch is not None:
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    t.verticalHeader().setDefaultSectionSize(22)
    return t


def fit_height(table: QTableWidget, rows: int) -> None:
    """Make ``table`` exactly as tall as its header and ``rows`` rows."""
    h = table.horizontalHeader().sizeHint().height()
    h += rows * table.verticalHeader().defaultSectionSize() + 2 * table.frameWidth()
    table.setFixedHeight(h)


def min_rows(table: QTableWidget, rows: int) -> None:
    """Keep ``table`` at least as tall as its header and ``rows`` rows (it may grow)."""
    h = table.horizontalHeader().sizeHint().height()
    table.setMinimumHeight(h + rows * table.verticalHeader().defaultSectionSize() + 4)


def selected_data(table: QTableWidget, column: int = 0) -> object:
    """The ``Qt.UserRole`` data of the selected row's cell in ``column`` (None: no selection)."""
    rows = table.selectionModel().selectedRows()
    item = table.item(rows[0].row(), column) if rows else None
    return item.data(Qt.ItemDataRole.UserRole) if item is not None else None


def group_box(title: str, *widgets: QWidget) -> QGroupBox:
    """``widgets`` one above the other in a titled box with narrow margins."""
    box = QGroupBox(title)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(6, 4, 6, 6)
    for w in widgets:
        lay.addWidget(w)
    return box


def button(text: str, tip: str, on_click: Callable[[], object]) -> QPushButton:
    """A push button with a tooltip that calls ``on_click`` when clicked."""
    b = QPushButton(text)
    b.setToolTip(tip)
    b.clicked.connect(on_click)
    return b


def white_page(name: str) -> tuple[QScrollArea, QWidget]:
    """A scroll area that scrolls vertically only, and its page: a white widget named ``name``,
    to be laid out and then set as the area's widget."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    page = QWidget()
    page.setObjectName(name)
    page.setStyleSheet(f"#{name} {{ background:white; }}")
    return area, page
