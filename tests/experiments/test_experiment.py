"""Experiments: paired draws, persona enrichment, resume, shards, the summary, and the baselines'
turn-taking rules in real rooms (offline engine, real MiniLM, real SQLite files)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from playground import domain, errors, factory, personas
from playground.cli import main as cli
from playground.experiments import protocol as experiment_design
from playground.experiments import results as experiment_report
from playground.experiments import runner as experiment
from playground.storage import open_database
from tests.conftest import REPO, offline_settings


def protocol(
    conditions=("inner-thoughts", "next-speaker", "reactive"), n=3, agents=3, turns=5, seed=1
):
    lib = personas.load_personas()
    return experiment_design.ExperimentProtocol(
        conditions=conditions,
        conversations=n,
        agents=agents,
        turns=turns,
        seed=seed,
        personas=tuple(experiment_design.enrich(lib, seed)),
        icebreakers=tuple(personas.load_icebreakers()),
        engine="offline",
        model="offline",
    )


async def run_protocol(db, embedder, proto, **kw) -> experiment.Runner:
    settings = offline_settings()
    engine = await factory.build_engine(settings, embedder=embedder)
    runner = experiment.Runner(db, proto, settings, engine, **kw)
    await runner.run()
    return runner


def rows(db, sql, params=()):
    return db.execute(sql, list(params)).fetchall()


def transcripts(db, experiment_id):
    """(draw, condition) → [(speaker, text)] of every finished run."""
    out = {}
    for draw, cond, sid in rows(
        db,
        "SELECT draw, condition, session_id FROM experiment_runs WHERE experiment_id = ? AND status = 'finished'",
        [experiment_id],
    ):
        out[(draw, cond)] = rows(
            db, "SELECT speaker, text FROM messages WHERE session_id = ? ORDER BY id", [sid]
        )
    return out


# -- the design ------------------------------------------------------------------------------


def test_enrichment_borrows_two_facts_from_others_and_is_reproducible_by_seed():
    lib = personas.load_personas()
    a, b, c = (
        experiment_design.enrich(lib, 1),
        experiment_design.enrich(lib, 1),
        experiment_design.enrich(lib, 2),
    )
    assert a == b
    assert a != c
    own = {p.name: set(p.facts) for p in lib}
    for before, after in zip(lib, a, strict=True):
        assert after.facts[: len(before.facts)] == before.facts
        borrowed = after.facts[len(before.facts) :]
        assert len(borrowed) == 2
        assert len(set(borrowed)) == 2
        assert all(f not in own[before.name] for f in borrowed)
        assert all(any(f in own[q.name] for q in lib if q.name != before.name) for f in borrowed)


def test_draws_follow_the_protocol_and_depend_only_on_the_seed():
    p = protocol(n=50, agents=4)
    d = experiment_design.draws(p)
    assert (
        d
        == experiment_design.draws(protocol(n=50, agents=4))
        != experiment_design.draws(protocol(n=50, agents=4, seed=2))
    )
    names = {q.name for q in p.personas}
    assert len(d) == 50
    assert all(len(set(x.participants)) == 4 and set(x.participants) <= names for x in d)
    assert all(x.initiator in x.participants and x.icebreaker in p.icebreakers for x in d)
    assert len({x.icebreaker for x in d}) > 5
    assert len({x.initiator for x in d}) > 4


def test_shard_parsing():
    assert experiment_design.parse_shard("1/4") == (1, 4)
    for bad in ("4/4", "x", "1/0", "-1/2"):
        with pytest.raises(Exception, match="--shard"):
            experiment_design.parse_shard(bad)


@pytest.mark.asyncio
async def test_every_condition_runs_on_the_same_draws_and_the_pairs_are_stored(db, embedder):
    proto = protocol()
    runner = await run_protocol(db, embedder, proto, concurrency=4)
    xid = runner.id
    stored = rows(
        db,
        "SELECT draw, seed, participants, initiator, icebreaker FROM experiment_draws WHERE experiment_id = ? ORDER BY draw",
        [xid],
    )
    assert [
        (d.index, d.seed, list(d.participants), d.initiator, d.icebreaker)
        for d in experiment_design.draws(proto)
    ] == [(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in stored]
    sessions = rows(db, "SELECT id, condition, draw, seed, experiment_id, status FROM sessions")
    assert len(sessions) == 9
    assert {s[5] for s in sessions} == {"finished"}
    for draw in experiment_design.draws(proto):
        pair = [s for s in sessions if s[2] == draw.index]
        assert sorted(s[1] for s in pair) == sorted(proto.conditions)
        assert {s[3] for s in pair} == {draw.seed}
        assert {s[4] for s in pair} == {xid}
        for s in pair:
            people = rows(
                db,
                "SELECT name, policy FROM participants WHERE session_id = ? ORDER BY name",
                [s[0]],
            )
            assert [p[0] for p in people] == sorted(draw.participants)
            assert {p[1] for p in people} == {s[1]}  # every agent follows the condition
            first = rows(
                db, "SELECT speaker, text FROM messages WHERE session_id = ? AND id = 1", [s[0]]
            )
            assert first == [(draw.initiator, draw.icebreaker)]
    # The paper's Inner Thoughts settings were used.
    config = json.loads(
        rows(db, "SELECT config FROM sessions WHERE condition = 'inner-thoughts'")[0][0]
    )
    assert config["preset"] == "simulation"
    assert config["engine"]["evaluation_mode"] == "per-thought"
    # Next-speaker predictions are stored with probabilities; decisions name the policy.
    preds = rows(
        db,
        "SELECT p.predicted, p.probabilities, p.method FROM predictions p JOIN sessions s ON s.id = p.session_id WHERE s.condition = 'next-speaker'",
    )
    assert preds
    assert all(abs(sum(json.loads(p[1]).values()) - 1) < 1e-4 for p in preds)
    assert {p[2] for p in preds} == {"offline-heuristic"}
    assert rows(
        db,
        "SELECT DISTINCT policy FROM decisions d JOIN sessions s ON s.id = d.session_id WHERE s.condition = 'reactive'",
    ) == [("reactive",)]


@pytest.mark.asyncio
async def test_summary_per_condition(db, embedder):
    runner = await run_protocol(db, embedder, protocol(n=2), concurrency=2)
    summary = {r.condition: r for r in experiment_report.summarise(db, runner.id)}
    assert set(summary) == {"inner-thoughts", "next-speaker", "reactive"}
    it, ns = summary["inner-thoughts"], summary["next-speaker"]
    assert it.conversations == ns.conversations == 2
    assert it.failed == 0
    assert it.motivation is not None
    assert 1 <= it.motivation <= 5.2
    assert ns.motivation is None
    assert ns.system1_replies == 0
    # A next-speaker room always has someone to speak: it never goes silent.
    assert ns.messages == 5
    assert ns.silent_steps == 0
    for r in summary.values():
        assert r.gini is not None
        assert 0 <= r.gini < 1
        assert r.messages is not None
        assert r.turns_per_agent == pytest.approx(r.messages / 3)
        assert r.calls_per_message == 0  # the offline engine makes no LLM calls
    text = experiment_report.format_summary(list(summary.values()))
    assert "Gini" in text
    assert "inner-thoughts" in text
    assert "—" in text


def test_gini():
    assert experiment_report.gini([3, 3, 3]) == 0
    assert experiment_report.gini([0, 0, 6]) == pytest.approx(2 / 3)
    assert experiment_report.gini([1, 2, 3]) == pytest.approx(2 / 9)
    assert experiment_report.gini([0, 0]) == 0
    assert experiment_report.gini([]) is None  # nobody to share turns: undefined, not 0


def test_a_conversation_without_agents_is_left_out_of_turns_per_agent_and_gini(tmp_path):
    """Turns per agent and Gini are undefined without an AI agent: such a conversation used to
    count 0 for both, pulling the condition's means down."""
    db = open_database(tmp_path / "e.db")
    at = "2025-05-01T10:00:00+00:00"
    db.execute(
        "INSERT INTO experiments (id, name, created_at, config) VALUES ('e1', 'e', ?, '{}')", [at]
    )
    for sid, people, said in (
        ("s1", [("A", "ai"), ("B", "ai")], ["A", "A"]),  # 1 turn per agent, Gini 0.5
        ("s2", [("Hana", "human")], ["Hana", "Hana", "Hana"]),  # no AI agent at all
    ):
        db.execute(
            "INSERT INTO sessions (id, created_at, status, engine, model, config, condition)"
            " VALUES (?, ?, 'finished', 'offline', 'offline', '{}', 'c')",
            [sid, at],
        )
        db.execute(
            "INSERT INTO experiment_runs (experiment_id, draw, condition, session_id, status,"
            " updated_at) VALUES ('e1', ?, 'c', ?, 'finished', ?)",
            [int(sid[1:]), sid, at],
        )
        for name, kind in people:
            db.execute(
                "INSERT INTO participants (session_id, name, kind, joined_at) VALUES (?, ?, ?, ?)",
                [sid, name, kind, at],
            )
        for i, speaker in enumerate(said):
            kind = dict(people)[speaker]
            db.execute(
                "INSERT INTO messages (session_id, id, step, speaker, speaker_kind, text,"
                " posted_at) VALUES (?, ?, ?, ?, ?, 'hello', ?)",
                [sid, i, i, speaker, kind, at],
            )
    db.conn.commit()
    (row,) = experiment_report.summarise(db, "e1")
    db.close()
    assert row.conversations == 2
    assert row.no_agents == 1
    assert row.turns_per_agent == 1.0
    assert row.gini == 0.5  # were 0.5 and 0.25
    assert row.messages == 2.5  # defined for both conversations
    text = experiment_report.format_summary([row])
    assert "c: 1 of 2 conversations without an AI agent, left out of turns/agent and Gini" in text


