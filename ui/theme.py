"""Participant colours and shared styling."""

from __future__ import annotations

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


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]
