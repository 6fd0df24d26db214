"""PNG plots of a ratings report: diverging Likert bars and pairwise preference shares.

Figures are built with ``matplotlib.figure.Figure`` and drawn by ``FigureCanvasAgg`` directly, so
no pyplot state is shared between threads and no display or GUI backend is ever needed (the Qt
app shows the same PNG bytes in a QLabel).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TextIO

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from playground.rating.store import CONVERSATION_METRICS
from playground.report.model import Report

SCALE = {1: "strongly disagree", 4: "neutral", 7: "strongly agree"}
CONDITION_COLOURS = ["#3b6fb6", "#e08a2c", "#4a9b5f", "#9a5ab8", "#c2453d", "#7f7f7f"]


def _likert_colours() -> list[tuple[float, float, float, float]]:
    """Seven colours, red (1) through light grey (4) to blue (7)."""
    cmap = colormaps["RdBu"]
    colours = [cmap(x) for x in np.linspace(0.08, 0.92, 7)]
    colours[3] = (0.86, 0.86, 0.86, 1.0)
    return colours


def _figure(width: float, height: float, *, left: float, top: float, bottom: float) -> Figure:
    """A figure with fixed margins in inches (a layout engine would cost a second draw)."""
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    fig.subplots_adjust(
        left=left / width, right=1 - 0.2 / width, top=1 - top / height, bottom=bottom / height
    )
    return fig


def _label_inches(labels: list[str], points: float = 10) -> float:
    """A generous estimate of the width of the longest label, in inches."""
    return (
        0.15 + max((len(x) for line in labels for x in line.split("\n")), default=0) * points / 115
    )


def likert_figure(report: Report) -> Figure:
    """Stacked horizontal Likert bars, one per (metric, condition), centred on the neutral 4.

    Each bar shows the share of each rating 1..7; the neutral share straddles zero, so
    disagreement extends left and agreement right, as in the paper's figure.
    """
    labels = {m.key: m.label for m in CONVERSATION_METRICS}
    rows = [m for m in report.metrics if m.n]
    conditions = [c for c in report.conditions if any(m.condition == c for m in rows)]
    metrics = [k for k in labels if any(m.metric == k for m in rows)]
    colours = _likert_colours()
    height = max(3.0, 1.3 + 0.34 * (len(metrics) * (len(conditions) + 1.4)))
    margin = _label_inches([labels[k] for k in metrics] + [f"{c}  " for c in conditions], 10.5)
    fig = _figure(10.0, height, left=margin, top=0.45, bottom=0.95)
    ax = fig.add_subplot()
    ticks: list[float] = []
    tick_labels: list[str] = []
    headings: list[int] = []
    notes: list[tuple[float, str]] = []
    extent = 50.0
    y = 0.0
    for key in metrics:
        ticks.append(y)
        tick_labels.append(labels[key])
        headings.append(len(ticks) - 1)
        y += 1.0
        for cond in conditions:
            m = next((r for r in rows if r.metric == key and r.condition == cond), None)
            if m is None:
                continue
            shares = np.array([m.distribution[v] for v in range(1, 8)], dtype=float) / m.n * 100
            left = -(shares[:3].sum() + shares[3] / 2)
            lefts = left + np.concatenate([[0.0], np.cumsum(shares)[:-1]])
            ax.barh([y] * 7, shares, left=lefts, height=0.78, color=colours, edgecolor="white")
            extent = max(extent, -left, left + shares.sum())
            for v, share in enumerate(shares):
                if share >= 7:
                    dark = v in (0, 6)
                    ax.text(left + share / 2, y, f"{share:.0f}", ha="center", va="center",
                            fontsize=7, color="white" if dark else "black")  # fmt: skip
                left += share
            notes.append((y, f"n={m.n}  median {m.median:g}"))
            ticks.append(y)
            tick_labels.append(f"{cond}  ")
            y += 1.0
        y += 0.4
    ax.set_yticks(ticks, tick_labels)
    for i, label in enumerate(ax.get_yticklabels()):
        if i in headings:
            label.set_fontweight("bold")
        else:
            label.set_fontsize(9)
    ax.tick_params(axis="y", length=0)
    ax.invert_yaxis()
    ax.axvline(0, color="#444444", linewidth=0.8)
    # Symmetric around neutral, wide enough for the longest bar, with room for the n/median notes.
    reach = int(min(100, 25 * np.ceil(extent / 25)))
    for y_note, note in notes:
        ax.text(reach * 1.03, y_note, note, va="center", fontsize=8)
    ax.set_xlim(-reach, reach * 1.3)
    ax.set_xticks(
        range(-reach, reach + 1, 25), [f"{abs(t)}%" for t in range(-reach, reach + 1, 25)]
    )
    ax.set_xlabel("share of ratings (disagree ← neutral centred on 0 → agree)")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.suptitle("Conversation ratings by condition (1 = strongly disagree, 7 = strongly agree)")
    handles = [
        Patch(color=colours[v - 1], label=f"{v}" + (f" {SCALE[v]}" if v in SCALE else ""))
        for v in range(1, 8)
    ]
    fig.legend(handles=handles, loc="lower center", ncols=7, fontsize=8, frameon=False)
    return fig


def preference_figure(report: Report) -> Figure:
    """Share of pairwise choices per condition pair, with Wilson 95 % intervals and a 50 % line."""
    prefs = report.preferences
    pair_labels = [f"{s.condition_a}\nvs {s.condition_b}\nn={s.n}, p={s.p:.3g}" for s in prefs]
    height = 1.4 + 1.0 * len(prefs)
    fig = _figure(9.0, height, left=_label_inches(pair_labels, 9), top=0.4, bottom=0.65)
    ax = fig.add_subplot()
    colour = {
        c: CONDITION_COLOURS[i % len(CONDITION_COLOURS)] for i, c in enumerate(report.conditions)
    }
    for y, s in enumerate(prefs):
        a, b = s.shares
        ax.barh(y, a.share * 100, color=colour[a.condition], height=0.4)
        ax.barh(y, b.share * 100, left=a.share * 100, color=colour[b.condition], height=0.4)
        err = [[(a.share - a.ci_low) * 100], [(a.ci_high - a.share) * 100]]
        ax.errorbar(a.share * 100, y, xerr=err, fmt="none", ecolor="black", capsize=5, lw=1.4)
        for x, share, ha in ((0.5, a, "left"), (99.5, b, "right")):
            ax.text(x, y - 0.25, f"{share.condition}: {share.chosen} ({100 * share.share:.0f}%)",
                    ha=ha, va="bottom", fontsize=9, color=colour[share.condition],
                    fontweight="bold")  # fmt: skip
    ax.axvline(50, color="#222222", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(prefs)), pair_labels, fontsize=9)
    ax.set_ylim(len(prefs) - 0.5, -0.75)
    ax.set_xlim(0, 100)
    ax.set_xticks(range(0, 101, 10), [f"{t}%" for t in range(0, 101, 10)])
    ax.set_xlabel("share of pairwise choices (error bar: Wilson 95% interval; dashed: 50%)")
    fig.suptitle("Which conversation was more natural?")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def figure_png(fig: Figure, dpi: int = 120) -> bytes:
    """Render a figure to PNG bytes with the Agg canvas."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def write_plots(
    report: Report, directory: Path, *, dpi: int = 120, log: TextIO | None = None
) -> list[Path]:
    """Write ``likert.png`` and ``preference.png`` into ``directory`` (created if needed).

    A plot with nothing to show is skipped, with a line saying so on ``log``.

    Returns:
        The paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    plots = [
        ("likert.png", report.counts.conversation_ratings > 0, likert_figure, "conversation ratings"),
        ("preference.png", bool(report.preferences), preference_figure, "pairwise preferences between conditions"),
    ]  # fmt: skip
    for name, has_data, make, what in plots:
        if not has_data:
            if log is not None:
                print(f"skipped {name}: no {what}", file=log)
            continue
        path = directory / name
        path.write_bytes(figure_png(make(report), dpi=dpi))
        written.append(path)
    return written
