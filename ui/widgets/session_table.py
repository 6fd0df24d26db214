"""The library's table: one row per saved session, displayed readably, sorted by raw values."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from playground.storage import library

COLUMNS = (
    "Date",
    "Status",
    "Condition",
    "Engine · model",
    "Participants",
    "Turns",
    "Duration",
    "Calls · tokens",
    "Ratings",
)
STATUS_COLORS = {
    "finished": "#2e7d32",
    "interrupted": "#b26a00",
    "failed": "#c62828",
    "running": "#1565c0",
}
ENGINE_COLUMN, PARTICIPANTS_COLUMN = 3, 4
Index = QModelIndex | QPersistentModelIndex


def human_duration(seconds: float | None) -> str:
    """``45 s``, ``3 min 12 s``, ``1 h 05 min``; an em dash when unknown."""
    if seconds is None:
        return "—"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def local_time(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso[:16]


def engine_text(s: library.SessionSummary) -> str:
    if s.engine == "offline engine":
        return "offline engine"
    where = s.engine.removeprefix("OpenAI-compatible (").removesuffix(")")
    return f"{s.model} @ {where}"


class SessionTableModel(QAbstractTableModel):
    """Library rows; ``UserRole`` holds the raw value each column sorts by."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[library.SessionSummary] = []

    def set_rows(self, rows: list[library.SessionSummary]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        s, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(s, col)
        if role == Qt.ItemDataRole.UserRole:
            return self._key(s, col)
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return QColor(STATUS_COLORS.get(s.status, "#333333"))
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 5:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(s)
        return None

    @staticmethod
    def _text(s: library.SessionSummary, col: int) -> str:
        if col == 0:
            return local_time(s.created_at) + (" ↳" if s.parent_id else "")
        if col == 1:
            return s.status
        if col == 2:
            return s.condition or "—"
        if col == 3:
            return engine_text(s)
        if col == 4:
            return ", ".join(
                p.name + ("" if p.kind == "ai" else " (human)") for p in s.participants
            )
        if col == 5:
            return str(s.turns)
        if col == 6:
            return human_duration(s.duration)
        if col == 7:
            return f"{s.calls} · {s.tokens:,}"
        return str(s.ratings)

    @staticmethod
    def _key(s: library.SessionSummary, col: int) -> Any:
        if col == 0:
            return s.created_at
        if col in (1, 2, 4):
            return SessionTableModel._text(s, col).casefold()
        if col == 3:
            return engine_text(s).casefold()
        if col == 5:
            return s.turns
        if col == 6:
            return s.duration if s.duration is not None else -1.0
        if col == 7:
            return s.tokens * 1_000_000 + s.calls
        return s.ratings

    @staticmethod
    def _tooltip(s: library.SessionSummary) -> str:
        lines = [f"Session {s.id}", f"{s.status}: {s.end_reason or ''}".rstrip(": ")]
        lines.append(f"seed {s.seed} · preset {s.preset or '—'}")
        if s.parent_id:
            lines.append(f"fork of {s.parent_id} at message {s.fork_message}")
        if s.experiment_id:
            lines.append(f"experiment {s.experiment_id}")
        return "\n".join(lines)
