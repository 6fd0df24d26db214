"""The statistics report: values checked against hand computation on a small fixed data set,
the text/CSV/JSON outputs, the PNG plots, and the `playground report` command.

Sessions come from real offline simulations; conditions are set with SQL.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from playground.cli import main as cli
from playground.rating.store import CONVERSATION_METRICS, PARTICIPANT_ITEMS, RatingStore
from playground.report import model as report_model
from playground.report import plots
from playground.report import stats as report
from playground.storage import open_database

A, B = "inner-thoughts", "next-speaker"
# Observations per condition, as (session, rater); r1 and r2 share sessions a1 and b1.
OBS_A = [("a1", "r1"), ("a2", "r1"), ("a1", "r2")]
OBS_B = [("b1", "r1"), ("b1", "r2"), ("b2", "r2")]
VALUES = {  # metric: (values of OBS_A, values of OBS_B)
    "anthropomorphism": ([5, 6, 4], [3, 4, 2]),  # a tie across groups: normal approximation
    "coherence": ([7, 5, 6], [3, 4, 1]),
    "engagement": ([6, 2, 4], [5, 3, 1]),
    "intelligence": ([4, 4, 4], [4, 4, 4]),
    "turn_appropriateness": ([6, 7, 5], [2, 3, 4]),
    "initiative": ([3, 5, 5], [5, 2, 6]),
    "adaptability": ([2, 3, 1], [6, 5, 7]),
}
PREFERENCES = [  # rater, first, second, chosen: A chosen 4 times of 5, the first shown once
    ("r1", "a1", "b1", "a1"),
    ("r1", "b2", "a2", "a2"),
    ("r1", "a1", "b2", "b2"),
    ("r1", "b1", "a2", "a2"),
    ("r2", "b1", "a1", "a1"),
    ("r2", "a1", "a2", "a1"),  # same condition: not a comparison, left out
]
MARKS = [("a1", 2, "r1"), ("a1", 3, "r1"), ("a1", 2, "r2"), ("b1", 2, "r1"), ("a3", 2, "r2")]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def unrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Five real sessions: a1, a2, a3 in inner-thoughts; b1, b2 in next-speaker. No ratings."""
    path = tmp_path_factory.mktemp("report") / "unrated.db"
    names = {}
    for seed, name in enumerate(["a1", "a2", "a3", "b1", "b2"], start=1):
        argv = ["simulate", "--agents", "3", "--turns", "4", "--seed", str(seed), "--quiet"]
        code, out, err = run(*argv, "--db", str(path))
        assert code == 0, err
        names[name] = out.strip().splitlines()[-1]
    db = open_database(path)
    with db.conn:
        for name, sid in names.items():
            cond = A if name.startswith("a") else B
            db.execute("UPDATE sessions SET condition = ? WHERE id = ?", [cond, sid])
    db.close()
    return path, names


def add_fixed_ratings(store: RatingStore, ids: dict[str, str]) -> None:
    for metric, (xs, ys) in VALUES.items():
        for (session, rater), value in zip(OBS_A + OBS_B, xs + ys, strict=True):
            store.rate_conversation(ids[session], rater, {metric: value})
    for rater, first, second, chosen in PREFERENCES:
        store.record_preference(rater, ids[first], ids[second], ids[chosen], "more natural")
    for session, message, rater in MARKS:
        store.mark_turn(ids[session], message, rater)
    store.answer_questionnaire(ids["a1"], "p1", {i.key: 5 for i in PARTICIPANT_ITEMS})
    store.answer_questionnaire(ids["a2"], "p2", {i.key: 6 for i in PARTICIPANT_ITEMS})


@pytest.fixture(scope="module")
def rated(unrated, tmp_path_factory) -> tuple[Path, dict[str, str], report_model.Report]:
    path = tmp_path_factory.mktemp("report") / "rated.db"
    shutil.copy(unrated[0], path)
    db = open_database(path)
    add_fixed_ratings(RatingStore(db), unrated[1])
    rep = report.build_report(db)
    db.close()
    return path, unrated[1], rep


def comparison(rep: report_model.Report, metric: str) -> report_model.Comparison:
    (found,) = [c for c in rep.comparisons if c.metric == metric]
    return found


def exact_two_sided_p(xs: list[int], ys: list[int]) -> float:
    """Permutation distribution of U over every split of the pooled values (no ties assumed)."""
    pooled, n = xs + ys, len(xs)

    def u(group: tuple[int, ...], rest: list[int]) -> int:
        return sum(1 for g in group for r in rest if g > r)

    observed = u(tuple(xs), ys)
    us = []
    for idx in itertools.combinations(range(len(pooled)), n):
        group = tuple(pooled[i] for i in idx)
        us.append(u(group, [pooled[i] for i in range(len(pooled)) if i not in idx]))
    upper = sum(1 for v in us if v >= observed) / len(us)
    lower = sum(1 for v in us if v <= observed) / len(us)
    return min(1.0, 2 * min(upper, lower))


