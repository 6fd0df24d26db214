"""The report view's Agreement tables, on the fixed agreement data set (tests/support), and how
the view computes them: in worker threads, saying so meanwhile, the newest refresh winning."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer

from playground import errors
from playground.report import agreement
from playground.report.stats import build_report, render_table
from playground.storage import open_database
from testbed import agreement_data as data
from tests.ui.conftest import until
from ui.rating.report_view import ReportView

PAIRWISE_ROWS = [
    ["Geometry (TRACE features)", "22", "100.0% [85.1-100.0]", "68.2 %"],
    ["Judge", "22", "90.9% [72.2-97.5]", "70.0 %"],
    ["Geometry + judge", "22", "100.0% [85.1-100.0]", "80.2 %"],
]


def test_report_view_shows_the_agreement_tables(qtbot, tmp_path: Path) -> None:
    db = open_database(tmp_path / "agreement.db")
    data.rho_data(db)
    view = ReportView(db)
    qtbot.addWidget(view)
    view.resize(1440, 900)
    view.show()
    qtbot.wait(50)  # the first show redraws once at the shown size
    panel = view.agreement
    # judge and human ratings, but no pairwise preference yet
    assert panel.isVisibleTo(view)
    assert panel.cell(panel.metrics, 0, 0) == data.JUDGE
    assert panel.cell(panel.metrics, 0, 1) == "Coherence"
    assert panel.cell(panel.metrics, 0, 4) == "0.90"
    assert panel.cell(panel.metrics, 1, 4) == "not enough sessions"
    assert "playground features" in panel.cell(panel.pairwise, 0, 2)  # no features stored
    assert panel.cell(panel.pairwise, 1, 2) == "not enough pairs (0 < 20)"

    data.pair_data(db)
    view.refresh_button.click()
    assert _pairwise(view) == PAIRWISE_ROWS
    assert "22 session pairs" in panel.pairs_note.text()
    assert "1 tied" in panel.pairs_note.text()
    assert "Agreement: judge, geometry and humans" in view.table.toPlainText()
    # the tables show every row without a scroll bar of their own
    assert panel.pairwise.height() >= sum(panel.pairwise.rowHeight(r) for r in range(3))

    view.set_experiment("no-such-experiment")
    assert not panel.isVisibleTo(view)
    db.close()


def test_report_view_says_there_is_no_judge(qtbot, tmp_path: Path) -> None:
    db = open_database(tmp_path / "agreement.db")
    data.pair_data(db, judge_wrong=False)
    db.execute("DELETE FROM judge_scores")
    db.execute("DELETE FROM ratings")
    db.execute("DELETE FROM preferences WHERE rater LIKE 'judge:%'")
    view = ReportView(db)
    qtbot.addWidget(view)
    view.show()
    qtbot.wait(50)  # the first show redraws once at the shown size
    panel = view.agreement
    assert panel.isVisibleTo(view)
    assert "playground judge" in panel.metrics_note.text()
    assert not panel.metrics.isVisibleTo(view)
    assert panel.cell(panel.pairwise, 0, 2) == "100.0% [85.1-100.0]"
    assert "playground judge" in panel.cell(panel.pairwise, 1, 2)
    db.close()


def _pairwise(view: ReportView) -> list[list[str]]:
    panel = view.agreement
    return [[panel.cell(panel.pairwise, r, c) for c in range(4)] for r in range(3)]


class HeldAgreement:
    """``playground.report.agreement.build_agreement``, held at its start until the test lets it go, so
    that where and while the agreement is computed can be observed.

    Call ``n`` waits for ``release[n]``, then runs the real computation (or raises ``fail[n]``).
    A call on the GUI thread would freeze the loop the test runs on, so the wait gives up after a
    few seconds and fails instead of hanging.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, calls: int = 3) -> None:
        self.real = agreement.build_agreement
        self.release = [threading.Event() for _ in range(calls)]
        self.fail: dict[int, Exception] = {}
        self.threads: list[threading.Thread] = []
        self.outcomes: list[str] = []  # per finished call: "done", "cancelled" or "failed"
        self.stop_set: list[bool] = []  # per finished call: was it told to stop?
        monkeypatch.setattr(agreement, "build_agreement", self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        n = len(self.threads)
        self.threads.append(threading.current_thread())
        if not self.release[n].wait(5):
            raise AssertionError(f"agreement call {n} was never released (on the GUI thread?)")
        self.stop_set.append(kwargs["stop"] is not None and kwargs["stop"].is_set())
        try:
            if n in self.fail:
                raise self.fail[n]
            result = self.real(*args, **kwargs)
        except errors.Cancelled:
            self.outcomes.append("cancelled")
            raise
        except Exception:
            self.outcomes.append("failed")
            raise
        self.outcomes.append("done")
        return result


def _pair_db(tmp_path: Path) -> Any:
    db = open_database(tmp_path / "agreement.db")
    data.rho_data(db)
    data.pair_data(db)
    return db


@pytest.mark.asyncio
async def test_the_agreement_is_computed_off_the_gui_thread_while_the_panel_says_so(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _pair_db(tmp_path)
    before = build_report(db)  # the numbers as the report gives them in one go, on this thread
    held = HeldAgreement(monkeypatch)
    ticks: list[int] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    view = ReportView(db)
    qtbot.addWidget(view)
    view.resize(1440, 900)
    view.show()
    panel = view.agreement

    await until(lambda: held.threads, what="the agreement computation to start")
    assert held.threads[0] is not threading.main_thread()
    # The counts, the table and the plots are on screen; the agreement says it is computing.
    assert view.computing
    assert panel.computing
    assert panel.isVisibleTo(view)
    assert panel.status.isVisibleTo(view)
    assert panel.status.text().startswith("Computing agreement…")
    assert not panel.pairwise.isVisibleTo(view)
    assert not panel.metrics.isVisibleTo(view)
    assert "computing agreement…" in view.summary.text()
    assert "Mann-Whitney" in view.table.toPlainText()
    assert len(view.images()) == 2
    # ... and the GUI thread is free meanwhile: its timers keep firing.
    seen = len(ticks)
    await asyncio.sleep(0.3)
    assert len(ticks) >= seen + 5, "the GUI thread was blocked while the agreement was computed"
    assert view.computing, "still held: nothing was computed behind the gate's back"

    held.release[0].set()
    await until(lambda: not view.computing, what="the agreement")
    timer.stop()
    assert held.outcomes == ["done"]
    # The same numbers as before the computation moved off the GUI thread.
    assert view.report == before
    assert view.table.toPlainText() == render_table(before)
    assert not panel.computing
    assert not panel.status.isVisibleTo(view)
    assert panel.cell(panel.metrics, 0, 4) == "0.90"
    assert _pairwise(view) == PAIRWISE_ROWS
    assert "computing" not in view.summary.text()
    db.close()


@pytest.mark.asyncio
async def test_a_newer_refresh_wins_over_an_older_one_still_computing(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_database(tmp_path / "agreement.db")
    data.rho_data(db)  # no pairwise preference yet
    held = HeldAgreement(monkeypatch)
    view = ReportView(db)
    qtbot.addWidget(view)
    view.show()
    await until(lambda: len(held.threads) == 1, what="the first computation")

    data.pair_data(db)  # 22 rated pairs arrive; the user refreshes
    view.refresh_button.click()
    await until(lambda: len(held.threads) == 2, what="the second computation")
    held.release[1].set()
    await until(lambda: not view.computing, what="the second refresh's agreement")
    assert _pairwise(view) == PAIRWISE_ROWS

    held.release[0].set()  # the superseded computation ends last
    await until(lambda: len(held.outcomes) == 2, what="the first computation to end")
    await asyncio.sleep(0.05)  # anything it could still deliver would arrive now
    assert held.stop_set == [False, True], "the superseded computation was told to stop"
    assert _pairwise(view) == PAIRWISE_ROWS, "an older result replaced a newer one"
    assert "22 session pairs" in view.agreement.pairs_note.text()
    db.close()


def _shown(qtbot, db: Any) -> ReportView:
    view = ReportView(db)
    qtbot.addWidget(view)
    view.show()
    return view


@pytest.mark.asyncio
async def test_a_failed_computation_is_said_plainly_and_the_view_keeps_working(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    db = _pair_db(tmp_path)
    held = HeldAgreement(monkeypatch)
    held.fail[0] = ValueError("the regression did not converge")
    for event in held.release:
        event.set()
    view = _shown(qtbot, db)
    panel = view.agreement
    with caplog.at_level(logging.ERROR, logger="ui.rating.report_view"):
        await until(lambda: not view.computing, what="the failure")
    status = panel.status.text()
    assert "could not be computed" in status
    assert "the regression did not converge" in status
    assert "Traceback" not in status
    assert panel.status.isVisibleTo(view)
    assert not panel.pairwise.isVisibleTo(view)
    assert "Mann-Whitney" in view.table.toPlainText(), "the rest of the report stays"
    assert "computing" not in view.summary.text()
    assert "the regression did not converge" in caplog.text, "the details go to the log"

    view.refresh_button.click()  # the window still works: a new refresh succeeds
    await until(lambda: not view.computing, what="the second refresh")
    assert _pairwise(view) == PAIRWISE_ROWS
    assert not panel.status.isVisibleTo(view)

    view.set_experiment("no-such-experiment")  # a failure of the report itself
    await until(lambda: not view.computing, what="the unknown experiment")
    assert view.message.isVisibleTo(view)
    assert "no-such-experiment" in view.message.text()
    assert view.table.toPlainText() == ""
    assert not panel.isVisibleTo(view)
    db.close()


@pytest.mark.asyncio
async def test_closing_the_view_while_it_computes_stops_the_computation(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    db = _pair_db(tmp_path)
    held = HeldAgreement(monkeypatch)
    view = _shown(qtbot, db)
    await until(lambda: held.threads, what="the agreement computation to start")
    view.close()
    assert not view.computing
    with caplog.at_level(logging.ERROR):
        held.release[0].set()
        await until(lambda: held.outcomes, what="the worker to end")
        await asyncio.sleep(0.05)
    # 22 pairs need the leave-one-out regressions: the worker stopped before the first one.
    assert held.stop_set == [True]
    assert held.outcomes == ["cancelled"]
    assert not caplog.records
    assert view.agreement.cell(view.agreement.pairwise, 0, 1) == "", "nothing shown after close"

    view.show()  # shown again: what was dropped is computed now
    held.release[1].set()
    await until(lambda: not view.computing and view.agreement.agreement is not None, what="it")
    assert _pairwise(view) == PAIRWISE_ROWS
    db.close()
