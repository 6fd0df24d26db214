"""``playground merge``: shard databases combined into one, and every refusal leaving OUT as it was.

The shards are real: offline simulations run by ``playground simulate`` into separate files. The
experiment and rating rows are added with SQL matching the schema (the experiment runner writes
the former, the rating view the latter).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from playground import errors
from playground.cli import main as cli
from playground.cli.transfer import cli_merge
from playground.storage import open_database
from playground.transfer import merge
from playground.transfer.merge_rules import KNOWN_TABLES, MergeError

CONFIG = {"conditions": ["inner-thoughts", "next-speaker"], "conversations": 3, "seed": 1}
EARLY, LATE = "2026-01-01T00:00:00.000+00:00", "2026-01-01T00:00:05.000+00:00"


class Shards(NamedTuple):
    """Two shard files and the ids of their sessions (A holds a1 and a2, B holds b1)."""

    a: Path
    b: Path
    a1: str
    a2: str
    b1: str


def _simulate(db: Path, seed: int) -> str:
    out = io.StringIO()
    code = cli.main(
        [
            "simulate",
            "--engine",
            "offline",
            "--turns",
            "3",
            "--agents",
            "2",
            "--db",
            str(db),
            "--quiet",
            "--seed",
            str(seed),
        ],
        out=out,
        err=io.StringIO(),
    )
    assert code == 0
    return out.getvalue().split()[-1]


def _sql(path: Path, *statements: tuple[str, list[object]]) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("PRAGMA foreign_keys = ON")
        for sql, params in statements:
            conn.execute(sql, params)
    conn.close()


def _add_experiment(
    path: Path, created_at: str, draws: dict[int, str], *, plan: str, fork: bool = False
) -> None:
    """Experiment ``exp-1`` with ``draws`` (draw → session id), each run finished, and one rating
    plan named ``plan`` whose first session is rated, marked and preferred."""
    statements: list[tuple[str, list[object]]] = [
        (
            "INSERT INTO experiments (id, name, created_at, config) VALUES ('exp-1', 'paired', ?, ?)",
            [created_at, json.dumps(CONFIG)],
        )
    ]
    for draw, sid in draws.items():
        statements += [
            (
                "INSERT INTO experiment_draws VALUES ('exp-1', ?, ?, ?, 'ana', 'Hello?')",
                [draw, 100 + draw, json.dumps(["ana", "ben"])],
            ),
            (
                "UPDATE sessions SET experiment_id = 'exp-1', draw = ?, condition = 'inner-thoughts'"
                " WHERE id = ?",
                [draw, sid],
            ),
            (
                "INSERT INTO experiment_runs VALUES ('exp-1', ?, 'inner-thoughts', ?, 'finished', 1,"
                " NULL, ?)",
                [draw, sid, created_at],
            ),
        ]
    first, *rest = draws.values()
    second = rest[0] if rest else first
    statements += [
        ("INSERT INTO raters VALUES ('r1', ?)", [created_at]),
        (
            "INSERT INTO rating_plans (id, name, kind, seed, per_rater, raters, source, created_at)"
            " VALUES (1, ?, 'conversation', 1, 1, '[\"r1\"]', 'exp-1', ?)",
            [plan, created_at],
        ),
        (
            "INSERT INTO assignments (id, plan_id, rater, position, session_a, completed_at)"
            " VALUES (1, 1, 'r1', 0, ?, ?)",
            [first, created_at],
        ),
        (
            "INSERT INTO ratings (session_id, rater, instrument, metric, value, assignment_id,"
            " created_at, updated_at) VALUES (?, 'r1', 'conversation', 'engaging', 5, 1, ?, ?)",
            [first, created_at, created_at],
        ),
        (
            "INSERT INTO turn_marks (session_id, message_id, rater, comment, created_at)"
            " VALUES (?, 1, 'r1', 'odd turn', ?)",
            [first, created_at],
        ),
    ]
    if second != first:
        statements.append(
            (
                "INSERT INTO preferences (rater, first_id, second_id, chosen_id, assignment_id,"
                " created_at) VALUES ('r1', ?, ?, ?, 1, ?)",
                [first, second, second, created_at],
            )
        )
    if fork:
        statements.append(
            ("UPDATE sessions SET parent_id = ?, fork_seq = 3 WHERE id = ?", [first, second])
        )
    _sql(path, *statements)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Shards:
    """Shard A (draws 0 and 1, the second a fork of the first) and shard B (draw 2, and the same
    draw 0 row): one experiment, started later on A's machine than on B's."""
    folder = tmp_path_factory.mktemp("shards")
    a, b = folder / "a.db", folder / "b.db"
    a1, a2, b1 = _simulate(a, 1), _simulate(a, 2), _simulate(b, 3)
    _add_experiment(a, LATE, {0: a1, 1: a2}, plan="plan A", fork=True)
    _add_experiment(b, EARLY, {2: b1}, plan="plan B")
    _sql(
        b,
        (
            "INSERT INTO experiment_draws VALUES ('exp-1', 0, 100, ?, 'ana', 'Hello?')",
            [json.dumps(["ana", "ben"])],
        ),
    )
    return Shards(a, b, a1, a2, b1)


@pytest.fixture
def copy(tmp_path: Path, shards: Shards) -> Callable[..., Path]:
    """A fresh copy of shard ``a`` or ``b`` in this test's folder (the templates stay pristine)."""

    def make(name: str, as_name: str = "") -> Path:
        target = tmp_path / (as_name or f"{name}.db")
        src, dst = sqlite3.connect(getattr(shards, name)), sqlite3.connect(target)
        src.backup(dst)
        src.close()
        dst.close()
        return target

    return make


