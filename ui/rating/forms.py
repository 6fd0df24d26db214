"""Likert forms: one row of seven radio buttons per statement, 1 strongly disagree … 7 strongly agree."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGridLayout,
    QLabel,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

LOW_LABEL = "strongly disagree"
HIGH_LABEL = "strongly agree"
POINTS = range(1, 8)


class LikertRow(QFrame):
    """A statement and its 1–7 scale."""

    changed = Signal()

    def __init__(self, item: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setObjectName("likert")
        self.setStyleSheet("#likert { border-bottom:1px solid #e6e6e6; }")
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 6, 4, 6)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        self.statement = QLabel(f"<b>{html.escape(item.label)}</b> — {html.escape(item.statement)}")
        self.statement.setWordWrap(True)
        grid.addWidget(self.statement, 0, 0, 1, 9)
        low = QLabel(LOW_LABEL)
        high = QLabel(HIGH_LABEL)
        for lab, align in (
            (low, Qt.AlignmentFlag.AlignRight),
            (high, Qt.AlignmentFlag.AlignLeft),
        ):
            lab.setStyleSheet("color:#666; font-size:9pt;")
            lab.setAlignment(align | Qt.AlignmentFlag.AlignVCenter)
        grid.addWidget(low, 1, 0)
        self.group = QButtonGroup(self)
        self.buttons: dict[int, QRadioButton] = {}
        for col, value in enumerate(POINTS, start=1):
            b = QRadioButton(str(value))
            b.setAccessibleName(f"{item.label}: {value}")
            self.group.addButton(b, value)
            self.buttons[value] = b
            grid.addWidget(b, 1, col, Qt.AlignmentFlag.AlignHCenter)
        grid.addWidget(high, 1, 8)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(8, 1)
        self.group.idClicked.connect(lambda _v: self.changed.emit())

    def value(self) -> int | None:
        v = self.group.checkedId()
        return v if v in self.buttons else None

    def set_value(self, value: int | None) -> None:
        if value in self.buttons:
            self.buttons[value].setChecked(True)
        else:
            self.group.setExclusive(False)
            for b in self.buttons.values():
                b.setChecked(False)
            self.group.setExclusive(True)


class LikertForm(QWidget):
    """A scrollable list of :class:`LikertRow`; ``changed`` fires on every answer."""

    changed = Signal()

    def __init__(self, items: Sequence[Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: dict[str, LikertRow] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QWidget()
        il = QVBoxLayout(inner)
        il.setContentsMargins(0, 0, 4, 0)
        il.setSpacing(0)
        for item in items:
            row = LikertRow(item)
            row.changed.connect(self.changed)
            self.rows[item.key] = row
            il.addWidget(row)
        il.addStretch(1)
        scroll.setWidget(inner)
        lay.addWidget(scroll)

    def values(self) -> dict[str, int]:
        """The answered statements, key → 1..7."""
        out = {}
        for key, row in self.rows.items():
            v = row.value()
            if v is not None:
                out[key] = v
        return out

    def set_values(self, values: dict[str, int]) -> None:
        for key, row in self.rows.items():
            row.set_value(values.get(key))

    def answered(self) -> int:
        return len(self.values())

    def is_complete(self) -> bool:
        return self.answered() == len(self.rows)

    def missing(self) -> int:
        """How many statements are not answered yet."""
        return len(self.rows) - self.answered()

    def progress_text(self) -> str:
        """``"3 statements left."``, or ``"All answered."``."""
        missing = self.missing()
        if not missing:
            return "All answered."
        return f"{missing} statement{'s' if missing > 1 else ''} left."

    def choose(self, key: str, value: int) -> None:
        """Answer one statement as a click would (tests, keyboard-free use)."""
        self.rows[key].buttons[value].click()
