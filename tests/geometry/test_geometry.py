"""Conversational geometry (TRACE): each feature on hand-made vectors with answers worked out by
hand, the per-speaker variants, the message-vector cache, stored rows and ``playground features``."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import sqlite_utils

from playground.embedding.cache import CachingEmbedder
from playground.geometry import features as F
from playground.geometry import store, vectors
from playground.storage import open_database
from playground.storage.vectors import text_hash
from tests.support.cli import cli_refusal, run_cli

E1, E2, E3 = np.eye(3)
R2 = math.sqrt(2)
HALF = 1 - 1 / R2  # d(e1, (e1+e2)/√2)


def approx(x: float) -> object:
    return pytest.approx(x, abs=1e-9)


# --- a dyad A, B, A, B: T1 = e1, T2 = e1, T3 = e2, T4 = (e1 + e2)/√2 -------------------------

DYAD = np.array([E1, E1, E2, (E1 + E2) / R2])
DYAD_SPEAKERS = ["A", "B", "A", "B"]
DYAD_TIMES = [0.0, 10.0, 12.0, 30.0]


def test_dyad_features_by_hand() -> None:
    f = F.trace_features(DYAD, DYAD_SPEAKERS, DYAD_TIMES, late_k=2)
    steps = [0.0, 1.0, HALF]  # d(T2,T1), d(T3,T2), d(T4,T3)
    assert f["turns"] == 4
    # self-similarity: A's pair e1·e2 = 0, B's pair e1·(e1+e2)/√2 = 1/√2
    assert f["self_similarity_mean"] == approx((0 + 1 / R2) / 2)
    assert f["self_similarity_max"] == approx(1 / R2)
    # gaps 10, 2, 18: mean 10, median 10, deviations 0, 8, 8 → MAD 8
    assert (f["gap_mean"], f["gap_median"], f["gap_mad"]) == (10.0, 10.0, 8.0)
    # every turn after the first answers the previous one (strict alternation)
    assert f["initial_response_distance"] == approx(0.0)
    assert f["responder_distance_mean"] == approx(sum(steps) / 3)
    assert f["responder_distance_max"] == approx(1.0)
    assert f["responder_distance_min"] == approx(0.0)
    # prompter: T3 (A) against T2, the reply A had; T4 (B) against T3, the reply B had
    assert f["prompter_distance_mean"] == approx((1.0 + HALF) / 2)
    assert f["prompter_distance_max"] == approx(1.0)
    # slope of (2, 0), (3, 1), (4, HALF): centred x = -1, 0, 1 → (HALF - 0) / 2
    assert f["relevance_trend"] == approx(HALF / 2)
    # cohesion: cos(e1, e1) = 1; cos(e2, e1) = 0; cos((1,1,0)/√2, (2,1,0)/√5) = 3/√10
    assert f["cohesion"] == approx((1 + 0 + 3 / math.sqrt(10)) / 3)
    assert f["volatility"] == approx(sum(steps) / 3)
    assert f["late_volatility"] == approx((1.0 + HALF) / 2)  # the last 2 turns
    assert f["max_jump"] == approx(1.0)
    # self-consistency: A d(e2, e1) = 1; B d((e1+e2)/√2, e1) = HALF
    assert f["self_consistency"] == approx((1.0 + HALF) / 2)
    # no goal: every goal feature undefined
    assert all(f[k] is None for k in F.FEATURE_NAMES if k.startswith("goal") or "goal" in k)
    assert list(f) == list(F.FEATURE_NAMES)


def test_dyad_per_speaker_is_trace() -> None:
    """In a dyad (A = user, B = model) the per-speaker variants are TRACE's own formulas."""
    per = F.per_speaker_features(DYAD, DYAD_SPEAKERS, DYAD_TIMES, E3)
    user, model = per["A"], per["B"]
    u1, m1, u2, m2 = DYAD
    d = F._d
    assert model["responder_distance_mean"] == approx((d(m1, u1) + d(m2, u2)) / 2)
    assert model["responder_distance_max"] == approx(max(d(m1, u1), d(m2, u2)))
    assert model["self_similarity_mean"] == approx(float(np.dot(m1, m2)))
    assert model["goal_adherence"] == approx((d(m1, E3) + d(m2, E3)) / 2)
    assert user["prompter_distance_mean"] == approx(d(u2, m1))
    assert user["self_consistency"] == approx(d(u2, u1))
    assert user["responder_distance_mean"] == approx(d(u2, m1))  # U2 answers M1 too