def _count(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def _one(path: Path, sql: str, params: list[object] | None = None) -> tuple[object, ...]:
    conn = sqlite3.connect(path)
    try:
        return tuple(conn.execute(sql, params or []).fetchone())
    finally:
        conn.close()


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_merged_database_holds_the_union_of_the_shards(copy, shards, tmp_path):
    a, b, out = copy("a"), copy("b"), tmp_path / "all" / "merged.db"
    result = merge.merge(out, [a, b])
    assert (result.sessions_added, result.sessions_present) == (3, 0)
    assert [s.sessions_added for s in result.sources] == [2, 1]
    assert result.experiments == ("exp-1",)
    shared = {"experiments": 1, "raters": 1, "experiment_draws": 1}  # in both shards, kept once
    for table in sorted(KNOWN_TABLES):
        expected = _count(a, table) + _count(b, table) - shared.get(table, 0)
        assert _count(out, table) == expected, table
    assert _count(out, "messages") == 9
    b1 = shards.b1
    text = "SELECT text FROM messages WHERE session_id = ? AND id = 2"
    assert _one(out, text, [b1]) == _one(b, text, [b1])
    # One experiment, since the earliest shard started it, with its three finished runs.
    assert _one(out, "SELECT created_at, config FROM experiments") == (EARLY, json.dumps(CONFIG))
    assert _one(out, "SELECT COUNT(*) FROM experiment_runs WHERE status = 'finished'") == (3,)
    assert _one(out, "SELECT COUNT(*) FROM sessions WHERE experiment_id = 'exp-1'") == (3,)
    assert _one(out, "SELECT parent_id FROM sessions WHERE id = ?", [shards.a2]) == (shards.a1,)
    conn = sqlite3.connect(out)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


def test_ratings_point_at_their_renumbered_assignments(copy, shards, tmp_path):
    out = tmp_path / "merged.db"
    merge.merge(out, [copy("a"), copy("b")])
    rows = sorted(
        tuple(r)
        for r in sqlite3.connect(out).execute(
            "SELECT p.id, p.name, s.id, s.session_a, r.session_id FROM ratings r"
            " JOIN assignments s ON s.id = r.assignment_id JOIN rating_plans p ON p.id = s.plan_id"
        )
    )
    # Both shards numbered their plan and assignment 1: B's became 2, and its rating followed.
    assert rows == [
        (1, "plan A", 1, shards.a1, shards.a1),
        (2, "plan B", 2, shards.b1, shards.b1),
    ]
    assert _one(out, "SELECT assignment_id, chosen_id FROM preferences") == (1, shards.a2)


def test_merging_again_adds_nothing(copy, tmp_path):
    a, b, out = copy("a"), copy("b"), tmp_path / "merged.db"
    merge.merge(out, [a, b])
    before = _dump(out)
    again = merge.merge(out, [b, a])
    assert (again.sessions_added, again.sessions_present) == (0, 3)
    assert [s.evaluation_rows for s in again.sources] == [0, 0]
    assert _dump(out) == before


def test_a_session_already_there_with_other_content_is_refused_and_out_is_unchanged(
    copy, shards, tmp_path
):
    out = tmp_path / "merged.db"
    merge.merge(out, [copy("a")])
    before = _dump(out)
    changed = copy("a", "a-later.db")
    _sql(
        changed,
        ("UPDATE sessions SET updated_at = ? WHERE id = ?", ["2030-01-01", shards.a2]),
    )
    # B's new session comes first and must not be kept either: one transaction.
    with pytest.raises(MergeError, match=str(shards.a2)) as caught:
        merge.merge(out, [copy("b"), changed])
    assert "different content" in str(caught.value)
    assert _dump(out) == before


def test_the_output_among_the_sources_is_refused(copy, tmp_path):
    a, b = copy("a"), copy("b")
    before = _dump(a)
    (tmp_path / "sub").mkdir()
    for spelling in (a, tmp_path / "sub" / ".." / "a.db"):
        with pytest.raises(MergeError, match="is the output database itself"):
            merge.merge(a, [b, spelling])
    assert _dump(a) == before


def test_a_source_given_twice_is_refused(copy, tmp_path):
    a = copy("a")
    with pytest.raises(MergeError, match="given twice"):
        merge.merge(tmp_path / "out.db", [a, tmp_path / "." / "a.db"])
    assert not (tmp_path / "out.db").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"", "an empty file"),
        (b"session,text\n1,hello\n", "not a SQLite file"),
        ("foreign", "another application"),
    ],
    ids=["missing", "empty", "text", "other-sqlite"],
)
def test_a_source_that_is_not_a_session_database_is_named(copy, tmp_path, content, message):
    bad = tmp_path / "bad.db"
    if content == "foreign":
        conn = sqlite3.connect(bad)
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.close()
    elif isinstance(content, bytes):
        bad.write_bytes(content)
    out = tmp_path / "out.db"
    with pytest.raises(errors.PlaygroundError, match=message) as caught:
        merge.merge(out, [copy("a"), bad])
    assert str(bad) in str(caught.value)
    assert not out.exists()  # nothing created: the sources are checked first


