"""Experiments ▸ Study plans… while ``playground study resume`` runs the same plan in another
process: the window lists it as running there (its pid and address), and its Resume is refused
with a message naming them, starting nothing. A real runner in a subprocess, a real database."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.study.test_plan_lock import Runner, new_plan
from tests.ui.conftest import app_window, until
from ui.study_plans.tables import PLAN_COLUMNS, STEP_COLUMNS

pytestmark = pytest.mark.asyncio


def _col(table: Any, col: int) -> list[str]:
    return [table.item(r, col).text() for r in range(table.rowCount())]


async def test_a_plan_run_from_the_command_line_is_shown_running_and_resume_is_refused(
    qtbot, tmp_path, minilm
):
    db = tmp_path / "plans.db"
    plan_id = new_plan(db)
    runner = Runner(db, plan_id)
    try:
        win, controller = app_window(qtbot, db, minilm)
        view = win.experiments.plans.open_view()
        view.refresh()
        status = _col(view.plans, PLAN_COLUMNS.index("Status"))
        assert status == [f"running elsewhere: process {runner.proc.pid} at {runner.origin}"]
        view.show_plan(plan_id)
        assert _col(view.steps, STEP_COLUMNS.index("Status"))[0] == "talking"
        conn = sqlite3.connect(db)
        before = conn.execute("SELECT status, session_id FROM plan_steps").fetchall()
        job = view.resume()
        assert job is not None
        await until(lambda: not job.running, timeout=40, what="the refusal")
        assert job.outcome == "error"
        text = view.status.text()
        assert f"already being run by process {runner.proc.pid}" in text, text
        assert runner.origin in text
        assert "Traceback" not in text
        assert conn.execute("SELECT status, session_id FROM plan_steps").fetchall() == before
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
        conn.close()
        win.close()
        await until(lambda: controller.closed, timeout=30, what="the window to close")
    finally:
        runner.proc.terminate()
        runner.finish()