def test_late_volatility_k_and_fewer_turns() -> None:
    one = F.trace_features(DYAD, DYAD_SPEAKERS, None, late_k=1)
    assert one["late_volatility"] == approx(HALF)
    many = F.trace_features(DYAD, DYAD_SPEAKERS, None, late_k=10)  # all 3 distances
    assert many["late_volatility"] == approx((0 + 1 + HALF) / 3)
    assert many["gap_mean"] is None
    assert many["gap_mad"] is None
    with pytest.raises(ValueError, match="late_k"):
        F.trace_features(DYAD, DYAD_SPEAKERS, None, late_k=0)


def test_goal_is_the_first_turn() -> None:
    """The icebreaker as the goal: the features leave the first turn out."""
    f = F.trace_features(DYAD, DYAD_SPEAKERS, None, E1, goal_is_first_turn=True)
    ds = [0.0, 1.0, HALF]  # T2, T3, T4 against e1
    assert f["goal_adherence"] == approx(sum(ds) / 3)
    assert f["goal_distance_min"] == approx(0.0)
    assert f["goal_distance_max"] == approx(1.0)
    assert f["final_goal_distance"] == approx(HALF)
    # mean of e1, e2, (e1+e2)/√2 points along (1,1,0): distance HALF from e1
    assert f["goal_drift"] == approx(HALF)
    assert f["goal_trend"] == approx(HALF / 2)
    assert f["goal_convergence"] is None  # the closest distance is 0: the ratio is undefined


def test_goal_orthogonal_and_convergence() -> None:
    f = F.trace_features(DYAD, DYAD_SPEAKERS, None, E3)
    assert f["goal_adherence"] == approx(1.0)
    assert f["goal_drift"] == approx(1.0)
    assert f["goal_trend"] == approx(0.0)
    assert f["goal_convergence"] == approx(1.0)
    g = (E1 + E3) / R2  # d to e1 = HALF, to e2 = 1, to (e1+e2)/√2 = 1 - 1/2
    f = F.trace_features(DYAD, DYAD_SPEAKERS, None, g)
    assert f["goal_distance_min"] == approx(HALF)
    assert f["final_goal_distance"] == approx(0.5)
    assert f["goal_convergence"] == approx(0.5 / HALF)


def test_continuation_is_not_a_response() -> None:
    """A speaker's second message in a row is not a response (and does not count as one)."""
    v = np.array([E1, E2, E3])
    f = F.trace_features(v, ["A", "B", "B"], None)
    assert f["responder_distance_mean"] == approx(1.0)  # only T2 answered T1
    assert f["volatility"] == approx(1.0)  # both turn-to-turn distances are 1
    assert f["self_consistency"] == approx(1.0)  # B: d(e3, e2)
    assert f["prompter_distance_mean"] is None  # A never spoke again


def test_undefined_values_are_none() -> None:
    f = F.trace_features(np.array([E1]), ["A"], [5.0], E1, goal_is_first_turn=True)
    assert f["turns"] == 1
    assert all(f[k] is None for k in F.FEATURE_NAMES if k != "turns")
    empty = F.trace_features(np.zeros((0, 3)), [], [])
    assert empty["turns"] == 0
    assert empty["volatility"] is None
    assert F.per_speaker_features(np.zeros((0, 3)), [], []) == {}
    with pytest.raises(ValueError, match="speakers"):
        F.trace_features(DYAD, ["A"], None)


