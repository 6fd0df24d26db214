"""The study report (`playground study-report`): a real database with the real migrations, three
real offline conversations of one study plan (one agent each, three people), the people's
questionnaires, end-of-study answers, private reasons and retrospective reviews; every figure
checked against a hand computation (and scipy), the table and JSON outputs, the messages for
missing data, and the judge through the real openai client against the loopback server,
including an answer it cannot read.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from playground.cli import main as cli
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.report import study
from playground.storage import open_database, study_rows
from testbed.llm_server import FakeLLMServer
from testbed.study_data import (
    AC,
    AT,
    LIKEABILITY,
    NSC,
    PEOPLE,
    REASON,
    SP,
    THINKING,
    WHY,
    build_study_database,
)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Path:
    """Plan p1 with its three conversations and every answer; plan p2 planned but not run
    (:func:`testbed.study_data.build_study_database`)."""
    path = tmp_path_factory.mktemp("study") / "study.db"
    return asyncio.run(build_study_database(path, CachingEmbedder(minilm)))


def report_of(path: Path, plans: list[str], embed: Any = None) -> Any:
    db = open_database(path, create=False)
    try:
        return study.build_study_report(db, plans, embed=embed)
    finally:
        db.close()


def test_the_conversations_are_real_and_interpreted(study_db: Path) -> None:
    db = open_database(study_db, create=False)
    rows = db.execute(
        "SELECT speaker, interpretation FROM messages WHERE speaker_kind = 'human'"
    ).fetchall()
    db.close()
    assert len(rows) == 12  # 4 human messages in each of 3 conversations
    assert all(interp for _, interp in rows)  # the offline agents interpret every message


def test_questionnaire_per_condition_and_friedman_within_people(study_db: Path) -> None:
    r = report_of(study_db, ["p1"])
    assert r.conditions == [NSC, AC, SP]  # the paper's order, not the plan's
    like = {s.condition: s for s in r.questionnaire if s.metric == "likeability"}
    assert (like[NSC].n, like[NSC].median, like[NSC].mean) == (3, 2.0, 2.0)
    assert (like[AC].median, like[AC].mean) == (6.0, 6.0)
    assert (like[SP].median, like[SP].mean) == (4.0, pytest.approx(13 / 3))
    init = {s.condition: s for s in r.questionnaire if s.metric == "initiative"}
    assert (init[AC].n, init[AC].mean) == (3, 5.0)
    assert init[NSC].n == 2
    assert {s.n for s in r.questionnaire if s.metric == "response_timing"} == {0}
    tests = {f.metric: f for f in r.friedman}
    f = tests["likeability"]
    # Everyone ranks NSC < SP < AC: chi2 = 12/(n k (k+1)) * sum R^2 - 3 n (k+1) = 6, W = 1.
    expected = stats.friedmanchisquare(*([LIKEABILITY[p][c] for p in PEOPLE] for c in r.conditions))
    assert (f.n, f.k) == (3, 3)
    assert f.statistic == pytest.approx(6.0)
    assert f.p == pytest.approx(expected.pvalue) == pytest.approx(np.exp(-3))
    assert f.kendall_w == pytest.approx(1.0)
    assert tests["initiative"].statistic is None
    assert tests["initiative"].n == 2
    assert tests["initiative"].note == "too few people rated all 3 conditions (2; 3 needed)"


def test_style_matching_against_chance_and_the_favourites(study_db: Path) -> None:
    r = report_of(study_db, ["p1"])
    m = {x.condition: x for x in r.style_matching}
    assert list(m) == [NSC, AC, SP, "all"]
    assert (m[NSC].correct, m[NSC].n) == (2, 3)
    assert m[NSC].accuracy == pytest.approx(0.667, abs=5e-4)
    assert m[NSC].p == pytest.approx(stats.binomtest(2, 3, 1 / 3, alternative="greater").pvalue)
    assert m[NSC].p == pytest.approx(7 / 27)  # P(X >= 2), X ~ Bin(3, 1/3): 6/27 + 1/27
    assert (m[AC].correct, m[SP].correct) == (2, 1)
    assert m[SP].p == pytest.approx(19 / 27)  # 1 - (2/3)^3
    assert (m["all"].correct, m["all"].n) == (5, 9)
    assert m["all"].p == pytest.approx(stats.binomtest(5, 9, 1 / 3, alternative="greater").pvalue)
    assert r.confusion[SP] == {SP: 1, AC: 1, NSC: 1}
    assert r.confusion[AC] == {AC: 2, SP: 1}
    fav = {f.condition: f.count for f in r.favourites}
    assert fav == {NSC: 0, AC: 2, SP: 1}
    assert r.counts.style_matches == 9
    assert r.counts.favourites == 3


def test_inference_pairs_take_each_persons_own_reason_and_the_cosine(
    study_db: Path, minilm: MiniLMEmbedder
) -> None:
    r = report_of(study_db, ["p1"], embed=minilm.embed_sync)
    assert len(r.inference_items) == 9  # 3 people x 3 conversations; Uma's 2nd message has none
    by_person = {(i.person, i.condition): i for i in r.inference_items}
    assert by_person[("Uma", AC)].reason == REASON
    assert by_person[("Uma", AC)].source == "reason"
    assert by_person[("Vic", SP)].reason == WHY
    assert by_person[("Vic", SP)].source == "why"
    assert by_person[("Wes", NSC)].reason == THINKING
    assert by_person[("Wes", NSC)].source == "thinking"
    for item in r.inference_items:
        a, b = minilm.embed_sync([item.interpretation, item.reason])
        cos = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
        assert item.cosine == pytest.approx(cos, abs=1e-5)
    rows = {x.condition: x for x in r.inference}
    assert list(rows) == [NSC, AC, SP, "all"]
    for cond in (NSC, AC, SP):
        mine = [i.cosine for i in r.inference_items if i.condition == cond]
        assert (rows[cond].human_messages, rows[cond].with_reason, rows[cond].n) == (4, 3, 3)
        assert rows[cond].mean_cosine == pytest.approx(sum(mine) / 3)
        assert rows[cond].sd_cosine == pytest.approx(float(np.std(mine, ddof=1)))
    assert (rows["all"].human_messages, rows["all"].n) == (12, 9)
    assert r.judge is None
    assert rows["all"].judged == 0


def test_pooling_with_a_plan_not_yet_run_adds_a_note_and_changes_nothing(study_db: Path) -> None:
    one, both = report_of(study_db, ["p1"]), report_of(study_db, ["p1", "p2"])
    assert both.style_matching == one.style_matching
    assert both.questionnaire == one.questionnaire
    assert "plan p2: no conversation has been run yet" in both.notes
    assert one.notes == []
    assert [p.id for p in both.plans] == ["p1", "p2"]
    assert both.plans[1].run == 0
    assert both.plans[0].run == 3
    assert both.plans[0].conditions == [AC, SP, NSC]


def test_the_command_prints_the_figures_and_its_json_parses(study_db: Path) -> None:
    code, out, err = run("study-report", "p1", "--db", str(study_db), "--no-similarity")
    assert code == 0, err
    assert "Study report: plan p1" in out
    assert "Friedman" in out
    rows = [line.split() for line in out.splitlines()]
    assert ["Likeability", "3", "6.00", "0.0498", "1.00"] in rows  # n, chi2, p, Kendall's W
    assert [NSC, "2/3", "0.667", "0.2593"] in rows  # correct/n, accuracy, p
    assert ["all", "5/9", "0.556", "0.1448"] in rows
    assert "too few people rated all 3 conditions" in out
    assert "(no cosine similarities" in out
    code, out, err = run("study-report", "--all", "--db", str(study_db), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["similarity"] is True
    assert [p["id"] for p in data["plans"]] == ["p1", "p2"]
    all_row = next(m for m in data["style_matching"] if m["condition"] == "all")
    assert (all_row["correct"], all_row["n"]) == (5, 9)
    assert all(isinstance(i["cosine"], float) for i in data["inference_items"])
    assert "Loading the embedding model" in err


def test_missing_data_gets_a_clear_message_never_a_traceback(
    study_db: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.db"
    open_database(empty).close()
    code, out, err = run("study-report", "--all", "--db", str(empty))
    assert (code, err) == (0, "")
    assert out == f"no study plans in {empty}: nothing to report\n"
    code, out, err = run("study-report", "--db", str(tmp_path / "none.db"), "--all")
    assert code == 1
    assert "error: no database at" in err
    assert "Traceback" not in err
    code, out, err = run("study-report", "nope", "--db", str(study_db))
    assert code == 1
    assert "no study plan 'nope'" in err
    code, out, err = run("study-report", "--db", str(study_db))
    assert code == 2
    assert "give PLAN_IDs or --all" in err
    assert "p1, p2" in err
    code, out, err = run("study-report", "p2", "--db", str(study_db), "--no-similarity")
    assert code == 0, err
    assert "plan p2: no conversation has been run yet" in out
    assert "Style matching" not in out
    code, _, err = run(
        "study-report", "p1", "--db", str(study_db), "--judge", "--engine", "offline"
    )
    assert code == 2
    assert "offline engine has no judge" in err
    code, _, err = run("study-report", "p1", "--db", str(study_db), "--model", "m")
    assert code == 2
    assert "add --judge" in err


def test_the_plans_answers_missing_are_said(tmp_path: Path) -> None:
    path = tmp_path / "ran.db"
    db = open_database(path)
    study_rows.create_plan(
        db, {"id": "p9", "created_at": AT, "humans": 2, "grp": 1, "seed": 1, "minutes": 5.0,
             "show_thoughts": 0, "settings": {}},
        [{"position": 1, "condition": NSC, "persona": "Ana", "topic": "t"}], ["x"],
    )  # fmt: skip
    db.execute(
        "INSERT INTO sessions (id, created_at, status, engine, model, config)"
        " VALUES ('s9', ?, 'finished', 'offline', 'offline', '{}')",
        [AT],
    )
    study_rows.set_step(db, "p9", 1, "done", "s9")
    db.close()
    code, out, err = run("study-report", "p9", "--db", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["notes"] == ["plan p9 has no answers yet"]
    assert data["style_matching"] == []
    assert data["questionnaire"] == []


def _judge_answer(body: dict[str, Any]) -> str | None:
    """5 for Uma, 3 for Vic, 2 for Wes; never a readable answer about visiting parents."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if "The person's own reason" not in user:
        return None  # the probe
    if "visit my parents" in user:
        return "Hard to say, maybe a four out of five."
    rating = 5 if "sourdough" in user else 3 if "chess" in user else 2
    return json.dumps({"reason": "It catches the gist.", "rating": rating})


