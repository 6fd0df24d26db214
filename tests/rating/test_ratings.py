"""RatingStore on real sessions: Likert ratings, marks, preferences, questionnaires and plans.

Sessions come from real offline simulations (built once per module); their conditions are set
with SQL, since real baseline conditions do not exist yet.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from playground import errors
from playground.cli import main as cli
from playground.rating.store import CONVERSATION_METRICS, PARTICIPANT_ITEMS, RatingStore
from playground.storage import open_database

ALL_FOUR = {m.key: 4 for m in CONVERSATION_METRICS}


def simulate(db: Path, seed: int) -> str:
    out, err = io.StringIO(), io.StringIO()
    argv = ["simulate", "--agents", "3", "--turns", "4", "--seed", str(seed), "--db", str(db)]
    assert cli.main([*argv, "--quiet"], out=out, err=err) == 0, err.getvalue()
    return out.getvalue().strip().splitlines()[-1]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Five real sessions: two 'inner-thoughts', two 'next-speaker', one 'reactive'."""
    path = tmp_path_factory.mktemp("ratings") / "template.db"
    ids = [simulate(path, seed) for seed in range(1, 6)]
    db = open_database(path)
    with db.conn:
        for sid, cond in zip(
            ids, ["inner-thoughts"] * 2 + ["next-speaker"] * 2 + ["reactive"], strict=True
        ):
            db.execute("UPDATE sessions SET condition = ? WHERE id = ?", [cond, sid])
    db.close()
    return path, ids


@pytest.fixture
def fresh(template: tuple[Path, list[str]], tmp_path: Path):
    """A private copy of the template database: (store, session ids, path)."""
    path = tmp_path / "ratings.db"
    shutil.copy(template[0], path)
    db = open_database(path)
    yield RatingStore(db), template[1], path
    db.close()


def test_rating_a_conversation_upserts_one_row_per_metric(fresh):
    store, ids, _ = fresh
    store.rate_conversation(ids[0], " ann ", ALL_FOUR)
    store.rate_conversation(ids[0], "ann", {"coherence": 7})
    assert store.conversation_ratings(ids[0], "ann") == {**ALL_FOUR, "coherence": 7}
    assert list(store.conversation_ratings(ids[0], "ann")) == [m.key for m in CONVERSATION_METRICS]
    rows = store.db.execute("SELECT COUNT(*) FROM ratings WHERE session_id = ?", [ids[0]])
    assert rows.fetchone()[0] == 7
    assert store.raters() == ["ann"]


def test_a_unique_prefix_names_a_session(fresh):
    store, ids, _ = fresh
    store.rate_conversation(ids[2][:-2], "ann", {"initiative": 3})
    assert store.conversation_ratings(ids[2], "ann") == {"initiative": 3}


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ({"charm": 4}, "unknown conversation metric 'charm'"),
        ({"likeability": 4}, "unknown conversation metric 'likeability'"),
        ({"coherence": 0}, "coherence: 0 is outside the scale 1 to 7"),
        ({"engagement": 8}, "engagement: 8 is outside the scale 1 to 7"),
        ({"initiative": 4.5}, "initiative: 4.5 is not a whole number"),
        ({"initiative": True}, "initiative: True is not a whole number"),
        ({}, "no conversation values given"),
    ],
    ids=["unknown", "participant_item", "below", "above", "fraction", "bool", "empty"],
)
def test_invalid_conversation_ratings_name_the_metric_and_save_nothing(fresh, values, fragment):
    store, ids, _ = fresh
    with pytest.raises(errors.PlaygroundError, match=fragment):
        # a valid value alongside the bad one: nothing at all is saved
        store.rate_conversation(ids[0], "ann", {"coherence": 5, **values} if values else {})
    assert store.db.execute("SELECT COUNT(*) FROM ratings").fetchone()[0] == 0


def test_unknown_session_and_empty_rater_are_refused(fresh):
    store, ids, _ = fresh
    with pytest.raises(errors.SessionNotFound, match="no session 'nope'"):
        store.rate_conversation("nope", "ann", ALL_FOUR)
    with pytest.raises(errors.PlaygroundError, match="a rater needs a name"):
        store.rate_conversation(ids[0], "   ", ALL_FOUR)


