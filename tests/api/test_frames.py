"""``to_pandas()``: tidy tables of a database, an experiment and a session, checked against what the
command line says (``show --json``, ``features --format json``) and the export, with the columns
the export format documents."""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

import playground as pg
from playground import domain
from playground.api import frames as api_frames
from playground.cognition import scoring
from playground.geometry import features as geometry_features
from playground.transfer import export
from playground.transfer import model as export_model
from tests.api.conftest import Built, run, show_json
from tests.conftest import REPO

EXPORT_DOC = (REPO / "docs" / "export-format.md").read_text(encoding="utf-8")
SPREAD_KEYS = {
    "distribution": tuple(str(r) for r in scoring.RATINGS),
    "heuristics": domain.HEURISTICS,
}
#: Columns that are no export field, each with where it comes from.
ADDED = {
    "session_id": "the record's session.id",
    "thought_id": "the evaluated thought",
    "first_condition": "the condition of first_id",
    "second_condition": "the condition of second_id",
    "text": "the message's text",
    **{name: "geometry" for name in geometry_features.FEATURE_NAMES},
    "message_count": "geometry",
    "version": "geometry",
    "computed_at": "geometry",
    "goal": "geometry",
}


@pytest.fixture(scope="module")
def frames(built: Built) -> pg.Frames:
    with pg.open(built.path) as db:
        return db.to_pandas()


@pytest.fixture(scope="module")
def shown(built: Built) -> dict[str, dict[str, Any]]:
    ids = [built.simulated, *built.experiment, built.storm]
    return {sid: show_json(built.path, sid) for sid in ids}


def _count(frame: Any, session_id: str) -> int:
    return int((frame["session_id"] == session_id).sum())


def test_every_table_has_one_row_per_thing_as_show_json_counts_them(
    frames: pg.Frames, shown: dict[str, dict[str, Any]]
) -> None:
    assert list(frames.sessions["session_id"]) == list(shown)
    for sid, data in shown.items():
        assert _count(frames.participants, sid) == len(data["participants"])
        assert _count(frames.messages, sid) == len(data["messages"])
        assert _count(frames.thoughts, sid) == len(data["thoughts"])
        assert _count(frames.evaluations, sid) == sum(
            len(t["evaluations"]) for t in data["thoughts"]
        )
        assert _count(frames.decisions, sid) == len(data["decisions"])
        assert _count(frames.storm_turns, sid) == len(data["hidden_states"])
    assert len(frames.messages) == sum(len(d["messages"]) for d in shown.values())


def test_ratings_marks_and_preferences_are_counted_as_the_export_lists_them(
    built: Built, frames: pg.Frames
) -> None:
    with pg.open(built.path) as db:
        records = {s.id: export.export_record(db.handle, s.id) for s in db.sessions}
    for sid, record in records.items():
        assert _count(frames.ratings, sid) == len(record["ratings"])
        assert _count(frames.turn_marks, sid) == len(record["turn_marks"])
    assert len(frames.ratings) == 14  # two raters' seven conversation metrics
    # The preference is in both sessions' records; it is one thing, so one row.
    assert sum(len(r["preferences"]) for r in records.values()) == 2
    (pref,) = frames.preferences.to_dict("records")
    first, second = built.experiment
    assert (pref["first_id"], pref["second_id"], pref["chosen_id"]) == (first, second, second)
    assert (pref["first_condition"], pref["second_condition"]) == ("inner-thoughts", "reactive")
    assert pref["reason"] == "flows better"
    (mark,) = frames.turn_marks.to_dict("records")
    assert (mark["session_id"], mark["message_id"], mark["comment"]) == (
        built.simulated,
        2,
        "too abrupt",
    )


#: The export row each table's rows are (the tables with data from elsewhere are checked by
#: ADDED and the docs).
ROW_OF: dict[str, type[BaseModel]] = {
    "sessions": export_model.SessionRow,
    "participants": export_model.ParticipantRow,
    "messages": export_model.MessageRow,
    "thoughts": export_model.ThoughtRow,
    "evaluations": export_model.EvaluationRow,
    "decisions": export_model.DecisionRow,
    "ratings": export_model.RatingRow,
    "preferences": export_model.PreferenceRow,
    "turn_marks": export_model.TurnMarkRow,
    "storm_dialogues": export_model.StormDialogueRow,
    "storm_turns": export_model.HiddenStateRow,
}


