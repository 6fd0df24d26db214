"""Judge and geometry against the human raters, on a fixed small data set computed by hand
(testbed/agreement_data.py): rho by hand ranks, alpha against the krippendorff package,
leave-one-out pairwise accuracy where the logistic regression is predictable, the Wilson interval
by hand, the majority/tie rule and "not enough pairs"; then `playground report` (text, JSON, CSV).
"""

from __future__ import annotations

import io
import json
import math
import threading
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from playground import errors
from playground.cli import main as cli
from playground.report import agreement
from playground.report.agreement_data import human_majority, judge_scores
from playground.report.stats import build_report, with_agreement
from playground.storage import open_database
from testbed import agreement_data as data


@pytest.fixture
def adb(tmp_path: Path):
    db = open_database(tmp_path / "agreement.db")
    yield db
    db.close()


def _all(db) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM sessions")]


# -- per metric: rho and alpha ------------------------------------------------------------------
def test_rho_by_hand_ranks_and_alpha_against_the_krippendorff_package(adb) -> None:
    data.rho_data(adb)
    res = agreement.build_agreement(adb, _all(adb))
    assert res.judges == [data.JUDGE, data.FALLBACK_JUDGE] or res.judges == sorted(
        [data.JUDGE, data.FALLBACK_JUDGE]
    )
    row = next(m for m in res.metrics if m.judge == data.JUDGE and m.metric == "coherence")
    # human means 1.5 3.5 4.5 5.5 6.5 -> ranks 1 2 3 4 5; judge scores 2.2 3.9 5.1 4.4 6.8 ->
    # ranks 1 2 4 3 5; d = 0 0 1 -1 0; rho = 1 - 6 * 2 / (5 * (25 - 1)) = 0.9
    assert row.n == 5
    assert row.humans == 2
    assert row.note is None
    assert row.rho == pytest.approx(0.9)
    expected = krippendorff.alpha(
        reliability_data=np.array([data.HUMAN_1, data.HUMAN_2, data.JUDGE_RATING], dtype=float),
        level_of_measurement="ordinal",
    )
    humans_only = krippendorff.alpha(
        reliability_data=np.array([data.HUMAN_1, data.HUMAN_2], dtype=float),
        level_of_measurement="ordinal",
    )
    assert row.alpha == pytest.approx(expected)
    assert row.alpha_humans == pytest.approx(humans_only)
    assert row.alpha != pytest.approx(row.alpha_humans)  # the judge changes alpha
    # a judge with ratings rows only (no judge_scores): its ratings 1..5 rank like the humans
    fallback = next(m for m in res.metrics if m.judge == data.FALLBACK_JUDGE)
    assert fallback.rho == pytest.approx(1.0)
    assert fallback.n == 5
    # engagement: judge and a human share 2 sessions only
    eng = next(m for m in res.metrics if m.metric == "engagement")
    assert eng.n == 2
    assert eng.rho is None
    assert eng.alpha is None
    assert eng.note == "not enough sessions"
    assert agreement.build_agreement(adb, _all(adb), min_sessions=2).metrics[1].n == 2


def test_judge_scores_prefer_the_score_and_fall_back_to_ratings(adb) -> None:
    data.rho_data(adb)
    scores = judge_scores(adb, ["r3"])
    assert scores[data.JUDGE]["coherence"] == {"r3": (5.1, 5)}
    assert scores[data.FALLBACK_JUDGE]["coherence"] == {"r3": (3.0, 3)}
    assert "h1" not in scores
    assert "h2" not in scores  # humans are not judges


# -- pairwise -----------------------------------------------------------------------------------
def test_loo_on_separable_pairs_is_perfect_and_on_three_contradictions_exactly_17_of_20() -> None:
    rng = np.random.default_rng(7)
    d = rng.uniform(0.5, 3.0, 20) * np.where(np.arange(20) % 2, 1, -1)
    y = (d > 0).astype(int)
    assert agreement.loo_correct(d.reshape(-1, 1), y) == 20
    # three pairs whose small difference points the other way: every fold still learns w > 0
    # (17 large agreeing pairs outweigh them), so exactly those three are missed
    y2 = y.copy()
    d2 = d.copy()
    for k in (0, 1, 2):
        d2[k] = 0.1 * np.sign(d[k])
        y2[k] = 1 - y[k]
    assert agreement.loo_correct(d2.reshape(-1, 1), y2) == 17
    # swapping A and B in every pair flips both sides: the same hits
    assert agreement.loo_correct(-d2.reshape(-1, 1), 1 - y2) == 17
    with pytest.raises(errors.PlaygroundError, match="at least 2 pairs"):
        agreement.loo_correct([[1.0]], [1])


