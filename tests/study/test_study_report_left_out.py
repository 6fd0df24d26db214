"""The study report says how many messages with their author's reason it leaves out of the
inference measure (no agent interpretation to compare with) and why: in the table, the JSON and
the window's view of it. A real study database (testbed.study_data), two interpretations then
taken away: one of a message the agents moved on from, one of a conversation's last."""

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
from playground.report import study, study_model
from playground.storage import open_database
from testbed.study_data import build_study_database


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Path:
    path = tmp_path_factory.mktemp("left-out") / "study.db"
    return asyncio.run(build_study_database(path, CachingEmbedder(minilm)))


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def _report(path: Path) -> study_model.StudyReport:
    db = open_database(path, create=False)
    try:
        return study.build_study_report(db, ["p1"])
    finally:
        db.close()


def test_reasons_with_no_interpretation_are_counted_and_explained(study_db: Path) -> None:
    before = _report(study_db)
    assert before.inference_left_out == []
    assert before.inference[-1].left_out == {}
    sessions = sorted({i.session_id for i in before.inference_items})
    first = min((i for i in before.inference_items if i.session_id == sessions[0]),
                key=lambda i: i.message_id)  # fmt: skip
    last = max((i for i in before.inference_items if i.session_id == sessions[1]),
               key=lambda i: i.message_id)  # fmt: skip
    conn = sqlite3.connect(study_db)
    with conn:
        conn.execute(
            "UPDATE messages SET interpretation = NULL WHERE session_id = ? AND id = ?",
            [first.session_id, first.message_id],
        )
        conn.execute(  # the conversation ended before the agents interpreted its last messages
            "UPDATE messages SET interpretation = NULL WHERE session_id = ? AND id >= ?",
            [last.session_id, last.message_id],
        )
    conn.close()

    r = _report(study_db)
    total = r.inference[-1]
    assert (total.with_reason, total.n) == (before.inference[-1].with_reason, 7)
    assert total.left_out == {"skipped": 1, "ended": 1}
    by_condition = {x.condition: x.left_out for x in r.inference[:-1]}
    assert by_condition[first.condition] == {"skipped": 1}
    assert by_condition[last.condition] == {"ended": 1}
    assert {(x.session_id, x.message_id, x.why) for x in r.inference_left_out} == {
        (first.session_id, first.message_id, "skipped"),
        (last.session_id, last.message_id, "ended"),
    }

    code, text = _cli("study-report", "p1", "--db", str(study_db), "--no-similarity")
    assert code == 0
    assert "Left out: 2 of 9 messages with a reason have no agent interpretation" in text
    assert "1: the conversation ended before the agents interpreted the message" in text
    assert f"{first.session_id} message {first.message_id} ({first.person}" in text

    code, out = _cli("study-report", "p1", "--db", str(study_db), "--no-similarity", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["inference"][-1]["left_out"] == {"skipped": 1, "ended": 1}
    assert len(data["inference_left_out"]) == 2
