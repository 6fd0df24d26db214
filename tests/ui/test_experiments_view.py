"""The Experiments window, headless: launch from the dialog, progress and summary, cancel and
resume (checked in the real SQLite file), closing mid-run, replay of a conversation, errors, and
an experiment over the loopback OpenAI-compatible server through the real ``openai`` client."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from playground.embedding.cache import CachingEmbedder
from playground.experiments import runner as experiment
from testbed.llm_server import FakeLLMServer
from tests.ui.conftest import until
from ui.app import build
from ui.experiments.dialog import NewExperimentDialog
from ui.experiments.tables import RUN_COLUMNS
from ui.experiments.view import ExperimentsWindow

pytestmark = pytest.mark.asyncio


def _window(qtbot: Any, db: Path, minilm: Any, environ: dict[str, str] | None = None) -> Any:
    win, controller = build(
        db_path=str(db), environ=environ or {}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.show()
    return win, controller


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = _window(qtbot, tmp_path / "x.db", minilm)
    yield win, controller
    view = win.experiments.view
    if view is not None and view.job is not None:
        view.job.cancel()


def _fill(
    dlg: NewExperimentDialog,
    *,
    conversations: int = 2,
    agents: int = 3,
    turns: int = 4,
    concurrency: int = 2,
    engine: str = "offline",
    conditions: tuple[str, ...] = ("inner-thoughts", "next-speaker"),
) -> None:
    for c, box in dlg.conditions.items():
        box.setChecked(c in conditions)
    dlg.conversations.setValue(conversations)
    dlg.agents.setValue(agents)
    dlg.turns.setValue(turns)
    dlg.concurrency.setValue(concurrency)
    dlg.seed.setValue(3)
    dlg.name.setText("pilot")
    dlg.engine.setCurrentIndex(dlg.engine.findData(engine))


def _launch(view: ExperimentsWindow, **kw: Any) -> Any:
    dlg = view.open_new_dialog()
    assert dlg is not None
    _fill(dlg, **kw)
    dlg.buttons.accepted.emit()  # the Launch button
    assert not dlg.isVisible(), dlg.error.text()
    assert view.job is not None
    return view.job


def _sql(db: Path, query: str, params: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


def _cells(table: Any, row: int) -> list[str]:
    return [table.item(row, c).text() for c in range(table.columnCount())]


async def test_an_experiment_launched_from_the_dialog_runs_to_the_end_with_its_summary(
    window, tmp_path
):
    win, controller = window
    win.experiments.act_open.trigger()
    view = win.experiments.view
    assert view is not None
    assert view.isVisible()
    assert view.experiments.rowCount() == 0
    job = _launch(view)
    seen: list[str] = []  # the panel's counters line at every progress update
    job.progress_changed.connect(lambda _p: seen.append(view.progress.stats.text()))
    assert view.cancel_button.isEnabled()
    assert not view.new_button.isEnabled()
    await until(lambda: not job.running, timeout=240, what="the experiment to end")
    assert job.outcome == "finished", job.message
    xid = job.experiment_id
    # Progress: every condition's bar full, the overall one too.
    assert set(view.progress.bars) == {"inner-thoughts", "next-speaker", "all"}
    for name, bar in view.progress.bars.items():
        assert bar.value() == bar.maximum() == (4 if name == "all" else 2)
    assert any(re.search(r"running · elapsed \d+:\d\d · ETA \d+:\d\d", t) for t in seen), seen
    assert "0 LLM calls" in view.progress.stats.text()  # offline: no language model
    assert "all done in" in view.progress.stats.text()
    # The list, the summary (one row per condition) and the runs table.
    assert view.experiments.rowCount() == 1
    assert _cells(view.experiments, 0)[:2] == [xid, "pilot"]
    assert "4/4 finished" in _cells(view.experiments, 0)[-1]
    assert [view.summary.item(r, 0).text() for r in range(view.summary.rowCount())] == [
        "inner-thoughts",
        "next-speaker",
    ]
    assert all(view.summary.item(r, 1).text() == "2" for r in range(2))  # done
    assert view.runs.rowCount() == 4
    status = RUN_COLUMNS.index("Status")
    assert {view.runs.item(r, status).text() for r in range(4)} == {"finished"}
    assert xid in view.status.text()
    assert "finished" in view.status.text()
    # A finished experiment has nothing to resume (issue 34), here or shown again from the list.
    assert not view.resume_button.isEnabled()
    assert "nothing to resume" in view.resume_button.toolTip()
    view.show_experiment(None)
    view.show_experiment(xid)
    assert view.complete
    assert not view.resume_button.isEnabled()
    # The real file: the same protocol as the command line's, 4 finished runs, 4 sessions.
    db = tmp_path / "x.db"
    assert _sql(db, "SELECT name FROM experiments WHERE id = ?", (xid,)) == [("pilot",)]
    runs = _sql(db, "SELECT status, attempts FROM experiment_runs WHERE experiment_id = ?", (xid,))
    assert runs == [("finished", 1)] * 4
    assert _sql(db, "SELECT COUNT(*), SUM(status = 'finished') FROM sessions WHERE experiment_id = ?", (xid,)) == [(4, 4)]  # fmt: skip
    from playground.experiments.protocol import build_protocol
    from playground.settings import load_settings

    same = build_protocol(
        load_settings({}, {"engine": "offline"}),
        conditions=("inner-thoughts", "next-speaker"),
        conversations=2,
        agents=3,
        turns=4,
        seed=3,
        personas_dir=controller.personas_dir,
    )
    assert same.experiment_id == xid, "the window and the command line agree on the experiment"
    await controller.shutdown()


async def test_cancel_leaves_runs_interrupted_and_resume_completes_them_without_rerunning(
    window, tmp_path
):
    win, controller = window
    view = win.experiments.open_view()
    job = _launch(view, concurrency=1, turns=6)
    await until(
        lambda: job.progress is not None and job.progress.finished >= 1 and job.progress.running,
        timeout=240,
        what="one conversation done and the next in flight",
    )
    view.cancel_button.click()
    await job.wait()
    assert job.outcome == "cancelled"
    assert "Resume" in view.status.text()
    assert view.resume_button.isEnabled()
    assert not view.cancel_button.isEnabled()
    xid, db = job.experiment_id, tmp_path / "x.db"
    first = dict(
        (((d, c), (s, st)) for d, c, s, st in _sql(
            db, "SELECT draw, condition, session_id, status FROM experiment_runs WHERE experiment_id = ?", (xid,)
        ))
    )  # fmt: skip
    statuses = sorted(st for _, st in first.values())
    assert "interrupted" in statuses
    assert "finished" in statuses
    assert "running" not in statuses
    assert len(first) < 4, "the conversations not started have no run yet"
    interrupted = [k for k, (_, st) in first.items() if st == "interrupted"]
    assert _sql(db, "SELECT status FROM sessions WHERE id = ?", (first[interrupted[0]][0],)) == [("interrupted",)]  # fmt: skip
    status_col = RUN_COLUMNS.index("Status")
    shown = {view.runs.item(r, status_col).text() for r in range(view.runs.rowCount())}
    assert "interrupted" in shown
    assert "unfinished" in _cells(view.experiments, 0)[-1]

    again = view.resume()
    assert again is not None
    assert again.experiment_id == xid
    await until(lambda: not again.running, timeout=240, what="the resumed experiment")
    assert again.outcome == "finished", again.message
    skipped = sum(c.skipped for c in again.progress.conditions.values())
    assert skipped == sum(st == "finished" for _, st in first.values())
    after = {
        (d, c): (s, st, n)
        for d, c, s, st, n in _sql(
            db,
            "SELECT draw, condition, session_id, status, attempts FROM experiment_runs WHERE experiment_id = ?",
            (xid,),
        )
    }
    assert len(after) == 4
    assert {st for _, st, _ in after.values()} == {"finished"}
    for key, (sid, st) in first.items():
        if st == "finished":  # never run twice: same session, one attempt
            assert after[key] == (sid, "finished", 1)
        else:  # run again once; the interrupted attempt's session is gone
            assert after[key][2] == 2
            assert after[key][0] != sid
    assert _sql(db, "SELECT COUNT(*), SUM(status = 'finished') FROM sessions WHERE experiment_id = ?", (xid,)) == [(4, 4)]  # fmt: skip
    for r in range(view.runs.rowCount()):
        assert view.runs.item(r, status_col).text() == "finished"
    assert all(bar.value() == bar.maximum() for bar in view.progress.bars.values())
    assert not view.resume_button.isEnabled(), "resumed to the end: nothing left to resume"
    await controller.shutdown()


async def test_closing_the_view_or_the_main_window_mid_run_cancels_cleanly(qtbot, tmp_path, minilm):
    for closing in ("view", "main window"):
        db = tmp_path / f"{closing}.db"
        win, controller = _window(qtbot, db, minilm)
        view = win.experiments.open_view()
        job = _launch(view, concurrency=2, turns=30)
        await until(
            lambda j=job: j.progress is not None and j.progress.running == 2,  # type: ignore[misc]  # mypy cannot type a lambda's default argument
            timeout=120,
            what="conversations in flight",
        )
        (view if closing == "view" else win).close()
        await until(lambda j=job: not j.running, timeout=60, what="the run to stop")  # type: ignore[misc]  # mypy cannot type a lambda's default argument
        assert job.outcome == "cancelled"
        await until(lambda v=view: not v.isVisible(), what=f"the {closing} to close")  # type: ignore[misc]  # mypy cannot type a lambda's default argument
        if closing == "main window":
            await until(lambda c=controller: c.closed, what="the controller to shut down")  # type: ignore[misc]  # mypy cannot type a lambda's default argument
        else:
            assert win.isVisible()
            await controller.shutdown()
        runs = _sql(db, "SELECT status FROM experiment_runs")
        assert runs, runs
        assert {s for (s,) in runs} <= {"interrupted", "finished"}, runs
        assert ("interrupted",) in runs
        assert _sql(db, "SELECT COUNT(*) FROM sessions WHERE status = 'running'") == [(0,)]


async def test_a_conversation_opens_in_replay_from_the_runs_table(window, tmp_path):
    win, controller = window
    view = win.experiments.open_view()
    job = _launch(view, conversations=1, conditions=("next-speaker",))
    await until(lambda: not job.running, timeout=240, what="the experiment")
    assert view.runs.rowCount() == 1
    assert not view.replay_button.isEnabled()  # nothing selected yet
    view.runs.selectRow(0)
    assert view.replay_button.isEnabled()
    sid = view.selected_session()
    assert sid == _sql(tmp_path / "x.db", "SELECT session_id FROM experiment_runs")[0][0]
    item = view.runs.item(0, RUN_COLUMNS.index("Condition"))
    view.runs.itemDoubleClicked.emit(item)
    await until(lambda: win.replay.recording is not None, what="the replay")
    rec = win.replay.recording
    assert rec.session["id"] == sid
    assert rec.session["condition"] == "next-speaker"
    await controller.shutdown()


async def test_bad_options_and_an_unreachable_server_are_reported_not_raised(window, tmp_path):
    win, controller = window
    view = win.experiments.open_view()
    dlg = view.open_new_dialog()
    assert dlg is not None
    _fill(dlg)
    dlg.personas_dir.setText(str(tmp_path / "nowhere"))
    dlg.personas_dir.editingFinished.emit()
    assert "is not a directory of persona files" in dlg.personas_info.text()
    dlg.buttons.accepted.emit()
    assert dlg.isVisible()
    assert "is not a directory of persona files" in dlg.error.text()
    for box in dlg.conditions.values():
        box.setChecked(False)
    dlg.personas_dir.setText(controller.personas_dir)
    dlg.buttons.accepted.emit()
    assert dlg.isVisible()
    assert "at least one condition" in dlg.error.text()
    dlg.reject()
    assert view.job is None

    controller.configure(
        {"engine": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}
    )
    job = _launch(view, engine="openai")
    await until(lambda: not job.running, timeout=60, what="the failed launch")
    assert job.outcome == "error"
    assert "cannot reach" in view.status.text()
    assert "Traceback" not in view.status.text()
    assert view.new_button.isEnabled()
    assert not view.cancel_button.isEnabled()
    await controller.shutdown()


async def test_an_experiment_over_an_openai_compatible_server(qtbot, tmp_path, minilm):
    with FakeLLMServer() as srv:
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "test-key"}
        win, controller = _window(qtbot, tmp_path / "x.db", minilm, env)
        controller.configure({"model": "fake-model", "retry_base_delay": 0})
        view = win.experiments.open_view()
        dlg = view.open_new_dialog()
        assert dlg is not None
        assert dlg.engine.currentData() == "openai"  # the window's engine is offered first
        assert "fake-model @ http://127.0.0.1" in dlg.engine.currentText()
        job = _launch(view, conversations=1, agents=2, turns=3, engine="openai")
        await until(lambda: not job.running, timeout=240, what="the experiment")
        assert job.outcome == "finished", job.message
        p = job.progress
        assert p is not None
        assert p.calls > 0
        assert p.tokens > 0
        assert f"{p.calls:,} LLM calls" in view.progress.stats.text()
        assert srv.chat_calls >= p.calls
        assert job.plan.protocol.model == "fake-model"
        calls_per_message = view.summary.item(0, 10).text()
        assert calls_per_message not in ("—", "0.00")
        await controller.shutdown()


async def test_eta_counts_only_this_runs_conversations() -> None:
    from ui.experiments.progress import duration, eta

    p = experiment.Progress("x1")
    p.conditions = {
        "a": experiment.ConditionProgress(total=10, done=4, skipped=2),
        "b": experiment.ConditionProgress(total=10, done=2, failed=1),
    }
    p.started = 100.0
    # 5 conversations run here in 50 s: 10 s each; 13 left.
    assert eta(p, now=150.0) == pytest.approx(130.0)
    p.conditions = {"a": experiment.ConditionProgress(total=4, done=2, skipped=2)}
    assert eta(p, now=150.0) is None
    assert duration(130) == "2:10"
    assert duration(3725) == "1:02:05"


async def test_deleting_a_conversation_of_an_experiment_says_so_and_resume_runs_it_again(
    window, tmp_path
):
    """The library's Delete names the experiment and what deleting does to it; afterwards the
    experiment is not complete any more and Resume runs that conversation again (issue 34)."""
    win, controller = window
    view = win.experiments.open_view()
    job = _launch(view, conditions=("inner-thoughts",), turns=3)
    await until(lambda: not job.running, timeout=240, what="the experiment to end")
    assert job.outcome == "finished", job.message
    xid, db = job.experiment_id, tmp_path / "x.db"
    assert not view.resume_button.isEnabled()
    (victim,) = _sql(
        db,
        "SELECT session_id FROM experiment_runs WHERE experiment_id = ? AND draw = 1",
        (xid,),
    )[0]

    library = win.open_library()
    assert library.select_session(victim)
    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return True

    library.confirm = confirm
    library.delete_button.click()
    assert f"conversation 2 (inner-thoughts) of experiment {xid} “pilot”" in asked[0]
    assert "Resume runs it again" in asked[0]
    assert "Deleted" in library.message.text()

    view.show_experiment(xid)
    assert not view.complete
    assert view.resume_button.isEnabled()
    again = view.resume()
    assert again is not None
    await until(lambda: not again.running, timeout=240, what="the resumed experiment")
    assert again.outcome == "finished", again.message
    runs = _sql(db, "SELECT draw, status, session_id FROM experiment_runs WHERE experiment_id = ?", (xid,))  # fmt: skip
    assert sorted((d, st) for d, st, _ in runs) == [(0, "finished"), (1, "finished")]
    assert victim not in {sid for _, _, sid in runs}
    assert not view.resume_button.isEnabled()
    await controller.shutdown()