def test_wilson_interval_by_hand() -> None:
    lo, hi = agreement.wilson(20, 22)
    # p = 20/22; z^2 = 3.8415; denominator 1 + z^2/22; centre (p + z^2/44) / den;
    # half-width z * sqrt(p(1-p)/22 + z^2/(4 * 22^2)) / den
    z = 1.959963984540054
    p, n = 20 / 22, 22
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    assert (lo, hi) == pytest.approx((centre - half, centre + half))
    assert (lo, hi) == pytest.approx((0.7219, 0.9747), abs=1e-4)
    assert agreement.wilson(22, 22)[1] == 1.0
    with pytest.raises(errors.PlaygroundError, match="Wilson"):
        agreement.wilson(3, 0)


def test_majority_rule_drops_ties_and_ignores_judges(adb) -> None:
    data.pair_data(adb)
    human, ties = human_majority(adb, _all(adb))
    assert len(human) == 22
    assert ties == 1  # (p00, p05): 1-1 among humans; the judge's vote
    assert ("p00", "p05") not in human  # does not break the tie
    assert all(v == 1 for v in human.values())  # 2-1 splits still go to the higher index


def test_pairwise_accuracy_geometry_judge_and_combined(adb) -> None:
    data.pair_data(adb)
    res = agreement.build_agreement(adb, _all(adb))
    acc = {p.predictor: p for p in res.pairwise}
    assert res.human_pairs == 22
    assert res.tied_pairs == 1
    assert res.features_model == data.MODEL
    assert res.features == ["cohesion", "volatility"]  # goal_adherence is missing in p03
    # every feature rises with the index and the humans prefer the higher index: separable
    assert (acc["geometry"].n, acc["geometry"].correct) == (22, 22)
    # the judge's stored preferences are wrong on 2 pairs; elsewhere its mean scores decide
    assert (acc["judge"].n, acc["judge"].correct) == (22, 20)
    assert acc["judge"].accuracy == pytest.approx(20 / 22)
    assert (acc["judge"].ci_low, acc["judge"].ci_high) == pytest.approx((0.7219, 0.9747), abs=1e-4)
    # combined uses the judge's score difference (right on every pair) with the features
    assert (acc["combined"].n, acc["combined"].correct) == (22, 22)
    assert [acc[k].paper for k in ("geometry", "judge", "combined")] == [68.2, 70.0, 80.2]
    imputed = agreement.build_agreement(adb, _all(adb), missing="impute")
    assert imputed.features == ["cohesion", "goal_adherence", "volatility"]
    # Either rule says how many were missing: the feature dropped, or the one value imputed.
    assert res.methods[-1].startswith("missing features: drop (1 of 3 features left out")
    assert imputed.methods[-1].startswith("missing features: impute (1 of ")


def test_below_20_pairs_says_not_enough_pairs(adb) -> None:
    data.pair_data(adb, data.PAIRS[:19], judge_wrong=False)
    res = agreement.build_agreement(adb, _all(adb))
    assert res.human_pairs == 19
    for p in res.pairwise:
        assert p.n == 19
        assert p.accuracy is None
        assert p.correct is None
        assert p.note == "not enough pairs (19 < 20)"
    lower = agreement.build_agreement(adb, _all(adb), min_pairs=10)
    assert [p.correct for p in lower.pairwise] == [19, 19, 19]


def test_without_judge_or_features_it_says_what_to_run(adb) -> None:
    data.pair_data(adb, judge_wrong=False)
    adb.execute("DELETE FROM session_features")
    adb.execute("DELETE FROM judge_scores")
    adb.execute("DELETE FROM ratings")
    adb.execute("DELETE FROM preferences WHERE rater LIKE 'judge:%'")
    res = agreement.build_agreement(adb, _all(adb))
    acc = {p.predictor: p for p in res.pairwise}
    assert res.judges == []
    assert res.features_model is None
    assert acc["geometry"].n == 0
    assert "playground features" in (acc["geometry"].note or "")
    assert acc["judge"].accuracy is None
    assert "playground judge" in (acc["judge"].note or "")
    with pytest.raises(errors.PlaygroundError, match="no judge 'judge:nobody'"):
        agreement.build_agreement(adb, _all(adb), judge="judge:nobody")
    with pytest.raises(errors.PlaygroundError, match="missing-feature rule"):
        agreement.build_agreement(adb, _all(adb), missing="guess")


def test_the_scope_limits_sessions_and_pairs(adb) -> None:
    data.rho_data(adb)
    data.pair_data(adb)
    adb.execute(
        "INSERT INTO experiments (id, name, created_at) VALUES ('e1', 'rho', ?)", [data.NOW]
    )
    adb.execute("UPDATE sessions SET experiment_id = 'e1' WHERE id LIKE 'r%'")
    rep = build_report(adb, experiment="e1")
    a = rep.agreement_with_humans
    assert a is not None
    assert a.human_pairs == 0
    assert a.judges == sorted([data.JUDGE, data.FALLBACK_JUDGE])
    assert build_report(adb, agreement_options={"skip": True}).agreement_with_humans is None


def test_the_report_in_two_steps_equals_the_report_in_one(adb) -> None:
    """The report view shows the quick part first and adds the agreement after."""
    data.rho_data(adb)
    data.pair_data(adb)
    quick = build_report(adb, agreement_options={"skip": True})
    assert with_agreement(adb, quick) == build_report(adb)


