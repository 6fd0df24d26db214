"""The study report view's work, done in a worker thread: the report and its text (no Qt here, so
nothing in it may touch a widget).

Each computation runs on a read-only connection of its own, opened and closed in the worker
thread (sqlite3 connections belong to the thread that made them); a database in memory cannot be
shared that way, and the view then computes on the GUI thread with the window's own connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sqlite_utils

from playground import errors
from playground.report import study
from playground.report.study_format import render_table
from playground.report.study_model import StudyReport
from playground.storage.database import open_read_only


@dataclass(frozen=True)
class Computed:
    """A study report and its text, as ``playground study-report`` prints it."""

    report: StudyReport
    text: str


def compute(
    db: sqlite_utils.Database, plan: str | None, embed: study.EmbedFn | None
) -> Computed | None:
    """The report of ``plan`` (None: every plan, pooled, as ``--all``); None when the database
    has no study plan.

    Raises:
        PlaygroundError: the plan is no longer in the database.
    """
    known = study.plan_ids(db)
    if not known:
        return None
    plans = known if plan is None else study.resolve_plans(db, [plan])
    report = study.build_study_report(db, plans, embed=embed)
    return Computed(report, render_table(report))


def compute_on(
    source: Path | sqlite_utils.Database, plan: str | None, embed: study.EmbedFn | None
) -> Computed | None:
    """:func:`compute` on a read-only connection of its own to the file ``source`` (closed
    afterwards), or on ``source`` itself when it is an open database (one in memory).

    Raises:
        PlaygroundError: the file cannot be opened; as :func:`compute`.
    """
    if not isinstance(source, Path):
        return compute(source, plan, embed)
    db = open_read_only(source)
    try:
        return compute(db, plan, embed)
    finally:
        db.close()


def texts_to_embed(report: StudyReport) -> list[str]:
    """Every text the similarities compare (interpretations and reasons), each once."""
    return list(
        dict.fromkeys(t for i in report.inference_items for t in (i.interpretation, i.reason))
    )


def looked_up(vectors: dict[str, np.ndarray]) -> study.EmbedFn:
    """An embedding function that answers from ``vectors``, embedded beforehand on the event
    loop by the window's shared model."""

    def embed(texts: Sequence[str]) -> np.ndarray:
        if any(t not in vectors for t in texts):
            raise errors.PlaygroundError(
                "the study's messages changed while the report was computed: press Refresh"
            )
        return np.stack([vectors[t] for t in texts])

    return embed