def test_an_experiment_with_another_config_is_refused(copy, tmp_path):
    b = copy("b")
    _sql(b, ("UPDATE experiments SET config = ?", [json.dumps({**CONFIG, "seed": 2})]))
    out = tmp_path / "new" / "out.db"
    with pytest.raises(
        MergeError, match=r"experiment exp-1: its config .* differs .*\(seed: 1 ≠ 2\)"
    ):
        merge.merge(out, [copy("a"), b])
    assert not out.parent.exists()  # a new output (and its new folder) is not left behind


def test_the_same_config_written_in_another_key_order_is_the_same_experiment(copy, tmp_path):
    b = copy("b")
    _sql(b, ("UPDATE experiments SET config = ?", [json.dumps(dict(reversed(CONFIG.items())))]))
    assert merge.merge(tmp_path / "out.db", [copy("a"), b]).sessions_added == 3


def test_shards_with_other_operational_settings_are_the_same_experiment(copy, tmp_path):
    """Only the protocol must agree: a shard run with other timeouts or call limits merges."""
    a, b = copy("a"), copy("b")
    for path, timeout in ((a, 60), (b, 120)):
        config = {"protocol": CONFIG, "settings": {"llm": {"timeout": timeout}}}
        _sql(path, ("UPDATE experiments SET config = ?", [json.dumps(config)]))
    assert merge.merge(tmp_path / "out.db", [a, b]).sessions_added == 3
    _sql(
        b, ("UPDATE experiments SET config = ?", [json.dumps({"protocol": {**CONFIG, "seed": 2}})])
    )
    with pytest.raises(MergeError, match=r"protocol.seed: 1 ≠ 2"):
        merge.merge(tmp_path / "out2.db", [a, b])


def test_a_draw_that_differs_between_shards_is_refused(copy, tmp_path):
    b = copy("b")
    _sql(b, ("UPDATE experiment_draws SET initiator = 'ben' WHERE draw = 0", []))
    with pytest.raises(
        MergeError, match=r"experiment_draws .*'exp-1'.* 0 differs .*initiator 'ana' in"
    ):
        merge.merge(tmp_path / "out.db", [copy("a"), b])


@pytest.mark.parametrize("order", ["finished-first", "finished-last"])
def test_a_finished_run_wins_over_an_interrupted_one(copy, shards, tmp_path, order):
    a, b = copy("a"), copy("b")
    # B tried draw 0 too (say, a rerun on another machine) and was interrupted, later.
    _sql(
        b,
        (
            "INSERT INTO experiment_runs VALUES ('exp-1', 0, 'inner-thoughts', ?, 'interrupted',"
            " 2, 'killed', '2027-01-01')",
            [shards.b1],
        ),
    )
    out = tmp_path / "out.db"
    merge.merge(out, [a, b] if order == "finished-first" else [b, a])
    run = "SELECT status, session_id, attempts FROM experiment_runs WHERE draw = 0"
    assert _one(out, run) == ("finished", shards.a1, 1)
    assert _count(out, "experiment_runs") == 3


def test_of_two_unfinished_runs_the_later_one_wins(copy, shards, tmp_path):
    a, b = copy("a"), copy("b")
    _sql(a, ("UPDATE experiment_runs SET status = 'failed', error = 'boom' WHERE draw = 0", []))
    _sql(
        b,
        (
            "INSERT INTO experiment_runs VALUES ('exp-1', 0, 'inner-thoughts', ?, 'interrupted',"
            " 2, NULL, '2027-01-01')",
            [shards.b1],
        ),
    )
    out = tmp_path / "out.db"
    merge.merge(out, [a, b])
    run = "SELECT status, session_id, attempts FROM experiment_runs WHERE draw = 0"
    assert _one(out, run) == ("interrupted", shards.b1, 2)