@pytest.mark.asyncio
async def test_a_failed_conversation_is_recorded_and_the_batch_goes_on(db, embedder, monkeypatch):
    proto = protocol(conditions=("next-speaker",), n=3)
    bad = experiment_design.draws(proto)[1]
    original = experiment.Runner._settings_for

    def broken(self, draw):
        if draw.index == bad.index:
            raise errors.PlaygroundError("the test broke this conversation")
        return original(self, draw)

    monkeypatch.setattr(experiment.Runner, "_settings_for", broken)
    runner = await run_protocol(db, embedder, proto)
    status = dict(
        ((d, s), e) for d, s, e in rows(db, "SELECT draw, status, error FROM experiment_runs")
    )
    assert status == {
        (0, "finished"): None,
        (1, "failed"): "the test broke this conversation",
        (2, "finished"): None,
    }
    assert runner.progress.conditions["next-speaker"].failed == 1
    # Rerun: the failed one is redone, the finished ones are not.
    monkeypatch.setattr(experiment.Runner, "_settings_for", original)
    before = rows(db, "SELECT id FROM sessions ORDER BY id")
    again = await run_protocol(db, embedder, proto)
    assert again.progress.conditions["next-speaker"].skipped == 2
    after = rows(db, "SELECT id FROM sessions ORDER BY id")
    assert set(before) < set(after)
    assert len(after) == 3
    assert rows(db, "SELECT draw, status, attempts FROM experiment_runs ORDER BY draw") == [
        (0, "finished", 1),
        (1, "finished", 2),
        (2, "finished", 1),
    ]


