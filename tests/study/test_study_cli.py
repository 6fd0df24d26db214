"""``playground study``: a whole plan from the command line (nobody joins: each conversation and
review runs out its minutes), the plan listed, and the errors a researcher can meet."""

from __future__ import annotations

import io
import sqlite3

from playground import personas
from playground.cli import main as cli
from playground.clock import SystemClock
from playground.settings import load_settings
from playground.storage import open_database
from playground.study.plan import create_plan


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_study_new_runs_a_plan_to_its_end_and_lists_it(tmp_path):
    db = tmp_path / "study.db"
    code, out, err = run(
        "study", "new", "--humans", "2", "--group", "4", "--minutes", "0.02",
        "--review-minutes", "0.02", "--port", "0", "--engine", "offline", "--db", str(db),
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 3
    assert all("/join/" in line for line in lines[:2])
    plan_id = lines[2]
    assert f"Study plan {plan_id} saved." in err
    assert "Traceback" not in err
    conn = sqlite3.connect(db)
    steps = conn.execute(
        "SELECT status, session_id IS NOT NULL FROM plan_steps WHERE plan_id = ?", [plan_id]
    ).fetchall()
    assert steps == [("done", 1)] * 3
    sessions = conn.execute("SELECT status, end_reason FROM sessions").fetchall()
    assert sessions == [("finished", "the conversation's time is up")] * 3
    conn.close()

    code, out, err = run("study", "list", "--db", str(db))
    assert code == 0
    assert out.startswith(f"{plan_id}  group 4  2 people  done  3/3 conversations")

    code, out, err = run("study", "resume", plan_id, "--engine", "offline", "--db", str(db))
    assert (code, err.strip()) == (0, f"Study plan {plan_id} is already done.")


def test_resuming_an_unknown_plan_is_one_clear_line(tmp_path):
    db = tmp_path / "study.db"
    code, out, err = run("study", "resume", "plan-nope", "--engine", "offline", "--db", str(db))
    assert (code, out) == (1, "")
    assert err.strip() == f"error: no study plan 'plan-nope' in {db}"


def test_listing_plans_of_an_empty_database(tmp_path):
    code, out, _ = run("study", "list", "--db", str(tmp_path / "s.db"))
    assert (code, out) == (0, "no study plans\n")


def test_a_plan_that_cannot_be_saved_is_one_clear_line(tmp_path):
    db = tmp_path / "study.db"
    open_database(db).close()
    other = sqlite3.connect(db)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        code, out, err = run(
            "study", "new", "--engine", "offline", "--busy-timeout", "0.2", "--db", str(db)
        )
    finally:
        other.rollback()
        other.close()
    assert (code, out) == (1, "")
    assert err.strip() == (
        f"error: the study plan could not be saved in {db}: database is locked; what was saved"
        " before is kept, and `playground study resume` goes on from there"
    )
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM study_plans").fetchone() == (0,)


def test_a_plan_resumes_only_with_the_engine_it_ran_with(tmp_path):
    db_path = tmp_path / "study.db"
    db = open_database(db_path)
    ran_with = load_settings({}, {"engine": "openai", "model": "gpt-4o-mini", "api_key": "k"})
    plan_id = create_plan(
        db, personas.load_personas(), ran_with, humans=1, group=0, seed=0, minutes=10,
        now=SystemClock().now_iso(),
    )  # fmt: skip
    db.close()
    code, out, err = run("study", "resume", plan_id, "--engine", "offline", "--db", str(db_path))
    assert (code, out) == (1, "")
    assert err.strip() == (
        f"error: plan {plan_id} ran with the openai engine and gpt-4o-mini; resume it with the"
        " same (--engine openai --model gpt-4o-mini) so that its conversations differ only in"
        " their condition"
    )
