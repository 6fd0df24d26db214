"""The decision strip: for the latest trigger, each agent's best score against its thresholds and why."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.bridge import EngineBridge


class DecisionStrip(QWidget):
    """Why each agent spoke or stayed silent at the latest trigger (Algorithm 1, made visible)."""

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.title = QLabel("<b>Decisions</b> — waiting for the first trigger")
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Agent", "Decision", "Best / threshold", "Why"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        h = self.table.horizontalHeader()
        for i in range(3):
            h.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.table.setMaximumHeight(150)
        lay.addWidget(self.title)
        lay.addWidget(self.table)
        bridge.trigger_fired.connect(self._trigger)
        bridge.decision_made.connect(self._decision)

    def reset(self) -> None:
        self.table.setRowCount(0)
        self.title.setText("<b>Decisions</b> — waiting for the first trigger")

    def rows(self) -> list[list[str]]:
        """The table as text, one list of four cells per agent (for tests and export)."""
        out = []
        for r in range(self.table.rowCount()):
            cells = [self.table.item(r, c) for c in range(4)]
            out.append([c.text() if c is not None else "" for c in cells])
        return out

    def _trigger(self, e) -> None:  # noqa: ANN001
        self.table.setRowCount(0)
        what = f"new message #{e.message_id}" if e.trigger == "new_message" else "pause (silence)"
        self.title.setText(f"<b>Decisions</b> — step {e.step}, trigger: {what}")

    def _decision(self, d) -> None:  # noqa: ANN001
        r = self.table.rowCount()
        self.table.insertRow(r)
        best = "–" if d.score is None else f"{d.score:.2f}"
        thr = "" if d.threshold is None else f" / {d.threshold:g}"
        if d.action != "speak":
            action = "silent"
        elif d.turn_type == "allocated-other":
            action = "interrupts"  # takes a turn allocated to someone else
        else:
            action = "speaks"
        cells = [d.agent, action, best + thr, d.reason]
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(d.reason)
            if d.action == "speak":
                item.setBackground(QColor("#e8f5e9"))
            self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
