"""Typed reads of Qt item views for the UI tests (PySide6 types an item as ``... | None``)."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget, QTableWidgetItem


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    """The item at (row, column); a test fails here, by name, where a cell is missing."""
    item = table.item(row, column)
    assert item is not None, f"no item at row {row}, column {column}"
    return item


def header(table: QTableWidget, column: int) -> QTableWidgetItem:
    """The horizontal header item of ``column``."""
    item = table.horizontalHeaderItem(column)
    assert item is not None, f"no header item for column {column}"
    return item