# --- three speakers: A e1, B e2, C e3, A (e1+e3)/√2, B (e2+e3)/√2 ------------------------------

CHAT = np.array([E1, E2, E3, (E1 + E3) / R2, (E2 + E3) / R2])
CHAT_SPEAKERS = ["A", "B", "C", "A", "B"]


def test_three_speakers_session_and_per_speaker() -> None:
    f = F.trace_features(CHAT, CHAT_SPEAKERS, [0, 1, 3, 6, 10])
    # turn-to-turn: 1, 1, HALF, 1 - 1/2
    assert f["volatility"] == approx((1 + 1 + HALF + 0.5) / 4)
    # A's T4 against B's T2 (the reply A had) = 1; B's T5 against C's T3 (B's reply) = HALF
    assert f["prompter_distance_mean"] == approx((1 + HALF) / 2)
    per = F.per_speaker_features(CHAT, CHAT_SPEAKERS, [0, 1, 3, 6, 10], E1, goal_is_first_turn=True)
    assert list(per) == ["A", "B", "C"]
    a, b, c = per["A"], per["B"], per["C"]
    assert list(a) == list(F.SPEAKER_FEATURE_NAMES)
    assert a["turns"] == 2
    assert b["turns"] == 2
    assert c["turns"] == 1
    assert a["self_similarity_mean"] == approx(1 / R2)
    assert b["self_similarity_max"] == approx(1 / R2)
    assert c["self_similarity_mean"] is None
    assert a["responder_distance_mean"] == approx(HALF)  # only T4 (T1 opened)
    assert b["responder_distance_mean"] == approx(0.75)  # T2: 1, T5: 1/2
    assert b["responder_distance_max"] == approx(1.0)
    assert b["relevance_trend"] == approx(-0.5 / 3)  # (2, 1) → (5, 1/2)
    assert a["relevance_trend"] is None
    assert a["prompter_distance_mean"] == approx(1.0)
    assert b["prompter_distance_max"] == approx(HALF)
    assert c["prompter_distance_mean"] is None
    assert a["self_consistency"] == approx(HALF)
    assert b["self_consistency"] == approx(HALF)
    assert c["self_consistency"] is None
    # cohesion: A at T4 against (1,1,1)/√3 → 2/√6; C at T3 against (1,1,0) → 0
    assert a["cohesion"] == approx(2 / math.sqrt(6))
    assert c["cohesion"] == approx(0.0)
    ctx = E1 + E2 + E3 + (E1 + E3) / R2
    b5 = float(np.dot((E2 + E3) / R2, ctx / np.linalg.norm(ctx)))
    assert b["cohesion"] == approx((0.0 + b5) / 2)
    assert a["gap_mean"] == 3.0
    assert b["gap_mean"] == 2.5  # A: T4 after 3 s; B: 1 s and 4 s
    # goal e1 = the first turn, left out: A's only goal turn is T4 at HALF
    assert a["goal_adherence"] == approx(HALF)
    assert b["goal_adherence"] == approx(1.0)
    assert c["goal_drift"] == approx(1.0)


def test_turn_series() -> None:
    s = F.turn_series(DYAD, DYAD_SPEAKERS)
    assert s["volatility"][0] is None
    assert s["cohesion"][0] is None
    assert s["volatility"][1:] == [approx(0.0), approx(1.0), approx(HALF)]
    assert s["cohesion"][1:] == [approx(1.0), approx(0.0), approx(3 / math.sqrt(10))]
    chat = F.turn_series(np.array([E1, E2, E3]), ["A", "B", "B"])
    assert chat["responder_distance"] == [None, approx(1.0), None]
    assert F.turn_series(np.zeros((0, 3)), []) == {
        "cohesion": [],
        "volatility": [],
        "responder_distance": [],
    }


