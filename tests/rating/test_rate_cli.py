"""``playground rate plan new|list`` and ``playground rate serve`` as a researcher runs them, on
real SQLite files (``serve`` in a process of its own, stopped with Ctrl-C)."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from playground.cli import main as cli
from playground.rating.store import RatingStore
from playground.storage import open_database
from testbed.raters import SECRETS

REPO = Path(__file__).resolve().parents[2]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_plan_new_from_an_experiment_makes_lookalike_free_raters_and_is_listed(rater_db):
    path, ids = rater_db
    code, out, err = _run(
        "rate", "plan", "new", "--experiment", SECRETS["experiment"], "--raters", "3",
        "--items", "2", "--seed", "5", "--db", str(path),
    )  # fmt: skip
    assert code == 0, err
    raters = out.split()
    assert len(raters) == 3
    assert all(re.fullmatch(r"R-[34679ACDEFGHJKMNPQRTUVWXY]{6}", r) for r in raters)
    assert err.startswith(
        "Rating plan 1 (experiment exp-marker-QXZ, 2 per rater, seed 5): 3 raters"
    )
    db = open_database(path)
    store = RatingStore(db)
    plan = store.plans()[0]
    assert (plan.kind, plan.per_rater, plan.seed, plan.raters) == ("conversation", 2, 5, raters)
    assert len(store.assignments(plan.id)) == 6
    db.close()
    code, out, err = _run(
        "rate", "plan", "new", "--kind", "pairwise", "--sessions", ids[0][:-2], *ids[1:],
        "--rater-names", "ann", "ben", "--items", "2", "--name", "pilot", "--db", str(path),
    )  # fmt: skip
    assert (code, out.split()) == (0, ["ann", "ben"]), err
    code, out, _ = _run("rate", "plan", "list", "--db", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split("\t")[:3] == ["1", "experiment exp-marker-QXZ, 2 per rater, seed 5",
                                        "conversation"]  # fmt: skip
    assert lines[1].split("\t")[1:3] == ["pilot", "pairwise"]
    assert lines[1].endswith("0/2 raters done\t0/4 answers")


def test_plan_new_takes_an_experiment_by_its_name_or_an_id_prefix(rater_db):
    """As every other command does: `experiments` lists a name and an id, either is taken."""
    path, _ = rater_db
    db = open_database(path)
    db.execute("UPDATE experiments SET name = 'pilot'")
    db.conn.commit()
    db.close()
    for given in ("pilot", SECRETS["experiment"][:8]):
        code, out, err = _run(
            "rate", "plan", "new", "--experiment", given, "--raters", "2", "--items", "1",
            "--db", str(path),
        )  # fmt: skip
        assert code == 0, err
        assert len(out.split()) == 2
    db = open_database(path)
    plans = RatingStore(db).plans()
    db.close()
    assert len(plans) == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--experiment", "nope", "--raters", "2", "--items", "1"], "no experiment 'nope'"),
        (["--sessions", "zzz", "--raters", "2", "--items", "1"], "zzz"),
        (["--sessions", "x", "--raters", "0", "--items", "1"], "--raters"),
        (
            ["--experiment", SECRETS["experiment"], "--raters", "2", "--items", "9"],
            "only 4 sessions are available",
        ),
    ],
)
def test_plan_new_says_what_is_wrong(rater_db, argv, message):
    path, _ = rater_db
    code, out, err = _run("rate", "plan", "new", *argv, "--db", str(path))
    assert code in (1, 2)
    assert out == ""
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


def test_serve_prints_a_link_per_rater_or_one_open_link_and_stops_on_ctrl_c(rater_db, tmp_path):
    path, ids = rater_db
    assert _run("rate", "plan", "new", "--sessions", *ids, "--rater-names", "ann", "ben",
                "--items", "1", "--db", str(path))[0] == 0  # fmt: skip
    code, _, err = _run("rate", "serve", "7", "--db", str(path))
    assert (code, err) == (1, "error: no rating plan '7' (see `playground rate plan list`)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    for extra, expected in (([], 2), (["--open-link"], 1)):
        proc = subprocess.Popen(
            [sys.executable, "-m", "playground", "rate", "serve", "1", "--port", "0",
             "--db", str(path), *extra],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline().strip() for _ in range(expected)]
            links = [line.split("\t")[-1] for line in lines]
            if expected == 2:
                assert [line.split("\t")[0] for line in lines] == ["ann", "ben"]
            for link in links:
                with urllib.request.urlopen(link, timeout=10) as r:
                    assert r.status == 200
                    assert "<title>Blind rating</title>" in r.read().decode()
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "Traceback" not in err
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(links[0], timeout=5)