def ordinal_alpha(data: list[list[float]]) -> float:
    """Krippendorff's ordinal alpha from the coincidence matrix (Krippendorff 2011), written
    independently of the package; raters x units, NaN for missing."""
    units = [[v for v in col if not math.isnan(v)] for col in zip(*data, strict=True)]
    units = [u for u in units if len(u) >= 2]
    values = sorted({v for u in units for v in u})
    o = {(c, k): 0.0 for c in values for k in values}
    for u in units:
        for i, j in itertools.permutations(range(len(u)), 2):
            o[(u[i], u[j])] += 1 / (len(u) - 1)
    n_c = {c: sum(o[(c, k)] for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c: float, k: float) -> float:
        lo, hi = min(c, k), max(c, k)
        return (sum(n_c[g] for g in values if lo <= g <= hi) - (n_c[c] + n_c[k]) / 2) ** 2

    d_o = sum(o[(c, k)] * delta(c, k) for c in values for k in values) / n
    d_e = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n * (n - 1))
    return 1 - d_o / d_e


def test_holm_matches_hand_values():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max
    assert report.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert report.holm([None, 0.2, 0.5]) == [None, pytest.approx(0.4), pytest.approx(0.5)]
    assert report.holm([0.6, 0.7]) == [1.0, 1.0]
    assert report.holm([]) == []


def test_per_condition_summary_matches_hand_values(rated):
    rep = rated[2]
    (coh_a,) = [m for m in rep.metrics if m.metric == "coherence" and m.condition == A]
    # 5, 6, 7: linear (type 7) quartiles 5.5 and 6.5
    assert (coh_a.n, coh_a.median, coh_a.mean, coh_a.q1, coh_a.q3) == (3, 6.0, 6.0, 5.5, 6.5)
    assert coh_a.distribution == {1: 0, 2: 0, 3: 0, 4: 0, 5: 1, 6: 1, 7: 1}
    assert rep.conditions == [A, B]
    assert len(rep.metrics) == 14


@pytest.mark.parametrize(
    ("metric", "u", "p", "r"),
    [
        # every A value beats every B value: U = 3*3 = 9; 1 split in C(6,3) = 20 reaches it,
        # so one-sided 1/20 and two-sided p = 0.1; r = 2*9/9 - 1 = 1
        ("coherence", 9.0, 0.1, 1.0),
        # A=[6,2,4] vs B=[5,3,1]: 6 beats 3, 2 beats 1, 4 beats 2: U = 6; U >= 6 in 7 of 20
        # splits (U = 6, 7, 8, 9 occur 3, 2, 1, 1 times): p = 2 * 7/20 = 0.7; r = 12/9 - 1 = 1/3
        ("engagement", 6.0, 0.7, 1 / 3),
        ("adaptability", 0.0, 0.1, -1.0),
        ("turn_appropriateness", 9.0, 0.1, 1.0),
    ],
)
def test_mann_whitney_matches_exact_values_derived_by_hand(rated, metric, u, p, r):
    c = comparison(rated[2], metric)
    xs, ys = VALUES[metric]
    assert (c.condition_a, c.condition_b, c.n_a, c.n_b) == (A, B, 3, 3)
    assert c.u == u
    assert c.r == pytest.approx(r)
    assert c.p == pytest.approx(p) == pytest.approx(exact_two_sided_p(xs, ys))
    assert stats.mannwhitneyu(xs, ys, method="exact").pvalue == pytest.approx(p)  # cross-check


def test_ties_use_scipys_normal_approximation_and_holm_covers_the_seven_metrics(rated):
    rep = rated[2]
    anth = comparison(rep, "anthropomorphism")
    expected = stats.mannwhitneyu(*VALUES["anthropomorphism"], method="asymptotic")
    assert anth.u == 8.5
    assert anth.p == pytest.approx(expected.pvalue)
    same = comparison(rep, "intelligence")
    assert (same.u, same.p, same.r) == (4.5, 1.0, 0.0)
    # p = 0.121, 0.1, 0.7, 1, 0.1, 1, 0.1: the smallest is x7 = 0.7, and the running max keeps
    # 0.7 for the three 0.1s and for 0.121 (x4 = 0.48); the rest reach 1.
    holm = {c.metric: c.p_holm for c in rep.comparisons}
    assert holm == pytest.approx(
        {"anthropomorphism": 0.7, "coherence": 0.7, "engagement": 1.0, "intelligence": 1.0,
         "turn_appropriateness": 0.7, "initiative": 1.0, "adaptability": 0.7}
    )  # fmt: skip
    assert [c.p_holm for c in rep.comparisons] == report.holm([c.p for c in rep.comparisons])