@pytest.mark.asyncio
async def test_shards_together_equal_an_unsharded_run(tmp_path, embedder):
    from playground.transfer import merge

    proto = protocol(n=4, turns=4)
    whole = open_database(tmp_path / "whole.db")
    runner = await run_protocol(whole, embedder, proto, concurrency=3)
    for k in range(2):
        shard = open_database(tmp_path / f"shard{k}.db")
        await run_protocol(shard, embedder, proto, shard=(k, 2), concurrency=2)
        assert {r[0] % 2 for r in rows(shard, "SELECT draw FROM experiment_runs")} == {k}
        shard.close()
    merge.merge(tmp_path / "merged.db", [tmp_path / "shard0.db", tmp_path / "shard1.db"])
    merged = open_database(tmp_path / "merged.db")
    a, b = transcripts(whole, runner.id), transcripts(merged, runner.id)
    assert len(a) == 12
    assert a == b
    assert [
        r.model_dump(exclude={"condition"}) for r in experiment_report.summarise(whole, runner.id)
    ] == [
        r.model_dump(exclude={"condition"}) for r in experiment_report.summarise(merged, runner.id)
    ]


# -- resume after a kill, through the command line ----------------------------------------------


def test_resume_after_a_batch_killed_midway_loses_nothing_and_runs_nothing_twice(tmp_path):
    db = tmp_path / "x.db"
    argv = [
        sys.executable, "-m", "playground", "experiment", "--engine", "offline",
        "--conditions", "inner-thoughts,next-speaker", "--conversations", "4", "--agents", "3",
        "--turns", "6", "--db", str(db), "--concurrency", "2",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    finished: list = []
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
        if db.exists():
            try:
                d = open_database(db, busy_timeout=5)
                finished = rows(
                    d,
                    "SELECT draw, condition, session_id FROM experiment_runs WHERE status = 'finished'",
                )
                d.close()
            except Exception:  # noqa: BLE001 - the file is being created
                finished = []
            if len(finished) >= 2:
                break
    assert proc.poll() is None, "the batch ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    d = open_database(db)  # marks the killed process's sessions interrupted
    killed = rows(d, "SELECT draw, condition, session_id, status FROM experiment_runs")
    assert any(r[3] == "running" for r in killed)
    assert len(finished) >= 2
    kept = {(r[0], r[1]): r[2] for r in killed if r[3] == "finished"}
    texts = {
        sid: rows(d, "SELECT speaker, text FROM messages WHERE session_id = ?", [sid])
        for sid in kept.values()
    }
    d.close()
    out = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert f"{len(kept)} conversations were already finished and were skipped" in out.stderr
    d = open_database(db)
    final = rows(d, "SELECT draw, condition, session_id, status, attempts FROM experiment_runs")
    assert len(final) == 8
    assert {r[3] for r in final} == {"finished"}
    for r in final:
        if (r[0], r[1]) in kept:  # nothing finished ran twice, and nothing of it was lost
            assert r[2] == kept[(r[0], r[1])]
            assert r[4] == 1
            assert (
                rows(d, "SELECT speaker, text FROM messages WHERE session_id = ?", [r[2]])
                == texts[r[2]]
            )
    # One session per run: the interrupted attempts were replaced, not left next to the new ones.
    assert rows(d, "SELECT COUNT(*), COUNT(DISTINCT draw || condition) FROM sessions") == [(8, 8)]
    assert rows(d, "SELECT DISTINCT status FROM sessions") == [("finished",)]
    d.close()


def test_cli_lists_and_summarises_experiments(tmp_path):
    db = tmp_path / "x.db"
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["experiment", "--engine", "offline", "--conditions", "next-speaker,reactive",
         "--conversations", "2", "--agents", "2", "--turns", "4", "--db", str(db), "--name", "pilot"],
        out=out, err=err,
    )  # fmt: skip
    assert code == 0, err.getvalue()
    xid = out.getvalue().strip().splitlines()[-1]
    assert "next-speaker" in out.getvalue()
    assert "Gini" in out.getvalue()
    listing = io.StringIO()
    assert cli.main(["experiments", "--db", str(db)], out=listing) == 0
    assert xid in listing.getvalue()
    assert "pilot" in listing.getvalue()
    assert "4/4 finished" in listing.getvalue()
    detail = io.StringIO()
    assert (
        cli.main(
            ["experiments", "pilot", "--runs", "--format", "json", "--db", str(db)], out=detail
        )
        == 0
    )
    data = json.loads(detail.getvalue())
    assert data["experiment"] == xid
    assert len(data["runs"]) == 4
    # show: who was given each turn and why; --json carries the predictions.
    sid = next(r["session_id"] for r in data["runs"] if r["condition"] == "next-speaker")
    text = io.StringIO()
    assert cli.main(["show", sid, "--db", str(db)], out=text) == 0
    assert "(next-speaker: predicted " in text.getvalue()
    assert "condition next-speaker" in text.getvalue()
    js = io.StringIO()
    assert cli.main(["show", sid, "--db", str(db), "--json"], out=js) == 0
    preds = json.loads(js.getvalue())["predictions"]
    assert preds
    assert all(abs(sum(p["probabilities"].values()) - 1) < 1e-4 for p in preds)
    # The report and the rating plans pick the experiment up by id.
    rep = io.StringIO()
    assert cli.main(["report", "--experiment", xid, "--db", str(db)], out=rep) == 0
    assert f"experiment {xid!r}" in rep.getvalue()
    assert "(4 sessions)" in rep.getvalue()


