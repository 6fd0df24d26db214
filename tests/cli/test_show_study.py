"""``playground show`` and ``show --json`` of a study conversation carry what its people said
after it: their retrospective reviews, questionnaire ratings and (its plan's last conversation)
the end-of-study answers. A real study database (testbed.study_data)."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from pathlib import Path

import pytest

from playground.cli import main as cli
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from testbed.study_data import THINKING, WHY, build_study_database


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Path:
    path = tmp_path_factory.mktemp("show-study") / "study.db"
    return asyncio.run(build_study_database(path, CachingEmbedder(minilm)))


def _show(db: Path, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["show", *argv, "--db", str(db)], out=out, err=err) == 0, err.getvalue()
    return out.getvalue()


def _sessions(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT session_id FROM plan_steps WHERE plan_id = 'p1' ORDER BY position"
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def test_show_prints_the_reviews_ratings_and_final_answers(study_db: Path) -> None:
    first, _, last = _sessions(study_db)
    text = _show(study_db, first)
    assert "Study plan p1: conversation 1 of 3" in text
    assert "Reviews (each person's own, message by message):" in text
    assert f"why: {WHY}" in text
    assert "Wes on [" in text
    assert f"thinking: {THINKING}" in text
    assert "would have spoken: immediately" in text
    assert "Questionnaire (1-7):" in text
    assert "  Uma: likeability " in text
    assert "End-of-study answers:" not in text  # only with the plan's last conversation
    text = _show(study_db, last)
    assert "Study plan p1: conversation 3 of 3" in text
    assert "End-of-study answers:" in text
    assert "favourite = " in text


def test_show_json_has_the_reviews(study_db: Path) -> None:
    first, _, last = _sessions(study_db)
    data = json.loads(_show(study_db, first, "--json"))
    study = data["study"]
    assert study["plan"]["plan_id"] == "p1"
    assert study["plan"]["position"] == 1
    assert {r["author"] for r in study["retrospective"]} == {"Uma", "Vic", "Wes"}
    assert any(r["why"] == WHY for r in study["retrospective"])
    assert {q["author"] for q in study["questionnaire"]} == {"Uma", "Vic", "Wes"}
    assert study["final_answers"] == []
    final = json.loads(_show(study_db, last, "--json"))["study"]["final_answers"]
    assert {a["person"] for a in final} == {"Uma", "Vic", "Wes"}
    assert any(a["item"] == "favourite" for a in final)