def test_preference_share_wilson_interval_and_binomial_p(rated):
    (pref,) = rated[2].preferences
    a, b = pref.shares
    assert (pref.condition_a, pref.condition_b, pref.n, pref.chose_first) == (A, B, 5, 1)
    assert (a.condition, a.chosen, a.share, b.chosen) == (A, 4, 0.8, 1)
    # Wilson: centre (k + z^2/2)/(n + z^2), half-width z sqrt(n)/(n + z^2) sqrt(p(1-p) + z^2/4n)
    z, n, k = 1.959963984540054, 5, 4
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(n) / (n + z * z) * math.sqrt(0.8 * 0.2 + z * z / (4 * n))
    assert (a.ci_low, a.ci_high) == pytest.approx((centre - half, centre + half))
    assert (a.ci_low, a.ci_high) == pytest.approx((0.3755, 0.9638), abs=1e-4)
    assert (b.ci_low, b.ci_high) == pytest.approx((1 - a.ci_high, 1 - a.ci_low))
    # two-sided binomial against 0.5: P(X >= 4) + P(X <= 1) = (5 + 1 + 1 + 5) / 32
    assert pref.p == pytest.approx(12 / 32)
    per_rater = {
        (r.rater, r.chose_condition_a, r.chose_condition_b) for r in rated[2].rater_preferences
    }
    assert per_rater == {("r1", 3, 1), ("r2", 1, 0)}


def test_unnatural_turn_marks_per_conversation_and_condition(rated):
    path, ids, rep = rated
    db = open_database(path)
    messages = db.execute(
        "SELECT COUNT(*) FROM messages WHERE session_id = ?", [ids["a1"]]
    ).fetchone()[0]
    db.close()
    by_session = {m.session_id: m for m in rep.conversation_marks}
    a1 = by_session[ids["a1"]]
    assert (a1.marks, a1.messages, a1.rated) == (3, messages, True)
    assert a1.per_message == pytest.approx(3 / messages)
    assert (by_session[ids["a3"]].marks, by_session[ids["a3"]].rated) == (1, False)
    cond = {m.condition: m for m in rep.condition_marks}
    # A: 4 marks over 3 conversations; the 2 rated ones (a1, a2) carry 3 of them
    assert (cond[A].total, cond[A].conversations, cond[A].rated_conversations) == (4, 3, 2)
    assert cond[A].mean_per_conversation == pytest.approx(4 / 3)
    assert cond[A].mean_per_rated_conversation == pytest.approx(1.5)
    assert (cond[B].total, cond[B].mean_per_conversation) == (1, 0.5)


def test_ordinal_alpha_helper_reproduces_krippendorffs_published_example():
    nan = math.nan
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 observers x 12 units:
    # published ordinal alpha 0.815
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    assert ordinal_alpha(data) == pytest.approx(0.815, abs=5e-4)
    assert report.krippendorff_alpha({"x": {"u": 1}})[0] is None  # one rater


def test_krippendorff_alpha_per_metric(rated):
    agreement = {a.metric: a for a in rated[2].agreement}
    # coherence: pairable units a1 (7, 6) and b1 (3, 4); o(6,7) = o(3,4) = 1 each way, n = 4;
    # ordinal delta(6,7) = delta(3,4) = 1, delta(3,6) = delta(4,7) = 4, delta(4,6) = 1,
    # delta(3,7) = 9: D_o = 4/4 = 1, D_e = 2 * 20 / (4 * 3) = 10/3, alpha = 1 - 3/10 = 0.7
    assert agreement["coherence"].alpha == pytest.approx(0.7)
    assert (agreement["coherence"].raters, agreement["coherence"].shared_sessions) == (2, 2)
    assert agreement["intelligence"].alpha is None  # every rating is 4: alpha is 0/0
    for metric, (xs, ys) in VALUES.items():
        if metric == "intelligence":
            continue
        # raters x sessions (a1, a2, b1, b2)
        data = [[xs[0], xs[1], ys[0], np.nan], [xs[2], np.nan, ys[1], ys[2]]]
        assert agreement[metric].alpha == pytest.approx(ordinal_alpha(data)), metric