def test_turn_marks_upsert_unmark_and_stay_per_rater(fresh):
    store, ids, _ = fresh
    store.mark_turn(ids[0], 2, "ann", "too eager")
    store.mark_turn(ids[0], 2, "ann", "interrupted Ben")
    store.mark_turn(ids[0], 3, "bob")
    assert [(m["message_id"], m["comment"]) for m in store.turn_marks(ids[0], "ann")] == [
        (2, "interrupted Ben")
    ]
    assert {m["rater"] for m in store.turn_marks(ids[0])} == {"ann", "bob"}
    assert store.turn_marks(ids[0], "ann")[0]["created_at"].endswith("+00:00")
    store.unmark_turn(ids[0], 2, "ann")
    assert store.turn_marks(ids[0], "ann") == []
    with pytest.raises(errors.PlaygroundError, match=f"session {ids[0]} has no message 99"):
        store.mark_turn(ids[0], 99, "ann")


def test_preferences_need_one_of_the_two_and_a_second_choice_replaces_the_first(fresh):
    store, ids, _ = fresh
    with pytest.raises(errors.PlaygroundError, match=f"the chosen session {ids[4]} is neither"):
        store.record_preference("ann", ids[0], ids[2], ids[4], "")
    with pytest.raises(errors.PlaygroundError, match="two different sessions"):
        store.record_preference("ann", ids[0], ids[0], ids[0], "")
    first = store.record_preference("ann", ids[0], ids[2], ids[0], "flows better")
    second = store.record_preference("ann", ids[2], ids[0], ids[2], "on reflection")
    rows = store.db.execute("SELECT id, chosen_id, reason FROM preferences").fetchall()
    assert first >= 1
    assert rows == [(second, ids[2], "on reflection")]


def test_questionnaire_round_trip_and_validation(fresh):
    store, ids, _ = fresh
    answers = {item.key: 1 + i % 7 for i, item in enumerate(PARTICIPANT_ITEMS)}
    store.answer_questionnaire(ids[1], "participant-1", answers)
    assert store.questionnaire(ids[1], "participant-1") == answers
    assert store.conversation_ratings(ids[1], "participant-1") == {}
    with pytest.raises(errors.PlaygroundError, match="unknown participant metric 'coherence'"):
        store.answer_questionnaire(ids[1], "participant-1", {"coherence": 3})


def test_rating_counts_count_raters_questionnaires_and_preferences(fresh):
    store, ids, _ = fresh
    store.rate_conversation(ids[0], "ann", ALL_FOUR)
    store.rate_conversation(ids[0], "bob", {"coherence": 2})
    store.rate_conversation(ids[0], "bob", {"engagement": 2})  # still one record for bob
    store.answer_questionnaire(ids[0], "participant-1", {"likeability": 6})
    store.record_preference("ann", ids[0], ids[2], ids[2], "")
    counts = store.rating_counts()
    assert counts == {ids[0]: 4, ids[1]: 0, ids[2]: 1, ids[3]: 0, ids[4]: 0}
    assert store.rating_counts([ids[2], ids[1]]) == {ids[2]: 1, ids[1]: 0}


def test_raters_never_read_each_others_answers(fresh):
    store, ids, _ = fresh
    store.rate_conversation(ids[0], "ann", ALL_FOUR)
    store.mark_turn(ids[0], 2, "ann", "odd")
    store.answer_questionnaire(ids[0], "ann", {"likeability": 6})
    assert store.conversation_ratings(ids[0], "bob") == {}
    assert store.turn_marks(ids[0], "bob") == []
    assert store.questionnaire(ids[0], "bob") == {}


def conditions(store: RatingStore) -> dict[str, str]:
    return dict(store.db.execute("SELECT id, condition FROM sessions").fetchall())


