"""The Study plans window's two tables — the plans in the database and the selected plan's
conversations: their columns, their colours and how their rows are filled."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidget

from playground.study.lock import PlanStatus
from ui.study_plans.run import CONDITION_LABELS
from ui.widgets.tool_window import read_only_item as _item

PLAN_COLUMNS = ["Plan", "Created", "Group", "People", "Status", "Conversations", "Order"]
STEP_COLUMNS = ["#", "Condition", "Agent", "Topic", "Session", "Status"]
COLORS = {"running": "#1565c0", "done": "#2e7d32", "stopped": "#ef6c00", "idle": "#333333"}


def plan_status(row: dict[str, Any], live: str | None) -> tuple[str, str]:
    """What the Status column says of a plan, and its colour key."""
    if row["id"] == live:
        return "▶ running here", "running"
    state: PlanStatus = row["state"]
    if state.state == "done":
        return "done", "done"
    if state.state == "running" and state.runner is not None:
        where = state.runner["address"] or "not listening yet"
        return f"running elsewhere: process {state.runner['pid']} at {where}", "running"
    if state.state == "not started":
        return "not started: Resume runs it", "stopped"
    return "stopped: Resume goes on", "stopped"


def fill_plans(table: QTableWidget, rows: list[dict[str, Any]], live: str | None) -> list[str]:
    """One row per plan of :func:`ui.study_plans.run.plan_rows` (newest first); ``live`` is the
    plan running in this window. Returns the ids in row order."""
    table.setRowCount(len(rows))
    for i, r in enumerate(rows):
        status, colour = plan_status(r, live)
        order = ", ".join(CONDITION_LABELS.get(c, c) for c in r["conditions"])
        cells = [
            _item(r["id"], r["id"]),
            _item((r["created_at"] or "")[:16].replace("T", " ")),
            _item(r["grp"], right=True),
            _item(r["humans"], right=True),
            _item(status),
            _item(f"{r['done']}/{r['of']} done", right=True),
            _item(order),
        ]
        cells[4].setForeground(QColor(COLORS[colour]))
        for col, cell in enumerate(cells):
            cell.setToolTip(cell.text())
            table.setItem(i, col, cell)
    return [r["id"] for r in rows]


def step_status(status: str, live: bool) -> tuple[str, str]:
    """What the Status column says of a plan's conversation, and its colour key."""
    if status == "done":
        return "done", "done"
    if status == "pending":
        return "not started", "idle"
    if live:
        return ("talking" if status == "talking" else "review and questions"), "running"
    if status == "talking":
        return "cut short: runs again as a new session on Resume", "stopped"
    return "cut short in its review: the review reopens on Resume", "stopped"


def fill_steps(
    table: QTableWidget, steps: list[dict[str, Any]], live: bool, keep: str | None
) -> None:
    """One row per conversation of a plan (``live``: the plan runs here); the row of session
    ``keep`` stays selected."""
    table.setRowCount(len(steps))
    for i, s in enumerate(steps):
        status, colour = step_status(s["status"], live)
        cells = [
            _item(s["position"], right=True),
            _item(CONDITION_LABELS.get(s["condition"], s["condition"])),
            _item(s["agent"] if s["agent"] == s["persona"] else f"{s['agent']} ({s['persona']})"),
            _item(s["topic"]),
            _item(s["session_id"] or "—", s["session_id"] or ""),
            _item(status),
        ]
        cells[-1].setForeground(QColor(COLORS[colour]))
        for col, cell in enumerate(cells):
            cell.setToolTip(cell.text())
            table.setItem(i, col, cell)
        if keep and s["session_id"] == keep:
            table.selectRow(i)