def test_participant_questionnaire_and_counts(rated):
    rep = rated[2]
    assert {(m.metric, m.condition, m.n, m.median, m.mean) for m in rep.participant} == {
        (i.key, A, 2, 5.5, 5.5) for i in PARTICIPANT_ITEMS
    }
    assert rep.counts.model_dump() == {
        "sessions": 5, "rated_sessions": 4, "raters": 2, "respondents": 2,
        "conversation_ratings": 42, "questionnaires": 2, "preferences": 5, "marks": 5,
    }  # fmt: skip


def test_table_csv_and_json_outputs(rated):
    rep = rated[2]
    table = report.render_table(rep)
    lines = [" ".join(line.split()) for line in table.splitlines()]
    assert "Turn appropriateness inner-thoughts 3 6.0 6.00 5.5-6.5 0 0 0 0 1 1 1" in lines
    assert "inner-thoughts vs next-speaker  Coherence" in table
    assert "inner-thoughts 4 (80% [38-96])" in table
    rows = list(csv.DictReader(io.StringIO(report.to_csv(rep))))
    assert list(rows[0]) == [
        "section",
        "condition",
        "condition_b",
        "metric",
        "subject",
        "statistic",
        "value",
    ]
    (p,) = [
        r
        for r in rows
        if r["section"] == "comparison" and r["metric"] == "coherence" and r["statistic"] == "p"
    ]
    assert (p["condition"], p["condition_b"], float(p["value"])) == (A, B, pytest.approx(0.1))
    (alpha,) = [
        r
        for r in rows
        if r["section"] == "agreement"
        and r["metric"] == "intelligence"
        and r["statistic"] == "alpha"
    ]
    assert alpha["value"] == ""
    assert report_model.Report.model_validate_json(report.to_json(rep)) == rep
    assert json.loads(rep.model_dump_json())["preferences"][0]["n"] == 5


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_cli_formats_and_plots(rated, tmp_path):
    path = str(rated[0])
    code, table, _ = run("report", "--db", path)
    assert code == 0
    assert "Ratings report: all sessions" in table
    assert "Krippendorff" in table
    code, text, _ = run("report", "--db", path, "--format", "csv")
    assert code == 0
    assert text.startswith("section,condition,condition_b,metric")
    code, text, _ = run("report", "--db", path, "--format", "json")
    assert code == 0
    assert json.loads(text)["counts"]["conversation_ratings"] == 42
    target = tmp_path / "figures" / "run1"
    code, text, _ = run("report", "--db", path, "--plots", str(target))
    assert code == 0
    for name in ("likert.png", "preference.png"):
        assert f"wrote {target / name}" in text
        width, height = png_size((target / name).read_bytes())
        assert width >= 800
        assert height >= 250
        assert (target / name).stat().st_size > 10_000


def test_plots_skip_what_has_nothing_to_show(unrated, tmp_path):
    db = open_database(tmp_path / "one.db")
    db.close()
    shutil.copy(unrated[0], tmp_path / "one.db")
    db = open_database(tmp_path / "one.db")
    RatingStore(db).rate_conversation(
        unrated[1]["a1"], "r1", {m.key: 5 for m in CONVERSATION_METRICS}
    )
    rep = report.build_report(db)
    db.close()
    log = io.StringIO()
    written = plots.write_plots(rep, tmp_path / "out", log=log)
    assert [p.name for p in written] == ["likert.png"]
    assert "skipped preference.png: no pairwise preferences" in log.getvalue()
    assert png_size(plots.figure_png(plots.likert_figure(rep), dpi=60))[0] == 600


def test_cli_on_a_missing_database_creates_nothing(tmp_path):
    missing = tmp_path / "nowhere" / "ratings.db"
    code, _out, err = run("report", "--db", str(missing))
    assert code == 1
    assert f"error: no database at {missing}" in err
    assert "Traceback" not in err
    assert not missing.exists()
    assert not missing.parent.exists()


def test_cli_without_ratings_says_so(unrated):
    code, out, _ = run("report", "--db", str(unrated[0]), "--format", "json")
    assert code == 0
    assert "no ratings yet" in out
    assert "5 sessions" in out