def test_bad_experiment_options_name_the_flag(tmp_path):
    for argv, flag, exit_code in (
        (["--conditions", "inner-thoughts,telepathy"], "--conditions", 1),
        (["--agents", "9"], "--agents", 1),
        (["--conversations", "0"], "--conversations", 2),  # out of its range: a usage error
        (["--shard", "3/3"], "--shard", 1),
    ):
        err = io.StringIO()
        code = cli.main(
            ["experiment", "--engine", "offline", "--db", str(tmp_path / "x.db"), *argv],
            out=io.StringIO(),
            err=err,
        )
        assert code == exit_code
        assert flag in err.getvalue()
        assert "Traceback" not in err.getvalue()


@pytest.mark.asyncio
async def test_conversations_run_concurrently(db, embedder):
    """Several conversations are in flight at once (the workers share one event loop)."""
    proto = protocol(conditions=("next-speaker",), n=4, turns=4)
    peak = 0

    def seen(p: experiment.Progress) -> None:
        nonlocal peak
        peak = max(peak, p.running)

    await run_protocol(db, embedder, proto, concurrency=3, on_progress=seen)
    assert peak == 3


def test_policies_are_known():
    assert domain.POLICIES == ("inner-thoughts", "next-speaker", "reactive")
    assert asyncio.iscoroutinefunction(experiment.Runner.run)


