"""The ratings report view's work, done in a worker thread: the report, its text table and its
plots (no Qt here, so nothing in it may touch a widget).

Each job runs on a read-only connection of its own, opened and closed in the worker thread:
sqlite3 connections belong to the thread that made them, and the window's connection stays with
the GUI thread. A database in memory cannot be shared that way; the view then runs the same jobs
on the GUI thread, with the window's own connection (:func:`run_on`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from playground import errors
from playground.report import stats as report
from playground.report.model import Report
from playground.report.plots import figure_png, likert_figure, preference_figure
from playground.storage.database import open_read_only

#: The plots' resolution: as wide as the plot area, within these limits (dots per inch).
MIN_DPI, MAX_DPI = 70, 110
#: Pixels the plot area keeps free beside a plot (margins and the scroll bar).
PLOT_MARGIN = 24

T = TypeVar("T")


@dataclass(frozen=True)
class Plots:
    """The report's plots as PNG (None: that plot has nothing to show), drawn for a plot area
    ``width`` pixels wide."""

    likert: bytes | None
    preference: bytes | None
    width: int


@dataclass(frozen=True)
class Computed:
    """A report and its text table; ``plots`` is None for the step that adds the agreement (the
    plots do not depend on it)."""

    report: Report
    table: str
    plots: Plots | None = None


def run_on(source: Path | sqlite_utils.Database, job: Callable[..., T], *args: Any) -> T:
    """``job(db, *args)`` on a read-only connection of its own to the file ``source`` (closed
    afterwards), or on ``source`` itself when it is an open database (one in memory).

    Raises:
        PlaygroundError: the file cannot be opened; whatever ``job`` raises.
    """
    if not isinstance(source, Path):
        return job(source, *args)
    db = open_read_only(source)
    try:
        return job(db, *args)
    finally:
        db.close()


def _stopped(stop: threading.Event) -> None:
    if stop.is_set():
        raise errors.Cancelled("the report is no longer wanted")


def plot_dpi(inches: float, width: int) -> int:
    """The resolution at which a figure ``inches`` wide fills ``width`` pixels, within limits."""
    return min(MAX_DPI, max(MIN_DPI, int((width - PLOT_MARGIN) / inches)))


def render_plots(rep: Report, width: int, stop: threading.Event) -> Plots:
    """The Likert plot (when there are conversation ratings) and the preference plot (when there
    are preferences between conditions).

    Raises:
        Cancelled: ``stop`` was set.
    """
    likert = preference = None
    if rep.counts.conversation_ratings:
        _stopped(stop)
        fig = likert_figure(rep)
        likert = figure_png(fig, dpi=plot_dpi(float(fig.get_figwidth()), width))
    if rep.preferences:
        _stopped(stop)
        fig = preference_figure(rep)
        preference = figure_png(fig, dpi=plot_dpi(float(fig.get_figwidth()), width))
    return Plots(likert, preference, width)


def quick_part(
    db: sqlite_utils.Database, experiment: str | None, width: int, stop: threading.Event
) -> Computed:
    """Everything but the judge/geometry agreement: counts, statistics, table and plots (about a
    second at most).

    Raises:
        PlaygroundError: an unknown experiment.
        Cancelled: ``stop`` was set.
    """
    rep = report.build_report(db, experiment=experiment, agreement_options={"skip": True})
    _stopped(stop)
    plots = render_plots(rep, width, stop)
    return Computed(rep, report.render_table(rep), plots)


def with_agreement(db: sqlite_utils.Database, quick: Report, stop: threading.Event) -> Computed:
    """The report of :func:`quick_part` with the agreement added (leave-one-out regressions over
    every rated pair: seconds to tens of seconds), and its full text table.

    Raises:
        PlaygroundError: a bad agreement option.
        Cancelled: ``stop`` was set.
    """
    rep = report.with_agreement(db, quick, stop=stop)
    return Computed(rep, report.render_table(rep))