def test_conversation_plan_is_balanced_over_conditions(fresh):
    store, ids, _ = fresh
    plan = store.create_plan(
        "first pass", "conversation", ["ann", "bob"], 3, sessions=ids[:4] + ids[4:]
    )
    cond = conditions(store)
    assert plan.kind == "conversation"
    assert plan.raters == ["ann", "bob"]
    assert plan.source["sessions"] == sorted(ids)
    for rater in ("ann", "bob"):
        got = store.assignments(plan.id, rater)
        assert [a.position for a in got] == [1, 2, 3]
        assert all(a.session_b is None for a in got)
        assert len({a.session_a for a in got}) == 3
        # three conditions, three sessions: one of each
        assert sorted(cond[a.session_a] for a in got) == [
            "inner-thoughts",
            "next-speaker",
            "reactive",
        ]


def test_pairwise_plan_uses_different_conditions_balanced_over_condition_pairs(fresh):
    store, ids, _ = fresh
    plan = store.create_plan("pairs", "pairwise", ["ann", "bob", "cy"], 3, sessions=ids, seed=3)
    cond = conditions(store)
    firsts = set()
    for rater in plan.raters:
        got = store.assignments(plan.id, rater)
        pairs = [(cond[a.session_a], cond[a.session_b]) for a in got]
        assert all(x != y for x, y in pairs)
        # A-B, A-C and B-C pairs exist: three pairs per rater means one of each
        assert sorted(tuple(sorted(p)) for p in pairs) == [
            ("inner-thoughts", "next-speaker"),
            ("inner-thoughts", "reactive"),
            ("next-speaker", "reactive"),
        ]
        firsts |= {a.session_a for a in got}
        assert len({frozenset((a.session_a, a.session_b)) for a in got}) == 3
    assert len(firsts) >= 3  # who is shown first varies


def plan_rows(path: Path, seed: int) -> list[tuple[str, int, str, str | None]]:
    db = open_database(path)
    store = RatingStore(db)
    ids = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY id")]
    plan = store.create_plan("p", "pairwise", ["ann", "bob"], 4, sessions=ids, seed=seed)
    rows = [(a.rater, a.position, a.session_a, a.session_b) for a in store.assignments(plan.id)]
    db.close()
    return rows


def test_pairwise_order_is_random_but_reproducible_from_the_seed(template, tmp_path):
    copies = []
    for name in ("one", "two", "three"):
        copies.append(tmp_path / f"{name}.db")
        shutil.copy(template[0], copies[-1])
    same_a, same_b, other = (
        plan_rows(copies[0], 11),
        plan_rows(copies[1], 11),
        plan_rows(copies[2], 12),
    )
    assert same_a == same_b
    assert other != same_a
    assert len(same_a) == 8


@pytest.mark.parametrize(
    ("kind", "per_rater", "fragment"),
    [
        ("conversation", 6, "asks for 6 sessions per rater but only 5 sessions are available"),
        ("pairwise", 9, "asks for 9 pairs per rater but only 8 pairs of sessions from different"),
    ],
    ids=["sessions", "pairs"],
)
def test_a_plan_larger_than_the_sessions_says_how_many_exist(fresh, kind, per_rater, fragment):
    store, ids, _ = fresh
    with pytest.raises(errors.PlaygroundError, match=fragment):
        store.create_plan("too big", kind, ["ann"], per_rater, sessions=ids)
    assert store.plans() == []


def test_pairwise_plan_with_a_single_condition_is_refused(fresh):
    store, ids, _ = fresh
    with pytest.raises(errors.PlaygroundError, match=r"only 0 pairs .*conditions: inner-thoughts"):
        store.create_plan("same", "pairwise", ["ann"], 1, sessions=ids[:2])


def test_plan_from_an_experiment_and_unknown_experiment(fresh):
    store, ids, _ = fresh
    with store.db.conn:
        store.db.execute("INSERT INTO experiments (id, created_at) VALUES ('exp1', 'now')")
        store.db.execute(
            "UPDATE sessions SET experiment_id = 'exp1' WHERE id IN (?, ?)", [ids[0], ids[2]]
        )
    plan = store.create_plan("exp", "pairwise", ["ann"], 1, experiment="exp1")
    (only,) = store.assignments(plan.id)
    assert {only.session_a, only.session_b} == {ids[0], ids[2]}
    with pytest.raises(errors.PlaygroundError, match="no experiment 'exp9'"):
        store.create_plan("exp", "conversation", ["ann"], 1, experiment="exp9")