def test_the_judge_rates_each_inference_and_an_unreadable_answer_counts_as_failed(
    study_db: Path,
) -> None:
    with FakeLLMServer() as srv:
        srv.set_responder(_judge_answer)
        code, out, err = run(
            "study-report", "p1", "--db", str(study_db), "--json", "--no-similarity", "--judge",
            "--base-url", srv.base_url, "--api-key", "k", "--model", "fake-model",
        )  # fmt: skip
    assert code == 0, err
    assert "Traceback" not in err
    data = json.loads(out)
    assert data["judge"] == "fake-model"
    rows = {x["condition"]: x for x in data["inference"]}
    # Wes's weekend in the SP conversation was visiting his parents: that answer is unreadable.
    assert (rows[SP]["judged"], rows[SP]["judge_failed"]) == (2, 1)
    assert rows[SP]["mean_judge"] == pytest.approx((5 + 3) / 2)
    assert (rows[AC]["judged"], rows[AC]["mean_judge"]) == (3, pytest.approx(10 / 3))
    assert (rows["all"]["judged"], rows["all"]["judge_failed"]) == (8, 1)
    assert rows["all"]["mean_judge"] == pytest.approx((10 + 10 + 8) / 8)
    assert len(data["judge_failures"]) == 1
    assert "(Wes)" in data["judge_failures"][0]
    failed = [i for i in data["inference_items"] if i["judge_failed"]]
    assert [(i["person"], i["condition"], i["judge_rating"]) for i in failed] == [("Wes", SP, None)]
    assert "LLM use:" in err
