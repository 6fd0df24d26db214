"""The Experiments window's three tables — the experiments in the database, the summary per
condition and each conversation's run: their columns, their colours and how their rows are
filled from what :mod:`playground.experiments.results` reads."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidget

from playground.experiments import results as experiment_report
from ui.widgets.tool_window import fit_height as _fit_height
from ui.widgets.tool_window import read_only_item as _item

EXPERIMENT_COLUMNS = ["Experiment", "Name", "Conditions", "Design", "Engine", "Runs"]
RUN_COLUMNS = [
    "Draw",
    "Condition",
    "Status",
    "Attempts",
    "Messages",
    "Participants",
    "Session",
    "Error",
]
STATUS_COLORS = {
    "finished": "#2e7d32",
    "failed": "#c62828",
    "interrupted": "#ef6c00",
    "running": "#1565c0",
}


def fill_experiments(
    table: QTableWidget, found: list[dict[str, Any]], live: str | None
) -> list[str]:
    """One row per experiment of ``list_experiments``, newest first; ``live`` is the id of the
    experiment running in this window. Returns the ids in row order."""
    table.setRowCount(len(found))
    for i, e in enumerate(reversed(found)):  # newest first
        design = (
            f"{e['conversations']} conv. × {e['agents']} agents × {e['turns']} turns,"
            f" seed {e['seed']}"
        )
        unfinished = e["interrupted"] + e["running"]
        runs = f"{e['finished']}/{e['planned']} finished"
        if e["failed"]:
            runs += f" · {e['failed']} failed"
        if unfinished and e["id"] != live:
            runs += f" · {unfinished} unfinished"
        if e["id"] == live:
            runs = "▶ running · " + runs
        created = f"created {(e['created_at'] or '')[:19].replace('T', ' ')}"
        cells = [
            _item(e["id"], e["id"]),
            _item(e["name"] or ""),
            _item(", ".join(e["conditions"])),
            _item(design),
            _item(e["model"] or e["engine"] or ""),
            _item(runs),
        ]
        if e["id"] == live:
            cells[-1].setForeground(QColor(STATUS_COLORS["running"]))
        elif e["failed"]:
            cells[-1].setForeground(QColor(STATUS_COLORS["failed"]))
        for col, cell in enumerate(cells):
            cell.setToolTip(created if col < 2 else cell.text())
            table.setItem(i, col, cell)
    return [e["id"] for e in reversed(found)]


def fill_summary(table: QTableWidget, rows: list[experiment_report.ConditionSummary]) -> None:
    """One row per condition, its columns those of ``playground experiments ID``."""
    table.setRowCount(len(rows))
    for i, r in enumerate(rows):
        for col, (key, _label) in enumerate(experiment_report.COLUMNS):
            value = getattr(r, key)
            table.setItem(i, col, _item(experiment_report._cell(value), right=col > 0))
    _fit_height(table, max(len(rows), 1))


def fill_runs(table: QTableWidget, rows: list[dict[str, Any]], keep: str | None) -> None:
    """One row per conversation run of ``results.runs``; the row of session ``keep`` stays
    selected."""
    table.setRowCount(len(rows))
    for i, r in enumerate(rows):
        try:
            people = ", ".join(json.loads(r["participants"] or "[]"))
        except ValueError:
            people = str(r["participants"] or "")
        error = r["error"] if r["error"] and r["status"] != "finished" else ""
        status = _item(r["status"])
        status.setForeground(QColor(STATUS_COLORS.get(r["status"], "#333333")))
        cells = [
            _item(r["draw"], right=True),
            _item(r["condition"]),
            status,
            _item(r["attempts"], right=True),
            _item(r["messages"], right=True),
            _item(people),
            _item(r["session_id"] or "—", r["session_id"] or ""),
            _item(error),
        ]
        if error:
            cells[-1].setToolTip(error)
        for col, cell in enumerate(cells):
            table.setItem(i, col, cell)
        if keep and r["session_id"] == keep:
            table.selectRow(i)