def test_cli_unknown_experiment_is_named_and_experiments_scope_the_report(rated, tmp_path):
    code, _, err = run("report", "--db", str(rated[0]), "--experiment", "exp-404")
    assert code == 1
    assert "no experiment 'exp-404'" in err
    path = tmp_path / "exp.db"
    shutil.copy(rated[0], path)
    ids = rated[1]
    db = open_database(path)
    with db.conn:
        db.execute("INSERT INTO experiments (id, created_at) VALUES ('e1', 'now')")
        db.execute(
            "UPDATE sessions SET experiment_id = 'e1' WHERE id IN (?, ?)", [ids["a1"], ids["b1"]]
        )
    db.close()
    code, text, _ = run("report", "--db", str(path), "--experiment", "e1", "--format", "json")
    data = json.loads(text)
    assert code == 0
    assert data["experiment"] == "e1"
    assert data["counts"]["sessions"] == 2
    # a1: r1 and r2; b1: r1 and r2 -> 4 observations x 7 metrics
    assert data["counts"]["conversation_ratings"] == 28


def test_report_updates_after_adding_ratings(rated, tmp_path):
    path = tmp_path / "more.db"
    shutil.copy(rated[0], path)
    db = open_database(path)
    before = report.build_report(db)
    store = RatingStore(db)
    store.rate_conversation(rated[1]["b2"], "r3", {"coherence": 7})
    store.record_preference("r3", rated[1]["a3"], rated[1]["b2"], rated[1]["b2"], "")
    after = report.build_report(db, session_ids=None)
    scoped = report.build_report(db, session_ids=[rated[1]["b2"][:-1]])
    db.close()
    coh_b = next(m for m in after.metrics if m.metric == "coherence" and m.condition == B)
    assert coh_b.n == 4
    assert coh_b.distribution[7] == 1
    # the new 7 ties with A's 7 (half a point) and beats A's 5 and 6: U = 9 + 0.5
    assert comparison(after, "coherence").u == 9.5
    assert comparison(after, "coherence").n_b == 4
    assert after.preferences[0].n == before.preferences[0].n + 1 == 6
    assert after.counts.raters == 3
    assert before.counts.raters == 2
    assert scoped.counts.sessions == 1
    assert scoped.preferences == []


def test_per_rater_choices_are_reported_as_the_rater_saw_them(rated):
    """A and B are the conversations as shown (first, second), never the condition order: r1
    chose the second conversation three times of four, r2 chose it once."""
    rep, ids = rated[2], rated[1]
    per_rater = {
        r.rater: (r.chose_shown_a, r.chose_shown_b, r.chose_condition_a, r.chose_condition_b)
        for r in rep.rater_preferences
    }
    assert per_rater == {"r1": (1, 3, 3, 1), "r2": (0, 1, 1, 0)}
    choices = [(c.rater, c.shown_a, c.shown_b, c.chosen, c.chosen_condition) for c in rep.choices]
    assert choices == [
        ("r1", ids["a1"], ids["b1"], "A", A),
        ("r1", ids["b2"], ids["a2"], "B", A),
        ("r1", ids["a1"], ids["b2"], "B", B),
        ("r1", ids["b1"], ids["a2"], "B", A),
        ("r2", ids["b1"], ids["a1"], "B", A),
    ]
    table = report.render_table(rep)
    lines = [" ".join(line.split()) for line in table.splitlines()]
    # r2 saw next-speaker as Conversation A and chose Conversation B (inner-thoughts)
    assert f"r2 {ids['b1']} ({B}) {ids['a1']} ({A}) B (= {A})" in lines
    assert f"r1 {A} vs {B} 1 3 {A} 3, {B} 1" in lines
    rows = list(csv.DictReader(io.StringIO(report.to_csv(rep))))
    chosen = [
        (r["subject"], r["value"])
        for r in rows
        if r["section"] == "preference_choice" and r["statistic"] == "chosen"
    ]
    assert chosen[-1] == (f"r2: {ids['b1']} vs {ids['a1']}", "B")


def test_counts_in_the_report_are_singular_for_one(unrated, tmp_path):
    path = tmp_path / "one.db"
    shutil.copy(unrated[0], path)
    db = open_database(path)
    ids = unrated[1]
    store = RatingStore(db)
    store.rate_conversation(ids["a1"], "r1", {"coherence": 5})
    store.record_preference("r1", ids["a1"], ids["b1"], ids["a1"], "why")
    store.mark_turn(ids["a1"], 2, "r1")
    store.answer_questionnaire(ids["a1"], "p1", {"likeability": 4})
    one = report.build_report(db, session_ids=[ids["a1"]])
    two = report.build_report(db, session_ids=[ids["a1"], ids["b1"]])
    db.close()
    assert report.render_table(one).splitlines()[1] == (
        "1 session (1 rated), 1 rater, 1 conversation rating, 0 preferences, "
        "1 unnatural-turn mark, 1 questionnaire from 1 participant"
    )
    head = report.render_table(two).splitlines()[1]
    assert head.startswith("2 sessions (1 rated), 1 rater, 1 conversation rating, 1 preference, ")