def test_a_stop_ends_the_leave_one_out_folds_and_says_cancelled(adb) -> None:
    data.pair_data(adb)
    stop = threading.Event()
    stop.set()
    with pytest.raises(errors.Cancelled):
        agreement.build_agreement(adb, _all(adb), stop=stop)
    with pytest.raises(errors.Cancelled):
        agreement.loo_correct([[1.0], [-1.0], [2.0]], [1, 0, 1], stop=stop)
    stop.clear()  # an Event left unset changes nothing
    assert agreement.loo_correct([[1.0], [-1.0], [2.0]], [1, 0, 1], stop=stop) == 3


# -- playground report ------------------------------------------------------------------------
def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.db"
    db = open_database(path)
    data.rho_data(db)
    data.pair_data(db)
    db.close()
    return path


def test_report_command_text_json_and_csv(db_file: Path) -> None:
    code, text, _ = _run("report", "--db", str(db_file))
    assert code == 0
    assert "Agreement: judge, geometry and humans" in text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "judge:model-x Coherence 5 2 0.90" in " | ".join(lines)
    assert any(
        ln.startswith("Geometry (TRACE features) 22 100.0% [85.1-100.0] 68.2%") for ln in lines
    )
    assert any(ln.startswith("Judge 22 90.9% [72.2-97.5] 70.0%") for ln in lines)
    assert any(ln.startswith("Geometry + judge 22 100.0% [85.1-100.0] 80.2%") for ln in lines)
    assert "22 session pairs with a human majority preference, 1 tied left out" in text

    code, out, _ = _run("report", "--db", str(db_file), "--format", "json")
    a = json.loads(out)["agreement_with_humans"]
    assert code == 0
    assert a["human_pairs"] == 22
    assert a["pairwise_judge"] == data.JUDGE
    assert [p["correct"] for p in a["pairwise"]] == [22, 20, 22]
    assert {m["metric"] for m in a["metrics"]} == {"coherence", "engagement"}

    code, out, _ = _run("report", "--db", str(db_file), "--format", "json", "--min-pairs", "30")
    notes = [p["note"] for p in json.loads(out)["agreement_with_humans"]["pairwise"]]
    assert notes == ["not enough pairs (22 < 30)"] * 3
    code, out, _ = _run("report", "--db", str(db_file), "--format", "csv")
    assert "pairwise_accuracy,,,,judge,correct,20" in out
    code, out, _ = _run("report", "--db", str(db_file), "--format", "json", "--no-agreement")
    assert json.loads(out)["agreement_with_humans"] is None
    code, out, _ = _run("report", "--db", str(db_file), "--no-agreement")
    assert "Agreement: judge" not in out


def test_report_command_rejects_bad_agreement_options(db_file: Path) -> None:
    code, _, err = _run("report", "--db", str(db_file), "--min-pairs", "0")
    assert code != 0
    assert "--min-pairs" in err
    assert "Traceback" not in err
    code, _, err = _run("report", "--db", str(db_file), "--agreement-judge", "judge:nobody")
    assert code != 0
    assert "no judge 'judge:nobody'" in err
    assert "Traceback" not in err


def test_report_computes_missing_features_with_minilm(tmp_path: Path) -> None:
    path = tmp_path / "real.db"
    ids = []
    for seed in (1, 2):
        argv = ["simulate", "--agents", "2", "--turns", "3", "--seed", str(seed), "--quiet"]
        code, out, err = _run(*argv, "--db", str(path))
        assert code == 0, err
        ids.append(out.strip().splitlines()[-1])
    db = open_database(path)
    data.prefer(db, "h1", ids[0], ids[1], ids[1])
    db.close()
    code, out, _ = _run("report", "--db", str(path), "--format", "json")
    a = json.loads(out)["agreement_with_humans"]
    assert a["human_pairs"] == 1
    assert a["features_model"] is None  # read only: nothing computed
    code, out, err = _run("report", "--db", str(path), "--format", "json", "--compute-features")
    assert code == 0, err
    a = json.loads(out)["agreement_with_humans"]
    assert a["features_model"]
    assert len(a["features"]) >= 10
    assert a["pairwise"][0]["n"] == 1
    assert a["pairwise"][0]["note"] == "not enough pairs (1 < 20)"
    db = open_database(path)
    stored = {r[0] for r in db.execute("SELECT session_id FROM session_features")}
    db.close()
    assert stored == set(ids)


def test_one_session_pair_reads_in_the_singular() -> None:
    from playground.report.agreement_format import render_lines
    from playground.report.agreement_model import AgreementWithHumans
    from playground.report.format import _table

    a = AgreementWithHumans(
        judges=[], pairwise_judge=None, features_model=None, features=[], metrics=[],
        human_pairs=1, tied_pairs=1, min_pairs=20, min_sessions=5, pairwise=[], methods=[],
    )  # fmt: skip
    text = "\n".join(render_lines(a, _table))
    assert "(1 session pair with a human majority preference, 1 tied left out)" in text
