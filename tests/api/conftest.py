"""A real database for the public API's tests, made by the real commands on the offline engine:
one simulated session, a two-condition experiment, a STORM dialogue, geometry features, human
ratings, a pairwise preference, a rating plan and a user study plan."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from playground import personas
from playground.cli import main as cli
from playground.rating import store as ratings
from playground.storage import open_database
from playground.study import plan as study_plan
from tests.conftest import offline_settings

CONVERSATION = {item.key: 1 + i % 7 for i, item in enumerate(ratings.CONVERSATION_METRICS)}
NOW = "2026-01-02T03:04:05.678+00:00"


def run(*argv: str) -> str:
    """Run one ``playground`` command in this process; its standard output (it must succeed)."""
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    assert code == 0, err.getvalue()
    return out.getvalue()


def show_json(path: Path, session_id: str) -> dict:
    """``playground show ID --json``: what the command line says about a session."""
    return json.loads(run("show", session_id, "--db", str(path), "--json"))


@dataclass(frozen=True)
class Built:
    path: Path
    simulated: str
    experiment: list[str]
    storm: str
    plan_id: str


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    path = tmp_path_factory.mktemp("api") / "pg.db"
    db_flag = ("--db", str(path))
    simulated = (
        run("simulate", "--agents", "3", "--turns", "5", "--seed", "7", *db_flag)
        .strip()
        .splitlines()[-1]
    )
    run(
        "experiment", "--conditions", "inner-thoughts,reactive", "--conversations", "1",
        "--agents", "2", "--turns", "3", "--seed", "3", "--engine", "offline", "--name", "pilot",
        "--no-progress", *db_flag,
    )  # fmt: skip
    run(
        "storm", "--turns", "2", "--uncertainty", "0", "--profile-access-modes", "off",
        "--engine", "offline", "--no-progress", *db_flag,
    )  # fmt: skip
    run("features", simulated, *db_flag)
    db = open_database(path)
    exp = [
        r[0]
        for r in db.execute(
            "SELECT s.id FROM sessions s JOIN experiments e ON e.id = s.experiment_id"
            " WHERE e.name = 'pilot' ORDER BY s.created_at, s.id"
        ).fetchall()
    ]
    (storm,) = db.execute("SELECT session_id FROM storm_dialogues").fetchone()
    store = ratings.RatingStore(db)
    store.rate_conversation(simulated, "r1", CONVERSATION)
    store.rate_conversation(exp[0], "r1", CONVERSATION)
    store.mark_turn(simulated, 2, "r1", "too abrupt")
    store.record_preference("r1", exp[0], exp[1], exp[1], "flows better")
    store.create_plan("judges", "conversation", ["r2"], 1, sessions=[simulated])
    plan_id = study_plan.create_plan(
        db,
        personas.load_personas()[:3],
        offline_settings(),
        humans=2,
        group=1,
        seed=5,
        minutes=4.0,
        now=NOW,
    )
    db.close()
    return Built(path, simulated, exp, storm, plan_id)
