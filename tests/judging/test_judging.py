"""The automatic judge through the real openai client against the loopback server: scores and
methods, blind inputs checked from the request log, pairwise choices, idempotent reruns, garbled
answers, and the `playground judge` command (the offline engine's refusal, bad input).

Sessions come from real offline simulations (built once per module); conditions are set with SQL.
"""

from __future__ import annotations

import io
import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playground import factory
from playground.cli import main as cli
from playground.judging import judge
from playground.judging import scores as judge_scores
from playground.judging.blind import blind_messages, render_transcript
from playground.llm.client import ChatClient
from playground.rating.store import CONVERSATION_METRICS, RatingStore
from playground.storage import open_database
from testbed.llm_server import FakeLLMServer
from tests.conftest import server_settings

RATER = "judge:fake-model"
CONDITIONS = ["inner-thoughts", "inner-thoughts", "next-speaker", "next-speaker"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Four real offline sessions, two per condition."""
    path = tmp_path_factory.mktemp("judging") / "template.db"
    ids = []
    for seed in range(1, 5):
        argv = ["simulate", "--agents", "3", "--turns", "5", "--seed", str(seed), "--quiet"]
        code, out, err = run(*argv, "--db", str(path))
        assert code == 0, err
        ids.append(out.strip().splitlines()[-1])
    db = open_database(path)
    with db.conn:
        for sid, cond in zip(ids, CONDITIONS, strict=True):
            db.execute("UPDATE sessions SET condition = ? WHERE id = ?", [cond, sid])
    db.close()
    return path, ids


@pytest.fixture
def fresh(
    template: tuple[Path, list[str]], tmp_path: Path
) -> Iterator[tuple[Any, list[str], Path]]:
    """A private copy of the template database: (db, session ids, path)."""
    path = tmp_path / "judging.db"
    shutil.copy(template[0], path)
    db = open_database(path)
    yield db, template[1], path
    db.close()


def client_for(srv: FakeLLMServer) -> ChatClient:
    return factory.make_chat_client(server_settings(srv, temperature=0.0))


def chat_bodies(srv: FakeLLMServer) -> list[dict[str, Any]]:
    return [r for r in srv.requests if r["_path"] == "/v1/chat/completions"]


def user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def fake_expected(d: int) -> float:
    """The loopback server's distribution for a written digit d (its module docs): p(d) = 0.6,
    the rest shared by 0.5^|k − d| over the other digits 1–5."""
    weights = {k: 0.5 ** abs(k - d) for k in range(1, 6) if k != d}
    total = sum(weights.values())
    probs = {k: 0.4 * w / total for k, w in weights.items()} | {d: 0.6}
    return sum(k * p for k, p in probs.items())


def stored(db: Any, sid: str, table: str = "judge_scores") -> dict[str, Any]:
    if table == "judge_scores":
        rows = db.execute(
            "SELECT metric, score, rating, reason, method, model FROM judge_scores"
            " WHERE session_id = ? AND rater = ?",
            [sid, RATER],
        ).fetchall()
        return {r[0]: r[1:] for r in rows}
    rows = db.execute(
        "SELECT metric, value FROM ratings WHERE session_id = ? AND rater = ?"
        " AND instrument = 'conversation'",
        [sid, RATER],
    ).fetchall()
    return dict(rows)


# -- the blind transcript ----------------------------------------------------------------------
def test_the_blind_transcript_is_what_the_blind_rating_window_shows(fresh):
    from ui.rating.blind_view import load_blind_messages

    db, ids, _ = fresh
    for sid in ids:
        ours = [(m.speaker, m.text) for m in blind_messages(db, sid)]
        window = [(m.speaker, m.text) for m in load_blind_messages(db, sid)]
        assert ours == window
        assert len(ours) >= 5
    text = render_transcript(blind_messages(db, ids[0]))
    assert all(line.split(": ", 1)[0] for line in text.splitlines() if not line.startswith(" "))


# -- scores --------------------------------------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["per-metric", "all-at-once"])
async def test_scores_are_logprob_weighted_with_logprobs_and_parsed_without(fresh, mode):
    db, ids, _ = fresh
    sid = ids[0]
    with FakeLLMServer(logprobs=False) as plain:
        client = client_for(plain)
        parsed = await judge.judge_session(db, sid, client, mode=mode, method="parsed")
        await client.close()
        assert len(chat_bodies(plain)) == (7 if mode == "per-metric" else 1)
    assert [s.metric for s in parsed] == [m.key for m in CONVERSATION_METRICS]
    assert {s.method for s in parsed} == {"parsed"}
    assert all(s.score == s.rating and s.reason.strip() for s in parsed)
    said = {s.metric: s.rating for s in parsed}
    assert stored(db, sid, "ratings") == said

    with FakeLLMServer() as srv:  # the same answers, now with a distribution per digit
        client = client_for(srv)
        weighted = await judge.judge_session(db, sid, client, force=True, mode=mode)
        await client.close()
    assert {s.method for s in weighted} == {"logprobs"}
    for s in weighted:
        assert s.score == pytest.approx(fake_expected(said[s.metric]), abs=1e-6)
        assert s.rating == math.floor(s.score + 0.5)
    assert any(s.score != said[s.metric] for s in weighted)
    rows = stored(db, sid)
    assert {m: r[1] for m, r in rows.items()} == stored(db, sid, "ratings")
    assert {r[3] for r in rows.values()} == {"logprobs"}
    assert {r[4] for r in rows.values()} == {"fake-model"}
    assert RATER in RatingStore(db).raters()


@pytest.mark.asyncio
async def test_without_logprobs_the_judge_samples_each_rating_in_a_final_call(fresh):
    db, ids, _ = fresh
    with FakeLLMServer(logprobs=False) as plain:
        client = client_for(plain)
        await client.probe()  # learns: no logprobs
        scores = await judge.judge_session(db, ids[0], client, samples=4)
        await client.close()
        finals = [b for b in chat_bodies(plain) if "alone" in b["messages"][-1]["content"]]
    assert {s.method for s in scores} <= {"sampled:4", "sampled:3", "sampled:2", "sampled:1"}
    assert len(scores) == 7
    assert len(finals) == 7 * 4  # the server ignores n: one by one
    assert all(b["temperature"] == 1.0 and "logprobs" not in b for b in finals)


def test_rating_tokens_are_read_per_metric_and_only_after_a_rating_key():
    from playground.llm.responses import TokenLogprob

    def tok(t: str, top: list[tuple[str, float]] | None = None) -> TokenLogprob:
        return TokenLogprob(t, 0.0, top or [(t, 0.0)])

    half = math.log(0.5)
    tokens = [tok('{"coherence": {"reason": "rated 3 of'), tok(" 7"), tok('", "rating": '),
              tok("6", [("6", half), ("7", half), ("x", 0.0)]), tok('}, "engagement": {"rating": '),
              tok("2"), tok("}}")]  # fmt: skip
    found = judge_scores.rating_distributions(tokens)
    assert found == [("coherence", 6, {6: 0.5, 7: 0.5}), ("engagement", 2, {2: 1.0})]
    assert judge_scores.expected_score(found[0][2]) == 6.5
    assert judge_scores.round_half_up(6.5) == 7


# -- blindness -----------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_the_judge_sees_names_and_texts_and_nothing_else(fresh):
    db, ids, _ = fresh
    plan = RatingStore(db).create_plan("p", "pairwise", ["ann"], 2, sessions=ids, seed=3)
    with FakeLLMServer() as srv:
        client = client_for(srv)
        await judge.judge_session(db, ids[0], client)
        await judge.judge_session(db, ids[2], client, mode="all-at-once")
        await judge.judge_pairs(db, plan.id, client)
        await client.close()
    bodies = chat_bodies(srv)
    assert len(bodies) == 7 + 1 + 2
    sent = "\n".join(json.dumps(b, ensure_ascii=False) for b in bodies)
    asked = "\n".join(user_text(b) for b in bodies)
    pairs = [s for a in RatingStore(db).assignments(plan.id) for s in (a.session_a, a.session_b)]
    for sid in {ids[0], ids[2], *pairs}:  # every judged conversation, names and texts in order
        assert render_transcript(blind_messages(db, sid)) in asked
    said = [m for sid in ids for m in blind_messages(db, sid)]
    everything_said = " ".join(m.text for m in said)
    secrets: set[str] = set(ids) | set(CONDITIONS) | {"offline engine", "inner thought"}
    for (text,) in db.execute("SELECT text FROM thoughts WHERE expressed_in IS NULL"):
        secrets.add(text)
    for (persona,) in db.execute("SELECT persona FROM participants WHERE persona IS NOT NULL"):
        p = json.loads(persona)
        secrets |= set(p.get("facts") or []) | {m["text"] for m in p.get("memories") or []}
        secrets |= {p["description"]} if p.get("description") else set()
    secrets = {s for s in secrets if s and s not in everything_said}
    assert len(secrets) > 20  # thoughts and persona facts that were never said are out there
    leaked = [s for s in secrets if s.lower() in sent.lower()]
    assert leaked == []
    for b in bodies:  # the statements are the human form's, word for word
        if "Statement:" in user_text(b):
            assert any(m.statement in user_text(b) for m in CONVERSATION_METRICS)


# -- idempotence and failures -------------------------------------------------------------------
@pytest.mark.asyncio
async def test_a_rerun_makes_no_request_and_force_asks_again(fresh):
    db, ids, _ = fresh
    with FakeLLMServer() as srv:
        client = client_for(srv)
        first = await judge.judge_session(db, ids[1], client)
        assert len(chat_bodies(srv)) == 7
        again = await judge.judge_session(db, ids[1], client)
        assert len(chat_bodies(srv)) == 7
        assert again == first
        await judge.judge_session(db, ids[1], client, force=True)
        assert len(chat_bodies(srv)) == 14
        await client.close()
    assert len(stored(db, ids[1])) == 7


@pytest.mark.asyncio
async def test_a_garbled_answer_is_retried_once_then_that_metric_is_not_judged(fresh):
    db, ids, _ = fresh
    engaging = next(m for m in CONVERSATION_METRICS if m.key == "engagement").statement

    def garble(body: dict[str, Any]) -> str | None:
        return "Honestly about a four out of seven." if engaging in json.dumps(body) else None

    skipped: list[tuple[str, str]] = []
    with FakeLLMServer() as srv:
        srv.set_responder(garble)
        client = client_for(srv)
        scores = await judge.judge_session(
            db, ids[3], client, on_skip=lambda m, why: skipped.append((m, why))
        )
        asked = [b for b in chat_bodies(srv) if engaging in json.dumps(b)]
        assert len(asked) == 2  # the answer, then one corrective retry
        assert [m for m, _ in skipped] == ["engagement"]
        assert "not valid" in skipped[0][1]
        assert "engagement" not in {s.metric for s in scores}
        assert len(scores) == 6
        assert "engagement" not in stored(db, ids[3])
        assert "engagement" not in stored(db, ids[3], "ratings")
        srv.set_responder(None)  # the next run asks for the missing metric only
        n = len(chat_bodies(srv))
        scores = await judge.judge_session(db, ids[3], client)
        assert len(chat_bodies(srv)) == n + 1
        assert len(scores) == 7
        await client.close()


# -- pairs ---------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_pairs_of_a_plan_become_the_judges_preferences_in_the_plans_order(fresh):
    db, ids, _ = fresh
    store = RatingStore(db)
    plan = store.create_plan("pairs", "pairwise", ["ann", "bob"], 3, sessions=ids, seed=5)
    pairs = judge.plan_pairs(db, plan.id)
    assert 3 <= len(pairs) <= 4  # the distinct pairs over both raters
    with FakeLLMServer() as srv:
        client = client_for(srv)
        got = await judge.judge_pairs(db, plan.id, client)
        bodies = chat_bodies(srv)
        assert len(bodies) == len(pairs) == len(got)
        for a, b in pairs:  # A is the session the plan shows first
            ta = render_transcript(blind_messages(db, a))
            tb = render_transcript(blind_messages(db, b))
            assert any(
                user_text(x).startswith(f"Conversation A:\n\n{ta}\n\nConversation B:\n\n{tb}")
                for x in bodies
            )
        rows = db.execute(
            "SELECT first_id, second_id, chosen_id, reason FROM preferences WHERE rater = ?",
            [RATER],
        ).fetchall()
        assert sorted((r[0], r[1]) for r in rows) == sorted(pairs)
        assert all(r[2] in r[:2] and r[3].strip() for r in rows)
        assert await judge.judge_pairs(db, plan.id, client) == got
        assert len(chat_bodies(srv)) == len(pairs)  # nothing asked again

        # Swapped: a judge that always answers A follows the position, not the conversation.
        srv.set_responder(lambda body: '{"reason": "the first one flows", "choice": "A"}')
        skipped: list[str] = []
        left = await judge.judge_pairs(
            db,
            plan.id,
            client,
            force=True,
            swap=True,
            on_skip=lambda a, b, why: skipped.append(why),
        )
        assert len(chat_bodies(srv)) == 3 * len(pairs)
        assert len(skipped) == len(pairs)
        assert all("position bias" in w for w in skipped)
        assert left == got  # the earlier choices stay; nothing invented
        await client.close()
    with pytest.raises(Exception, match="not pairs"):
        judge.plan_pairs(db, store.create_plan("c", "conversation", ["ann"], 2, sessions=ids).id)


# -- the command ---------------------------------------------------------------------------------
def test_the_offline_engine_has_no_judge(fresh):
    db, ids, path = fresh
    for extra in ([], ["--engine", "offline"]):
        code, out, err = run("judge", ids[0], "--db", str(path), *extra)
        assert code == 2
        assert out == ""
        assert "offline engine has no judge" in err
        assert "--engine openai" in err
        assert len(err.strip().splitlines()) == 1
    assert db.execute("SELECT COUNT(*) FROM judge_scores").fetchone()[0] == 0
    assert RATER not in RatingStore(db).raters()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nosuchsession"], "nosuchsession"),
        ([], "give session IDs, --experiment ID or --plan ID"),
        (["--plan", "99"], "no rating plan 99"),
        (["--experiment", "exp9"], "no experiment 'exp9'"),
        (["x", "--concurrency", "0"], "--concurrency"),
        (["x", "--timeout", "-1"], "--timeout"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(fresh, llm_server, argv, says):
    _, _, path = fresh
    flags = ["--base-url", llm_server.base_url, "--api-key", "k", "--model", "fake-model"]
    code, _out, err = run("judge", *argv, *flags, "--db", str(path))
    assert code == 2
    assert says in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_the_command_judges_sessions_and_a_plan_and_says_what_it_did(fresh, llm_server):
    db, ids, path = fresh
    flags = ["--base-url", llm_server.base_url, "--api-key", "k", "--model", "fake-model"]
    flags += ["--db", str(path), "--concurrency", "4"]
    code, out, err = run("judge", ids[0][:-2], ids[1], *flags)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("[1/2] ") or lines[0].startswith("[2/2] ")
    assert sum("7 of 7 metrics (logprobs 7)" in line for line in lines) == 2
    assert "Judged 2 of 2 sessions as judge:fake-model (0 already judged): 14 metric scores," in out
    assert "method: logprobs 14" in out
    assert "Failures: none" in out
    assert "LLM use: 15 chat calls" in err  # the probe and 7 per session

    code, out, _ = run("judge", ids[0], *flags)
    assert code == 0
    assert "already judged by judge:fake-model (skipped)" in out
    assert len(chat_bodies(llm_server)) == 15  # nothing left to judge: not even a probe
    with db.conn:
        db.execute("INSERT INTO experiments (id, created_at) VALUES ('exp1', 'now')")
        db.execute("UPDATE sessions SET experiment_id = 'exp1' WHERE id IN (?, ?)", ids[:2])
    code, out, _ = run("judge", "--experiment", "exp1", *flags)
    assert code == 0
    assert out.count("(skipped)") == 2
    assert "(2 already judged)" in out
    assert len(chat_bodies(llm_server)) == 15
    rate = RatingStore(db).create_plan("c", "conversation", ["ann"], 3, sessions=ids, seed=2)
    code, out, _ = run("judge", "--plan", str(rate.id), *flags)  # its sessions, on the metrics
    assert code == 0
    assert "of 3 sessions as judge:fake-model" in out
    assert {r[0] for r in db.execute("SELECT session_id FROM judge_scores")} >= {
        a.session_a for a in RatingStore(db).assignments(rate.id)
    }

    def longer(body: dict[str, Any]) -> str | None:  # a judge that ignores the position
        text = user_text(body)
        if not text.startswith("Conversation A:"):
            return None
        a, b = text.removeprefix("Conversation A:\n\n").split("\n\nConversation B:\n\n")
        b = b.split("\n\nWhich conversation")[0]
        return json.dumps({"reason": "more going on", "choice": "A" if len(a) > len(b) else "B"})

    llm_server.set_responder(longer)
    plan = RatingStore(db).create_plan("p", "pairwise", ["ann"], 2, sessions=ids, seed=1)
    code, out, err = run("judge", "--plan", str(plan.id), *flags, "--swap")
    assert code == 0, err
    assert "Rating plan" in out
    assert "2 pairs with a choice by judge:fake-model, 0 without" in out
    assert out.count("preferred to") == 2


@pytest.mark.asyncio
async def test_export_and_import_keep_the_judges_scores_reasons_and_methods(fresh, tmp_path):
    from playground.cli import main as cli

    db, ids, path = fresh
    with FakeLLMServer() as srv:
        client = client_for(srv)
        await judge.judge_session(db, ids[0], client)
        await client.close()
    want = db.execute(
        "SELECT rater, metric, score, rating, reason, method, model FROM judge_scores"
        " WHERE session_id = ? ORDER BY metric",
        [ids[0]],
    ).fetchall()
    assert len(want) == len(CONVERSATION_METRICS)
    dump, copy = tmp_path / "judged.jsonl", tmp_path / "copy.db"
    assert cli.main(["export", ids[0], "--db", str(path), "--output", str(dump)]) == 0
    assert cli.main(["import", str(dump), "--db", str(copy)]) == 0
    other = open_database(copy)
    try:
        got = other.execute(
            "SELECT rater, metric, score, rating, reason, method, model FROM judge_scores"
            " ORDER BY metric"
        ).fetchall()
    finally:
        other.close()
    assert got == want
