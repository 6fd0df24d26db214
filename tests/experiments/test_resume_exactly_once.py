"""A batch SIGKILLed right after any kind of write it makes is finished exactly once by a rerun.

Each trial runs the real command (``python -m playground experiment`` / ``storm``, offline, one
job) with ``PLAYGROUND_FAULT_AFTER_WRITES=k``, so the process kills itself right after its k-th
committed write, then runs the same command again to completion. Which write is the k-th comes from
an uninterrupted run of the same command in this process, whose fault point is replaced by a probe
of the database after every write. The first write of each kind is a kill point: the experiment
and its draws; the session row with its run row ``running`` (and, in STORM, its dialogue row),
apart or as one write; the first of the events' rows; a hidden state; the session's end; the run
row ``finished``. That run is also the reference the resumed batch must equal.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from playground.storage import writes
from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
#: Rows a job writes, counted in every snapshot (``experiments`` for the batch's own first write).
TABLES = (
    "experiments", "participants", "memories", "messages", "hidden_states", "storm_dialogues",
    "message_embeddings", "decisions", "predictions", "thoughts", "events",
)  # fmt: skip
#: Rows of the recorder's events that leave a rerun the same state to resume from (a session and
#: its run ``running``, partly written): the first write of any of them stands for all.
EVENT_ROWS = frozenset(
    {"participants", "memories", "messages", "message_embeddings", "decisions", "predictions",
     "thoughts", "events"}
)  # fmt: skip
EMPTY: dict[str, Any] = {**dict.fromkeys(TABLES, 0), "sessions": [], "runs": []}

State = dict[str, Any]


def snapshot(path: Path) -> State:
    """What the database holds, without ids or times (the same in every run of the command)."""
    conn = sqlite3.connect(path)
    try:
        state: State = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
        state["sessions"] = sorted(r[0] for r in conn.execute("SELECT status FROM sessions"))
        state["runs"] = sorted(
            conn.execute("SELECT draw, condition, status FROM experiment_runs").fetchall()
        )
    finally:
        conn.close()
    return state


def label(before: State, after: State) -> str:
    """What one write did, by kind: e.g. ``session running + run running``, ``events``."""
    parts = []
    for key in after:
        if after[key] == before[key]:
            continue
        if key == "sessions":
            parts.append("session " + ",".join(s for s in after[key] if s not in before[key]))
        elif key == "runs":
            parts.append("run " + ",".join(r[2] for r in after[key] if r not in before[key]))
        elif key not in EVENT_ROWS:
            parts.append(key)
    return " + ".join(parts) or "events"


def kill_points(states: list[State]) -> list[tuple[int, str]]:
    """The first write of each kind: (k, what the k-th write did)."""
    seen: dict[str, int] = {}
    before: State = EMPTY
    for k, after in enumerate(states, 1):
        seen.setdefault(label(before, after), k)
        before = after
    return sorted((k, what) for what, k in seen.items())


def transcripts(path: Path) -> dict[tuple[int, str], list[tuple[str, str]]]:
    conn = sqlite3.connect(path)
    try:
        return {
            (draw, cond): conn.execute(
                "SELECT speaker, text FROM messages WHERE session_id = ? ORDER BY id", [sid]
            ).fetchall()
            for draw, cond, sid in conn.execute(
                "SELECT draw, condition, session_id FROM experiment_runs"
            ).fetchall()
        }
    finally:
        conn.close()


def orphans(path: Path) -> list[str]:
    """What breaks "one finished session per job, and only that": sessions of the batch that no
    finished run row names, run rows not finished, or naming a session that is not finished."""
    conn = sqlite3.connect(path)
    try:
        out = [
            f"session {sid} ({status}, draw {draw}, {cond}) is no finished run's session"
            for sid, status, draw, cond in conn.execute(
                "SELECT id, status, draw, condition FROM sessions s WHERE experiment_id IS NOT NULL"
                " AND id NOT IN (SELECT session_id FROM experiment_runs WHERE status = 'finished'"
                " AND session_id IS NOT NULL)"
            )
        ]
        out += [
            f"run {draw} {cond} is {status} with session {sid} ({sstatus})"
            for draw, cond, status, sid, sstatus in conn.execute(
                "SELECT r.draw, r.condition, r.status, r.session_id, s.status FROM experiment_runs r"
                " LEFT JOIN sessions s ON s.id = r.session_id"
                " WHERE r.status != 'finished' OR s.status IS NOT 'finished'"
            )
        ]
        return out
    finally:
        conn.close()


def experiment_id(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT id FROM experiments").fetchone()[0])
    finally:
        conn.close()


def experiment_reports(path: Path) -> Any:
    """What ``playground experiments ID`` and ``playground report --experiment ID`` count."""
    exp = experiment_id(path)
    code, out, err = run_cli("experiments", exp, "--format", "json", "--db", str(path))
    assert code == 0, err
    summary = json.loads(out)["summary"]
    code, out, err = run_cli("report", "--experiment", exp, "--db", str(path))
    assert code == 0, err
    return summary, (out + err).replace(str(path), "DB")


def storm_reports(path: Path) -> Any:
    """What ``playground report --storm`` counts: Table 2's rows and the dialogues behind them."""
    exp = experiment_id(path)
    code, out, err = run_cli(
        "report", "--storm", "--experiment", exp, "--no-goal", "--dialogues", "--format", "json",
        "--db", str(path),
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    dialogues = sorted(
        (d["status"], d["uncertainty"], d["profile_access"], d["user"]) for d in report["dialogues"]
    )
    return report["rows"], dialogues


def command(
    argv: list[str], db: Path, *, kill_after: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(writes.FAULT_AFTER_WRITES, None)
    if kill_after is not None:
        env[writes.FAULT_AFTER_WRITES] = str(kill_after)
    return subprocess.run(
        [sys.executable, "-m", "playground", *argv, "--db", str(db)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def reference(argv: list[str], db: Path, monkeypatch: pytest.MonkeyPatch) -> list[State]:
    """Run ``argv`` uninterrupted in this process; the database's state after each write."""
    states: list[State] = []
    monkeypatch.setattr(writes, "_after_commit", lambda: states.append(snapshot(db)))
    code, _, err = run_cli(*argv, "--db", str(db))
    monkeypatch.undo()
    assert code == 0, err
    return states


def resumed(argv: list[str], db: Path, expected: Any, reports: Callable[[Path], Any]) -> list[str]:
    """Rerun ``argv`` to its end over ``db``; what differs from the uninterrupted run."""
    rerun = command(argv, db)
    if rerun.returncode != 0 or "Traceback" in rerun.stderr:
        return [f"the rerun exited {rerun.returncode}: {rerun.stderr[-300:]}"]
    problems = orphans(db)
    got = (snapshot(db), transcripts(db), reports(db))
    for name, a, b in zip(("rows", "transcripts", "reports"), got, expected, strict=True):
        if a != b:
            problems.append(f"{name} differ from an uninterrupted run: {a} != {b}")
    return problems


def trials(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reports: Callable[[Path], Any],
) -> tuple[list[tuple[int, str]], list[str]]:
    """Kill ``argv`` after the first write of each kind, rerun it, and list what went wrong."""
    ref_db = tmp_path / "reference.db"
    states = reference(argv, ref_db, monkeypatch)
    expected = (snapshot(ref_db), transcripts(ref_db), reports(ref_db))
    points = kill_points(states)
    problems: list[str] = []
    for k, what in points:
        db = tmp_path / f"kill{k}.db"
        killed = command(argv, db, kill_after=k)
        where = f"killed after write {k} ({what})"
        if killed.returncode != -signal.SIGKILL:
            problems.append(
                f"{where}: exit {killed.returncode}, not killed: {killed.stderr[-300:]}"
            )
        elif snapshot(db) != states[k - 1]:
            problems.append(f"{where}: the kill did not stop at that write: {snapshot(db)}")
        else:
            problems += [f"{where}: {p}" for p in resumed(argv, db, expected, reports)]
    return points, problems


@pytest.fixture
def personas(tmp_path: Path) -> Path:
    """Two personas with one fact each and one icebreaker that addresses one of them: the
    smallest conversation that still writes every kind of row."""
    d = tmp_path / "personas"
    d.mkdir()
    (d / "ana.toml").write_text(
        'name = "Ana"\ndescription = "A marine biologist."\nstyle = "warm"\n'
        'facts = ["I surf before work."]\n'
    )
    (d / "ben.toml").write_text(
        'name = "Ben"\ndescription = "A baker."\nstyle = "dry"\nfacts = ["I bake at dawn."]\n'
    )
    (d / "icebreakers.toml").write_text('icebreakers = ["Hey Ben, how was the bakery?"]\n')
    return d


def experiment_argv(personas: Path) -> list[str]:
    return [
        "experiment", "--engine", "offline", "--conditions", "reactive", "--conversations", "1",
        "--agents", "2", "--turns", "1", "--concurrency", "1", "--personas", str(personas),
        "--no-progress",
    ]  # fmt: skip


def test_an_experiment_killed_after_any_write_is_finished_exactly_once(
    tmp_path: Path, personas: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    points, problems = trials(experiment_argv(personas), tmp_path, monkeypatch, experiment_reports)
    kinds = [what for _, what in points]
    assert kinds[-3:] == ["events", "session finished", "run finished"], kinds
    assert problems == [], "\n".join(problems)


def test_sessions_an_earlier_version_left_beside_their_runs_are_replaced_on_resume(
    tmp_path: Path, personas: Path
) -> None:
    """Versions that wrote a session and its run row apart left a finished session that no run
    row names (its run to be redone beside it), or a run row ``finished`` over a session that is
    not."""
    argv = experiment_argv(personas)
    db = tmp_path / "x.db"
    assert command(argv, db).returncode == 0
    expected = (snapshot(db), transcripts(db), experiment_reports(db))
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE experiment_runs SET session_id = NULL, status = 'interrupted'")
    assert resumed(argv, db, expected, experiment_reports) == []
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE sessions SET status = 'interrupted'")
    assert resumed(argv, db, expected, experiment_reports) == []


def test_a_storm_batch_killed_after_any_write_is_finished_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [
        "storm", "--engine", "offline", "--task", "Buy a smartphone", "--difficulty", "1",
        "--profiles", "1", "--turns", "1", "--concurrency", "1", "--no-progress",
    ]  # fmt: skip
    points, problems = trials(argv, tmp_path, monkeypatch, storm_reports)
    kinds = [what for _, what in points]
    assert "storm_dialogues" in " ".join(kinds), kinds
    assert "hidden_states" in kinds, kinds
    assert kinds[-2:] == ["session finished", "run finished"], kinds
    assert problems == [], "\n".join(problems)
