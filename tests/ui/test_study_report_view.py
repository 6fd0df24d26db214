"""Rating ▸ Study report…: the view shows exactly what ``playground study-report`` prints for the
same database and selection (all plans pooled, or one plan), computed off the GUI thread with the
window's shared embedding model; an empty database, a missing embedding model and a failure are
each said in a sentence, never a traceback.

The database is the one tests/report/test_study_report.py builds: plan p1 with three real
offline conversations and every answer, plan p2 planned but not run.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.storage import open_database
from tests.report.test_study_report import run, study_db  # noqa: F401 - the fixture
from tests.ui.conftest import app_window, until
from ui.rating import study_report_jobs
from ui.rating.study_report_view import ALL, StudyReportView


def _view(qtbot: Any, db: Any, minilm: MiniLMEmbedder | None) -> StudyReportView:
    shared = CachingEmbedder(minilm) if minilm is not None else None

    async def embedder() -> CachingEmbedder:
        assert shared is not None
        return shared

    view = StudyReportView(db, embedder=embedder if shared is not None else None)
    qtbot.addWidget(view)
    view.resize(1440, 900)
    view.show()
    return view


async def _done(view: StudyReportView) -> str:
    await until(lambda: not view.computing, timeout=60, what="the study report")
    return view.text.toPlainText()


def _cli(path: Path, *selection: str) -> str:
    code, out, err = run("study-report", *selection, "--db", str(path))
    assert code == 0, err
    return out


@pytest.mark.asyncio
async def test_the_view_shows_what_the_command_prints_for_each_selection(
    qtbot: Any,
    study_db: Path,  # noqa: F811 - the imported fixture
    minilm: MiniLMEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[threading.Thread] = []
    real = study_report_jobs.compute

    def compute(*args: Any) -> Any:
        threads.append(threading.current_thread())
        return real(*args)

    monkeypatch.setattr(study_report_jobs, "compute", compute)
    db = open_database(study_db, create=False)
    view = _view(qtbot, db, minilm)
    pooled = await _done(view)
    assert view.plan.currentText() == ALL
    assert [view.plan.itemText(i) for i in range(view.plan.count())] == [
        ALL,
        "p1 · group 1 · running",
        "p2 · group 1 · running",
    ]
    assert threads
    assert threading.main_thread() not in threads, "computed on the GUI thread"
    assert pooled == _cli(study_db, "--all")
    assert "Study report: 2 plans pooled" in pooled
    assert "(no cosine similarities" not in pooled  # the shared model gave them
    assert view.report is not None
    assert view.report.similarity
    assert not view.message.isVisibleTo(view)
    assert view.summary.text().startswith("Computed at")

    view.plan.setCurrentIndex(view.plan.findData("p1"))  # as the user picks it
    view.plan.activated.emit(view.plan.currentIndex())
    one = await _done(view)
    assert one != pooled
    assert one == _cli(study_db, "p1")
    assert "Study report: plan p1" in one
    assert view.selected_plan() == "p1"

    view.refresh_button.click()  # the selection stays
    assert await _done(view) == one
    db.close()


@pytest.mark.asyncio
async def test_an_empty_database_says_how_to_run_a_study(qtbot: Any, tmp_path: Path) -> None:
    db = open_database(tmp_path / "empty.db")
    view = _view(qtbot, db, None)
    assert await _done(view) == ""
    assert view.message.isVisibleTo(view)
    text = view.message.text()
    assert text.startswith("No study plans in this database yet.")
    # The window's own way first, and the command line's; no path of this machine (issue 34).
    assert "Experiments ▸ New study plan…" in text
    assert "`playground study new --humans 2`" in text
    assert str(tmp_path) not in text
    assert "/" not in text
    assert [view.plan.itemText(i) for i in range(view.plan.count())] == [ALL]
    db.close()


@pytest.mark.asyncio
async def test_without_an_embedding_model_the_rest_is_shown_and_the_view_says_so(
    qtbot: Any,
    study_db: Path,  # noqa: F811 - the imported fixture
    caplog: pytest.LogCaptureFixture,
) -> None:
    db = open_database(study_db, create=False)
    view = _view(qtbot, db, None)  # no embedder at all
    view.set_plan("p1")
    text = await _done(view)
    assert text == _cli(study_db, "p1", "--no-similarity")
    assert "Shown without the similarities: this view has no embedding model" in view.message.text()

    async def broken() -> Any:
        raise RuntimeError("the model files are missing")

    view.embedder = broken  # an embedding model that cannot be loaded
    with caplog.at_level(logging.WARNING, logger="ui.rating.study_report_view"):
        view.refresh()
        assert await _done(view) == text
    message = view.message.text()
    assert "could not be used (RuntimeError: the model files are missing)" in message
    assert "Traceback" not in message
    assert "the model files are missing" in caplog.text
    db.close()


@pytest.mark.asyncio
async def test_a_failure_is_one_sentence_and_the_details_go_to_the_log(
    qtbot: Any,
    study_db: Path,  # noqa: F811 - the imported fixture
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fails(*_args: Any) -> Any:
        raise ValueError("a column is missing")

    monkeypatch.setattr(study_report_jobs, "compute", fails)
    db = open_database(study_db, create=False)
    with caplog.at_level(logging.ERROR, logger="ui.rating.study_report_view"):
        view = _view(qtbot, db, None)
        assert await _done(view) == ""
    message = view.message.text()
    assert "could not be computed (ValueError: a column is missing)" in message
    assert "press Refresh" in message
    assert "Traceback" not in message
    assert "Traceback" in caplog.text  # the details, in the log

    monkeypatch.undo()
    view.refresh_button.click()  # the view still works
    assert "Study report: 2 plans pooled" in await _done(view)
    assert "could not be computed" not in view.message.text()
    db.close()


@pytest.mark.asyncio
async def test_the_rating_menu_opens_it(qtbot: Any, db_path: Path, minilm: MiniLMEmbedder) -> None:
    win, _controller = app_window(qtbot, db_path, minilm)
    actions = [a.text() for a in win.rating.menu.actions()]
    assert actions.index("Study report…") == actions.index("Report…") + 1
    win.rating.act_study_report.trigger()
    view = win.rating.study_report
    assert isinstance(view, StudyReportView)
    assert view.isVisible()
    await _done(view)
    assert view.message.text().startswith("No study plans in this database yet.")
    assert view.embedder == win.controller.embedding.get