def test_a_plan_resumes_after_a_restart(fresh):
    store, ids, path = fresh
    plan = store.create_plan("resume", "conversation", ["ann", "bob"], 4, sessions=ids, seed=5)
    first = store.next_assignment(plan.id, "ann")
    assert first is not None
    assert first.position == 1
    store.rate_conversation(first.session_a, "ann", ALL_FOUR, assignment_id=first.id)
    second = store.next_assignment(plan.id, "ann")
    assert second is not None
    assert second.position == 2
    store.complete(second.id)
    store.db.close()

    db = open_database(path)
    again = RatingStore(db)
    resumed = again.next_assignment(plan.id, "ann")
    assert resumed is not None
    assert resumed.position == 3
    assert again.progress(plan.id) == {"ann": (2, 4), "bob": (0, 4)}
    assert again.plan(plan.id).name == "resume"
    assert [p.id for p in again.plans()] == [plan.id]
    for a in again.assignments(plan.id, "ann")[2:]:
        again.complete(a.id)
    assert again.next_assignment(plan.id, "ann") is None
    db.close()


def test_pairwise_choice_completes_its_assignment_and_checks_ownership(fresh):
    store, ids, _ = fresh
    plan = store.create_plan("p", "pairwise", ["ann", "bob"], 1, sessions=ids[:3], seed=1)
    task = store.next_assignment(plan.id, "ann")
    assert task is not None
    assert task.session_b is not None
    with pytest.raises(
        errors.PlaygroundError, match=f"assignment {task.id} belongs to rater 'ann'"
    ):
        store.record_preference(
            "bob", task.session_a, task.session_b, task.session_a, "", assignment_id=task.id
        )
    store.record_preference(
        "ann", task.session_a, task.session_b, task.session_b, "", assignment_id=task.id
    )
    assert store.next_assignment(plan.id, "ann") is None
    assert store.progress(plan.id) == {"ann": (1, 1), "bob": (0, 1)}
    with pytest.raises(errors.PlaygroundError, match="rater 'cy' is not in rating plan"):
        store.next_assignment(plan.id, "cy")
    with pytest.raises(errors.PlaygroundError, match="no rating plan 99"):
        store.next_assignment(99, "ann")


def test_deleting_a_session_cascades_to_its_human_evaluation_rows(fresh):
    store, ids, _ = fresh
    store.rate_conversation(ids[0], "ann", ALL_FOUR)
    store.answer_questionnaire(ids[0], "participant-1", {"likeability": 5})
    store.mark_turn(ids[0], 2, "ann", "odd")
    store.record_preference("ann", ids[0], ids[2], ids[0], "")
    plan = store.create_plan("p", "pairwise", ["ann"], 8, sessions=ids)
    store.rate_conversation(ids[2], "ann", ALL_FOUR)
    with store.db.conn:
        store.db.execute("DELETE FROM sessions WHERE id = ?", [ids[0]])

    def count(sql: str) -> int:
        return int(store.db.execute(sql, [ids[0], ids[0]]).fetchone()[0])

    assert count("SELECT COUNT(*) FROM ratings WHERE session_id IN (?, ?)") == 0
    assert count("SELECT COUNT(*) FROM turn_marks WHERE session_id IN (?, ?)") == 0
    assert count("SELECT COUNT(*) FROM preferences WHERE first_id = ? OR second_id = ?") == 0
    assert count("SELECT COUNT(*) FROM assignments WHERE session_a = ? OR session_b = ?") == 0
    # its pairs with ids[2], ids[3] and ids[4] are gone
    assert len(store.assignments(plan.id)) == 8 - 3
    assert store.conversation_ratings(ids[2], "ann") == ALL_FOUR  # other sessions keep theirs