def test_trajectory_2d() -> None:
    assert F.trajectory_2d(np.zeros((0, 3))).shape == (0, 2)
    assert F.trajectory_2d(np.array([E1])).tolist() == [[0.0, 0.0]]
    # two turns: one direction, ±√2/2 apart; the first turn (largest, first) is positive
    two = F.trajectory_2d(np.array([E1, E2]))
    assert two.tolist() == [[approx(R2 / 2), approx(0.0)], [approx(-R2 / 2), approx(0.0)]]
    # three points always lie in a plane: the 2-D distances are the 3-D ones (√2 each)
    three = F.trajectory_2d(np.array([E1, E2, E3]))
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        assert float(np.linalg.norm(three[i] - three[j])) == approx(R2)
    # deterministic: the same input, the same picture
    assert np.array_equal(F.trajectory_2d(CHAT), F.trajectory_2d(CHAT.copy()))


def test_clean_replaces_nan() -> None:
    assert F.clean({"a": float("nan"), "b": {"c": float("inf"), "d": 1.0}}) == {
        "a": None,
        "b": {"c": None, "d": 1.0},
    }


# --- the store and the CLI on real offline sessions ----------------------------------------


@pytest.fixture(scope="module")
def sessions_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Three real offline sessions (3 agents, 5 messages each)."""
    path = tmp_path_factory.mktemp("geometry") / "sessions.db"
    ids = []
    for seed in (1, 2, 3):
        argv = ["simulate", "--agents", "3", "--turns", "5", "--seed", str(seed), "--quiet"]
        code, out, err = run_cli(*argv, "--db", str(path))
        assert code == 0, err
        ids.append(out.strip().splitlines()[-1])
    return path, ids


@pytest.fixture
def copy_db(sessions_db: tuple[Path, list[str]], tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "copy.db"
    path.write_bytes(sessions_db[0].read_bytes())
    return path, sessions_db[1]


@pytest.fixture
def copy_sessions(
    copy_db: tuple[Path, list[str]],
) -> Iterator[tuple[sqlite_utils.Database, list[str]]]:
    """The copied database, open (closed after the test), and its session ids."""
    db = open_database(copy_db[0])
    try:
        yield db, copy_db[1]
    finally:
        db.close()


@pytest.mark.asyncio
async def test_cache_and_stored_rows(copy_sessions, minilm) -> None:
    db, ids = copy_sessions
    recorded = db.execute("SELECT COUNT(*) FROM message_embeddings").fetchone()[0]
    assert recorded > 0  # the recorder kept the vectors the room computed
    with db.atomic():  # as for sessions recorded before the recorder kept them
        db.execute("DELETE FROM message_embeddings")
    n = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    distinct = db.execute("SELECT COUNT(DISTINCT text) FROM messages").fetchone()[0]
    first = CachingEmbedder(minilm)
    stats = store.ComputeStats()
    rows = await store.compute_many(db, ids, first, stats=stats)
    assert first.misses == distinct
    assert stats.embedded == distinct
    assert stats.computed == 3
    assert stats.messages == n
    cached = db.execute(
        "SELECT COUNT(*), MIN(dim), MAX(dim), MIN(model) FROM message_embeddings"
    ).fetchone()
    assert cached == (n, 384, 384, first.name)
    assert [r.session_id for r in rows] == ids
    assert all(r.model == "all-MiniLM-L6-v2 (local)" for r in rows)
    stored = db.execute(
        "SELECT session_id, model, version, message_count, goal, features, per_speaker"
        " FROM session_features ORDER BY session_id"
    ).fetchall()
    assert len(stored) == 3
    for sid, model, version, count, goal, values, per in stored:
        assert model == first.name
        assert version == F.FEATURES_VERSION
        icebreaker = db.execute(
            "SELECT text FROM messages WHERE session_id = ? AND origin = 'icebreaker'", [sid]
        ).fetchone()[0]
        assert goal == icebreaker
        values = json.loads(values)
        assert values["turns"] == count == 5
        assert set(values) == {*F.FEATURE_NAMES, "late_k"}
        assert 0 <= values["volatility"] <= 2
        assert "NaN" not in per
        assert len(json.loads(per)) >= 2

    # the vectors are the model's: the cache gives back exactly what MiniLM computes
    mids, vecs = await vectors.message_vectors(db, ids[0], CachingEmbedder(minilm))
    texts = [
        t
        for (t,) in db.execute(
            "SELECT text FROM messages WHERE session_id = ? ORDER BY id", [ids[0]]
        )
    ]
    assert mids == list(range(1, 6))
    assert np.allclose(vecs, await CachingEmbedder(minilm).embed(texts), atol=1e-5)

    # a second computation embeds nothing and reuses the stored rows
    second = CachingEmbedder(minilm)
    stats = store.ComputeStats()
    again = await store.compute_many(db, ids, second, stats=stats)
    assert second.misses == 0
    assert stats.embedded == 0
    assert stats.computed == 0
    assert [r.computed_at for r in again] == [r.computed_at for r in rows]

    # an edited message is embedded again, and only its session recomputed
    db.execute(
        "UPDATE messages SET text = 'Completely different words about sailing.'"
        " WHERE session_id = ? AND id = 3",
        [ids[1]],
    )
    db.conn.commit()
    third = CachingEmbedder(minilm)
    stats = store.ComputeStats()
    await store.compute_many(db, ids, third, stats=stats)
    assert third.misses == 1
    assert stats.computed == 1
    h = db.execute(
        "SELECT text_hash FROM message_embeddings WHERE session_id = ? AND message_id = 3",
        [ids[1]],
    ).fetchone()[0]
    assert h == text_hash("Completely different words about sailing.")

    # recompute on demand; another late_k is another computation
    stats = store.ComputeStats()
    await store.compute_many(db, ids, CachingEmbedder(minilm), recompute=True, stats=stats)
    assert stats.computed == 3
    assert stats.embedded == 0
    row = await store.session_features(db, ids[0], CachingEmbedder(minilm), late_k=2)
    assert row.features["late_k"] == 2.0
    assert [r.session_id for r in store.features_table(db, [*ids, "nope"])] == ids
    with pytest.raises(Exception, match="no session 'nope'"):
        await store.compute_many(db, ["nope"], CachingEmbedder(minilm))


@pytest.mark.asyncio
async def test_storm_task_is_the_goal(copy_sessions, minilm) -> None:
    db, ids = copy_sessions
    user = db.execute(
        "SELECT name FROM participants WHERE session_id = ? LIMIT 1", [ids[0]]
    ).fetchone()[0]
    with db.conn:
        db.execute(
            "INSERT INTO storm_dialogues (session_id, user_name, profile_id, category, task,"
            " difficulty, uncertainty, profile_access, assistant, assistant_model, user_model)"
            " VALUES (?, ?, 'p', 'c', 'Plan a week of vegetarian dinners', 1, 0, 0, 'a', 'm', 'm')",
            [ids[0], user],
        )
    emb = CachingEmbedder(minilm)
    row = await store.session_features(db, ids[0], emb)
    assert row.goal == "Plan a week of vegetarian dinners"
    _, vecs = await vectors.message_vectors(db, ids[0], emb)
    [g] = await emb.embed([row.goal])
    want = float(np.mean([1 - float(np.dot(v, g)) for v in vecs]))
    assert row.features["goal_adherence"] == pytest.approx(want, abs=1e-5)


def test_cli_three_formats(copy_db) -> None:
    path, ids = copy_db
    code, out, err = run_cli("features", "--db", str(path), "--format", "table")
    assert code == 0, err
    assert "all-MiniLM-L6-v2 (local)" in out
    assert "all-MiniLM-L6-v2 (local)" in err
    assert "3 computed" in err
    lines = out.strip().splitlines()
    assert lines[1].split()[:3] == ["session", "turns", "self-sim"]
    assert [ln.split()[0] for ln in lines[2:]] == ids
    assert all(ln.split()[1] == "5" for ln in lines[2:])

    code, out, err = run_cli("features", ids[0][:-2], "--db", str(path), "--format", "csv")
    assert code == 0, err
    assert "0 computed, 1 already stored, 0 texts embedded" in err
    [row] = list(csv.DictReader(io.StringIO(out)))
    assert row["session_id"] == ids[0]
    assert row["turns"] == "5.0"
    assert row["model"] == "all-MiniLM-L6-v2 (local)"
    assert set(F.FEATURE_NAMES) <= set(row)

    code, out, err = run_cli(
        "features", "--db", str(path), "--format", "json", "--recompute", "--late-k", "2"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["model"] == "all-MiniLM-L6-v2 (local)"
    assert [s["session_id"] for s in data["sessions"]] == ids
    first = data["sessions"][0]
    assert first["features"]["late_k"] == 2
    assert len(first["per_speaker"]) >= 2
    assert set(next(iter(first["per_speaker"].values()))) == set(F.SPEAKER_FEATURE_NAMES)


def test_cli_experiment_filter(copy_db) -> None:
    path, ids = copy_db
    db = open_database(path)
    with db.conn:
        db.execute("INSERT INTO experiments (id, name, created_at) VALUES ('exp-1', 'pilot', 'x')")
        db.execute("UPDATE sessions SET experiment_id = 'exp-1' WHERE id = ?", [ids[1]])
    db.close()
    code, out, err = run_cli(
        "features", "--db", str(path), "--experiment", "pilot", "--format", "csv"
    )
    assert code == 0, err
    assert [r["session_id"] for r in csv.DictReader(io.StringIO(out))] == [ids[1]]


def test_cli_bad_input(tmp_path: Path, copy_db) -> None:
    path, _ = copy_db
    assert "no database at" in cli_refusal("features", "--db", str(tmp_path / "none.db"), code=2)
    assert "no experiment 'zzz'" in cli_refusal(
        "features", "--db", str(path), "--experiment", "zzz", code=2
    )
    assert "zzz" in cli_refusal("features", "zzz", "--db", str(path), code=2)
    assert "--late-k" in cli_refusal("features", "--db", str(path), "--late-k", "0", code=2)
    empty = tmp_path / "empty.db"
    open_database(empty).close()
    assert "no sessions" in cli_refusal("features", "--db", str(empty), code=2)
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    assert "junk.db" in cli_refusal("features", "--db", str(junk), code=2)


@pytest.mark.asyncio
async def test_the_recorder_keeps_the_vectors_the_room_computed(copy_sessions, minilm) -> None:
    db, ids = copy_sessions
    kept = db.execute(
        "SELECT e.message_id, m.text, e.vector, e.model, e.text_hash FROM message_embeddings e"
        " JOIN messages m ON m.session_id = e.session_id AND m.id = e.message_id"
        " WHERE e.session_id = ? ORDER BY e.message_id",
        [ids[0]],
    ).fetchall()
    total = db.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", [ids[0]]).fetchone()[0]
    assert len(kept) == total  # every message, the last one too (kept before the end)
    fresh = CachingEmbedder(minilm)
    want = await fresh.embed([text for _, text, *_ in kept])
    got = np.stack([np.frombuffer(v, dtype="<f4") for _, _, v, _, _ in kept])
    assert np.allclose(got, want, atol=1e-5)
    assert {m for *_, m, _ in kept} == {fresh.name}
    assert all(h == text_hash(t) for _, t, _, _, h in kept)
    stats = store.ComputeStats()
    await store.compute_many(db, ids[:1], fresh, stats=stats)
    assert stats.embedded == total - len(kept)  # only what the recorder did not keep
