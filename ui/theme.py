"""Participant colours and shared styling."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel

PALETTE = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
]
HUMAN_COLOR = "#333333"
BADGE_ID = "#111111"
BADGE_SALIENCY = "#ffffff"
BADGE_SCORE = "#c62828"
EXPRESSED_BG = "#fff7d6"
HIGHLIGHT_BG = "#d8ecff"
#: A status line's colour when something went wrong.
WARNING_COLOR = "#c62828"


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def show_status(label: QLabel, text: str, color: str) -> None:
    """Say ``text`` on a window's status line, in ``color``."""
    label.setStyleSheet(f"color:{color};")
    label.setText(text)


def show_warning(label: QLabel, text: str) -> None:
    """Say what went wrong on a window's status line: ``⚠ text``, in red."""
    show_status(label, f"⚠ {text}", WARNING_COLOR)