def test_columns_are_named_as_the_export_format_names_them(frames: pg.Frames) -> None:
    assert {n: list(f.columns) for n, f in frames.tables().items()} == pg.Frames.columns()
    for name, kind in ROW_OF.items():
        own = {c.partition(".")[0] for c in pg.Frames.columns()[name]} - set(ADDED)
        borrowed = {"experiment_id", "condition"} | ({"agent"} if name == "evaluations" else set())
        assert own - borrowed <= set(kind.model_fields), name
    for name, frame in frames.tables().items():
        if name != "preferences":
            assert list(frame.columns[:3]) == ["session_id", "experiment_id", "condition"], name
        for column in frame.columns:
            base, _, key = column.partition(".")
            if key:
                assert key in SPREAD_KEYS[base], column
            if column in ADDED:
                continue
            assert f"`{base}`" in EXPORT_DOC, f"{name}.{column} is not in docs/export-format.md"
    assert {c for c in frames.thoughts.columns if c.startswith("heuristics.")} == {
        f"heuristics.{h}" for h in domain.HEURISTICS
    }
    assert len(domain.HEURISTICS) == 8
    for needed in ("stimuli", "saliency", "system", "score", "method", "rating"):
        assert needed in frames.thoughts.columns
    for needed in ("inner_thoughts", "satisfaction", "clarity", "emotion", "intent"):
        assert needed in frames.storm_turns.columns


def test_a_retained_thought_and_its_evaluations_match_show_json_by_hand(
    built: Built, frames: pg.Frames, shown: dict[str, dict[str, Any]]
) -> None:
    data = shown[built.simulated]
    thought = next(t for t in data["thoughts"] if len(t["evaluations"]) > 1)
    rows = frames.thoughts[
        (frames.thoughts["session_id"] == built.simulated)
        & (frames.thoughts["id"] == thought["id"])
    ].to_dict("records")
    (row,) = rows
    for key in ("agent", "text", "system", "saliency", "score", "rating", "method"):
        assert row[key] == thought[key], key
    assert row["stimuli"] == thought["stimuli"]
    assert row["condition"] == "inner-thoughts"
    assert pd.isna(row["experiment_id"])  # not in an experiment
    for k in SPREAD_KEYS["distribution"]:
        assert row[f"distribution.{k}"] == thought["distribution"][k]
    evals = frames.evaluations[
        (frames.evaluations["session_id"] == built.simulated)
        & (frames.evaluations["thought_id"] == thought["id"])
    ].to_dict("records")
    assert len(evals) == len(thought["evaluations"])
    for got, want in zip(evals, thought["evaluations"], strict=True):
        assert got["agent"] == thought["agent"]
        for key in ("step", "rating", "expected", "silence_factor", "score", "method"):
            assert got[key] == want[key], key
        assert bool(got["retained"]) == bool(want["retained"])
        for h in domain.HEURISTICS:
            assert got[f"heuristics.{h}"] == want["heuristics"][h], h
        # By hand: expected = Σ s·p(s); score = expected × silence factor (docs/schema.md).
        probabilities = {int(k): got[f"distribution.{k}"] for k in SPREAD_KEYS["distribution"]}
        assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-3)
        assert got["expected"] == pytest.approx(
            sum(s * p for s, p in probabilities.items()), abs=1e-3
        )
        assert got["score"] == pytest.approx(got["expected"] * got["silence_factor"], abs=1e-3)
    assert any(e["retained"] == 1 for e in evals)


def test_integer_columns_keep_missing_values_and_text_stays_text(frames: pg.Frames) -> None:
    messages = frames.messages
    assert str(messages["id"].dtype) == "Int64"
    assert str(messages["thought_id"].dtype) == "Int64"
    assert messages["thought_id"].isna().any()  # the icebreaker expresses no thought
    assert str(frames.thoughts["score"].dtype) == "float64"
    assert messages["text"].map(type).eq(str).all()


def test_an_experiment_groups_by_condition(built: Built, shown: dict[str, dict[str, Any]]) -> None:
    with pg.open(built.path) as db:
        pilot = db.experiment("pilot")
        tables = pilot.to_pandas()
    by_condition = tables.messages.groupby("condition").size().to_dict()
    first, second = built.experiment
    assert by_condition == {
        "inner-thoughts": len(shown[first]["messages"]),
        "reactive": len(shown[second]["messages"]),
    }
    assert set(tables.sessions["session_id"]) == {first, second}
    assert set(tables.decisions["experiment_id"]) == {pilot.id}
    assert set(tables.decisions["policy"]) >= {"reactive"}
    assert tables.geometry.empty
    assert list(tables.geometry.columns) == [name for name, _ in api_frames.geometry_columns()]