@pytest.mark.asyncio
async def test_pairwise_rating_plans_over_an_experiment_compare_the_same_draw(db, embedder):
    from playground.rating.store import RatingStore

    runner = await run_protocol(
        db, embedder, protocol(conditions=("inner-thoughts", "next-speaker"), n=3, turns=3)
    )
    draw = dict(rows(db, "SELECT id, draw FROM sessions"))
    cond = dict(rows(db, "SELECT id, condition FROM sessions"))
    plan = RatingStore(db).create_plan("paired", "pairwise", ["r1", "r2"], 3, experiment=runner.id)
    tasks = rows(db, "SELECT session_a, session_b FROM assignments WHERE plan_id = ?", [plan.id])
    assert len(tasks) == 6
    assert plan.source["matched"] is True
    for a, b in tasks:
        assert draw[a] == draw[b]
        assert cond[a] != cond[b]


@pytest.mark.asyncio
async def test_export_and_import_carry_predictions_policies_and_draws(db, embedder, tmp_path):
    from playground.transfer import export

    runner = await run_protocol(db, embedder, protocol(conditions=("next-speaker",), n=1, turns=4))
    sid = rows(db, "SELECT id FROM sessions")[0][0]
    record = export.session_record(db, sid) if hasattr(export, "session_record") else None
    path = tmp_path / "x.jsonl"
    out = io.StringIO()
    assert (
        cli.main(
            ["export", "--experiment", runner.id, "--db", str(db_file(db)), "--output", str(path)],
            out=out,
        )
        == 0
    )
    assert record is None or record["predictions"]
    other = tmp_path / "other.db"
    assert cli.main(["import", str(path), "--db", str(other)], out=io.StringIO()) == 0
    o = open_database(other)
    assert rows(
        o,
        "SELECT predicted, probabilities, method, chosen FROM predictions ORDER BY message_id, step",
    ) == rows(
        db,
        "SELECT predicted, probabilities, method, chosen FROM predictions ORDER BY message_id, step",
    )
    assert rows(o, "SELECT DISTINCT policy FROM participants") == [("next-speaker",)]
    assert rows(o, "SELECT experiment_id, draw FROM sessions") == rows(
        db, "SELECT experiment_id, draw FROM sessions"
    )
    o.close()


def db_file(db) -> str:
    from playground.storage.database import database_file

    return database_file(db)


def test_an_unreachable_server_stops_the_experiment_before_anything_is_written(tmp_path):
    err = io.StringIO()
    db = tmp_path / "x.db"
    code = cli.main(
        ["experiment", "--engine", "openai", "--base-url", "http://127.0.0.1:9/v1",
         "--max-retries", "0", "--conversations", "1", "--db", str(db)],
        out=io.StringIO(), err=err,
    )  # fmt: skip
    assert code == 1
    assert "cannot reach http://127.0.0.1:9/v1" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert not db.exists()


def test_the_tail_of_a_batch_starts_its_longest_conditions_first() -> None:
    """Design order (pairs together) until the last ``window`` jobs; then the condition that took
    longest so far first, an unmeasured one counting as longest, design order among equals."""
    draws = [experiment_design.Draw(i, i, (), "", "") for i in range(4)]
    jobs = [experiment.Job(d, c) for d in draws for c in ("inner-thoughts", "next-speaker")]
    pending = list(jobs)
    took: dict[str, list[float]] = {}
    picked = [experiment.next_job(pending, 4, took) for _ in range(4)]
    assert picked == jobs[:4]  # more than 4 waited each time: design order
    took.update({"inner-thoughts": [25.0, 27.0], "next-speaker": [11.0]})
    tail = [experiment.next_job(pending, 4, took) for _ in range(4)]
    assert [(j.draw.index, j.condition) for j in tail] == [
        (2, "inner-thoughts"),
        (3, "inner-thoughts"),
        (2, "next-speaker"),
        (3, "next-speaker"),
    ]
    assert pending == []

    pending = list(jobs[4:])
    took = {"next-speaker": [11.0]}  # no Inner Thoughts conversation has finished yet
    assert experiment.next_job(pending, 4, took) == jobs[4]
    took = {"inner-thoughts": [5.0], "next-speaker": [11.0]}
    assert experiment.next_job(pending, 4, took) == jobs[5]
