"""The report view's Agreement tables, on the fixed agreement data set (tests/support)."""

from __future__ import annotations

from pathlib import Path

from playground.storage import open_database
from tests.support import agreement_data as data
from ui.rating.report_view import ReportView


def test_report_view_shows_the_agreement_tables(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
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
    rows = [[panel.cell(panel.pairwise, r, c) for c in range(4)] for r in range(3)]
    assert rows == [
        ["Geometry (TRACE features)", "22", "100.0% [85.1-100.0]", "68.2 %"],
        ["Judge", "22", "90.9% [72.2-97.5]", "70.0 %"],
        ["Geometry + judge", "22", "100.0% [85.1-100.0]", "80.2 %"],
    ]
    assert "22 session pairs" in panel.pairs_note.text() and "1 tied" in panel.pairs_note.text()
    assert "Agreement: judge, geometry and humans" in view.table.toPlainText()
    # the tables show every row without a scroll bar of their own
    assert panel.pairwise.height() >= sum(panel.pairwise.rowHeight(r) for r in range(3))

    view.set_experiment("no-such-experiment")
    assert not panel.isVisibleTo(view)
    db.close()


def test_report_view_says_there_is_no_judge(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
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
    assert panel.isVisibleTo(view) and "playground judge" in panel.metrics_note.text()
    assert not panel.metrics.isVisibleTo(view)
    assert panel.cell(panel.pairwise, 0, 2) == "100.0% [85.1-100.0]"
    assert "playground judge" in panel.cell(panel.pairwise, 1, 2)
    db.close()