def test_one_run_finished_in_two_sessions_is_refused(copy, shards, tmp_path):
    b = copy("b")
    _sql(
        b,
        (
            "INSERT INTO experiment_runs VALUES ('exp-1', 0, 'inner-thoughts', ?, 'finished', 1,"
            " NULL, ?)",
            [shards.b1, EARLY],
        ),
    )
    out = tmp_path / "out.db"
    merge.merge(out, [copy("a")])
    before = _dump(out)
    with pytest.raises(MergeError, match="finished twice") as caught:
        merge.merge(out, [b])
    assert str(shards.a1) in str(caught.value)
    assert str(shards.b1) in str(caught.value)
    assert _dump(out) == before


def test_a_session_still_recorded_on_this_machine_is_refused(copy, shards, tmp_path):
    b = copy("b")
    _sql(
        b,
        (
            "UPDATE sessions SET status = 'running', pid = ?, host = ? WHERE id = ?",
            [os.getpid(), socket.gethostname(), shards.b1],
        ),
    )
    out = tmp_path / "out.db"
    with pytest.raises(MergeError, match=f"session {shards.b1} is still running"):
        merge.merge(out, [copy("a"), b])
    assert not out.exists()


def test_a_table_without_a_merge_rule_is_refused(copy, tmp_path):
    b = copy("b")
    _sql(b, ("CREATE TABLE notes (session_id TEXT, text TEXT)", []))
    with pytest.raises(MergeError, match="table notes has no merge rule") as caught:
        merge.merge(tmp_path / "out.db", [copy("a"), b])
    assert str(b) in str(caught.value)


def test_every_table_of_the_schema_has_a_merge_rule(tmp_path):
    db = open_database(tmp_path / "fresh.db")
    tables = set(db.table_names())
    db.close()
    assert tables == KNOWN_TABLES


def test_columns_are_copied_as_the_schema_lists_them(copy, shards, tmp_path):
    b = copy("b")
    _sql(
        b,
        ("ALTER TABLE messages ADD COLUMN mood TEXT", []),
        ("UPDATE messages SET mood = 'calm'", []),
    )
    out = tmp_path / "out.db"
    # A column the output lacks is refused, not dropped...
    with pytest.raises(MergeError, match=r"messages\.mood has no place"):
        merge.merge(out, [b])
    # ...and one it has arrives with its values.
    db = open_database(out)
    db.execute("ALTER TABLE messages ADD COLUMN mood TEXT")
    db.close()
    merge.merge(out, [b])
    assert _one(out, "SELECT DISTINCT mood FROM messages") == ("calm",)


def test_the_command_prints_a_summary_per_source_and_the_total(copy, tmp_path):
    a, b, out = copy("a"), copy("b"), tmp_path / "merged.db"
    args = argparse.Namespace(output=str(out), sources=[str(a), str(b)], busy_timeout=5.0)
    text = io.StringIO()
    assert cli_merge(args, text) == 0
    assert text.getvalue().splitlines() == [
        f"{a}: 2 sessions added, 0 already there; 1 experiment (exp-1); 6 rating rows",
        f"{b}: 1 session added, 0 already there; 1 experiment (exp-1); 4 rating rows",
        f"merged into {out}: 3 sessions added, 0 already there, 1 experiment",
    ]
    text = io.StringIO()
    cli_merge(args, text)
    assert text.getvalue().splitlines()[-1] == (
        f"merged into {out}: 0 sessions added, 3 already there, 1 experiment"
    )


def test_the_command_refuses_a_negative_busy_timeout(copy, tmp_path):
    args = argparse.Namespace(
        output=str(tmp_path / "o.db"), sources=[str(copy("a"))], busy_timeout=-1.0
    )
    with pytest.raises(errors.SettingsError, match="--busy-timeout"):
        cli_merge(args, io.StringIO())


def test_playground_merge_runs_from_the_command_line(copy, tmp_path):
    a, b, out = copy("a"), copy("b"), tmp_path / "merged.db"
    text, err = io.StringIO(), io.StringIO()
    assert cli.main(["merge", str(out), str(a), str(b)], out=text, err=err) == 0
    assert text.getvalue().splitlines()[-1] == (
        f"merged into {out}: 3 sessions added, 0 already there, 1 experiment"
    )
    missing = tmp_path / "shard-9.db"
    text, err = io.StringIO(), io.StringIO()
    assert cli.main(["merge", str(out), str(a), str(missing)], out=text, err=err) == 1
    assert err.getvalue() == f"error: {missing}: no such file\n"
    assert text.getvalue() == ""