def test_a_session_has_only_its_own_rows(built: Built) -> None:
    with pg.open(built.path) as db:
        tables = db.session(built.simulated).to_pandas()
    for name, frame in tables.tables().items():
        if name != "preferences":
            assert set(frame["session_id"]) <= {built.simulated}, name
    assert len(tables.sessions) == 1
    assert tables.preferences.empty


def test_geometry_is_what_playground_features_stored(built: Built, frames: pg.Frames) -> None:
    printed = json.loads(
        run("features", built.simulated, "--db", str(built.path), "--format", "json")
    )
    (want,) = printed["sessions"]
    (row,) = frames.geometry.to_dict("records")
    assert row["session_id"] == built.simulated
    assert (row["model"], row["message_count"], row["goal"]) == (
        want["model"],
        want["message_count"],
        want["goal"],
    )
    for name in geometry_features.FEATURE_NAMES:
        value = want["features"][name]
        if value is None:
            assert math.isnan(row[name]), name
        else:
            assert row[name] == pytest.approx(value), name


def test_storm_turns_carry_the_simulated_users_hidden_states(
    built: Built, frames: pg.Frames, shown: dict[str, dict[str, Any]]
) -> None:
    data = shown[built.storm]
    texts = {m["id"]: m["text"] for m in data["messages"]}
    rows = frames.storm_turns.to_dict("records")
    assert [r["message_id"] for r in rows] == [h["message_id"] for h in data["hidden_states"]]
    for row, state in zip(rows, data["hidden_states"], strict=True):
        for key in ("participant", "turn", "satisfaction", "clarity", "emotion", "intent"):
            assert row[key] == state[key], key
        assert row["inner_thoughts"] == state["inner_thoughts"]
        assert row["text"] == texts[state["message_id"]]
    (dialogue,) = frames.storm_dialogues.to_dict("records")
    assert dialogue["session_id"] == built.storm
    assert dialogue["assistant"] == "plain"
    assert dialogue["profile_access"] == 0


def test_to_parquet_without_pyarrow_says_what_to_install(
    frames: pg.Frames, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow → ImportError
    with pytest.raises(pg.PlaygroundError, match=re.escape("pip install pyarrow")):
        frames.to_parquet(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_pandas_is_imported_only_inside_the_to_pandas_paths() -> None:
    """sqlite-utils imports pandas by itself when it is installed, so this is checked in the
    source: no module of the engine imports pandas, and the tables' module only in functions."""
    found = []
    for path in sorted((REPO / "playground").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "pandas" or n.startswith("pandas.") for n in names):
                where = "module level" if id(node) in top_level else "in a function"
                found.append((path.relative_to(REPO).as_posix(), where))
    assert found, "the tables' module imports pandas"
    assert {p for p, _ in found} == {"playground/api/frames.py"}
    # The only module-level import is the TYPE_CHECKING one (an `if`, not a top-level import).
    assert all(where == "in a function" for _, where in found)


def test_to_parquet_writes_every_table_where_pyarrow_is_installed(
    frames: pg.Frames, tmp_path: Path
) -> None:
    """pyarrow is optional (not in requirements.txt): this runs wherever a user installed it."""
    pytest.importorskip("pyarrow")
    written = frames.to_parquet(tmp_path / "out")
    assert [p.stem for p in written] == list(frames.tables())
    for path in written:
        back = pd.read_parquet(path)
        table = frames.tables()[path.stem]
        assert list(back.columns) == list(table.columns)
        assert len(back) == len(table)


def test_an_empty_database_gives_empty_tables_with_every_column(tmp_path: Path) -> None:
    from playground.storage import open_database

    path = tmp_path / "empty.db"
    open_database(path).close()
    with pg.open(path) as db:
        assert (db.sessions, db.experiments, db.studies, db.rating_plans) == ([], [], [], [])
        empty = db.to_pandas()
    full_columns = {
        "thoughts": "heuristics.dynamics",
        "evaluations": "distribution.5",
        "geometry": "goal_convergence",
        "storm_turns": "satisfaction",
    }
    for name, frame in empty.tables().items():
        assert frame.empty, name
        assert list(frame.columns)[:1] == (["rater"] if name == "preferences" else ["session_id"])
        if name in full_columns:
            assert full_columns[name] in frame.columns
    assert "messages 0" in repr(empty)
