"""Dyadic STORM runs: the assistant, a batch end to end through the real openai client against
the loopback server, profile access in the assistant's requests, resuming an offline batch, the
Inner Thoughts assistant, and the command's bad input (real SQLite files, real MiniLM)."""

from __future__ import annotations

import io
import json

import pytest

from playground.cli import main as cli
from playground.cognition.base import Context
from playground.domain.simulated_user import UserProfile
from playground.storage import open_database
from playground.storm import assistant, profiles
from playground.storm import run as storm_run
from tests.conftest import offline_settings, server_settings
from tests.support.cli import cli_refusal

TASK = "Buy a smartphone"


def protocol(*, n=1, uncertainties=(40,), access=(False,), turns=3, kind="plain", **kw):
    found = tuple(
        profiles.generate_profile(100 + i, task=TASK, difficulty=3, avoid_names=[])
        for i in range(n)
    )
    base = {"engine": "offline", "model": "offline", "agent_model": "offline"}
    return storm_run.StormProtocol(
        profiles=found,
        uncertainties=uncertainties,
        profile_access=access,
        turns=turns,
        seed=5,
        assistant=kind,
        **{**base, **kw},
    )


async def runner_for(db, settings, proto, embedder, *, judge_model=None, **kw):
    models = await storm_run.build_models(
        settings, proto, judge_model=judge_model, embedder=embedder
    )
    return storm_run.StormRunner(db, proto, settings, models, **kw), models


def rows(db, sql, params=()):
    return db.execute(sql, list(params)).fetchall()


def masked_profile(db, experiment_id: str, draw: int, uncertainty: int) -> UserProfile:
    """The user of a draw at an uncertainty, as the batch stored it (protocol and draw seed)."""
    config = json.loads(
        rows(db, "SELECT config FROM experiments WHERE id = ?", [experiment_id])[0][0]
    )
    base = UserProfile.model_validate(config["protocol"]["profiles"][draw])
    (seed,) = rows(
        db,
        "SELECT seed FROM experiment_draws WHERE experiment_id = ? AND draw = ?",
        [experiment_id, draw],
    )[0]
    return profiles.with_uncertainty(base, uncertainty, seed)


def attribute_lines(profile: UserProfile) -> tuple[list[str], list[str]]:
    """The ``section: key: value`` lines of the known and of the unknown attributes."""
    known: list[str] = []
    unknown: list[str] = []
    for section in ("base", "traits", "context", "task"):
        values = profile.task.attributes if section == "task" else getattr(profile, section)
        for key, value in values.items():
            line = f"{section}: {key.replace('_', ' ')}: {value}"
            (unknown if f"{section}.{key}" in profile.unknown else known).append(line)
    return known, unknown


# -- the assistant -----------------------------------------------------------------------------


def test_replies_are_cut_at_a_word_boundary_to_150_characters():
    long = "Thanks for the details about your phone. " * 6
    cut = assistant.fit_length(long)
    assert len(cut) <= 150
    assert cut.endswith("…")
    assert long.startswith(cut[:-1].rstrip())  # words kept whole, in order
    assert not cut[:-1].endswith(" ")
    assert assistant.fit_length("  Short   and fine. ") == "Short and fine."
    assert len(assistant.fit_length("x" * 400)) == 150


def test_the_plain_prompt_carries_the_masked_profile_only_with_access():
    p = profiles.generate_profile(3, task=TASK, difficulty=3, uncertainty=60)
    ctx = Context(
        agent="Assistant", persona=None, participants=[p.name, "Assistant"], recent=[],
        latest=None, trigger="new_message", step=1,
    )  # fmt: skip
    known, unknown = attribute_lines(p)
    assert known
    assert unknown
    without = json.dumps(assistant.assistant_messages(ctx, None))
    with_view = assistant.assistant_messages(ctx, p.masked())[0]["content"]
    assert "30 to 150 characters" in without
    assert not any(line in without for line in known + unknown)
    assert all(line in with_view for line in known)
    assert not any(line in with_view for line in unknown)


# -- a batch through the real openai client ----------------------------------------------------


@pytest.mark.asyncio
async def test_a_dyadic_batch_runs_end_to_end_against_the_loopback_server(db, embedder, llm_server):
    settings = server_settings(llm_server)
    proto = protocol(
        access=(False, True), engine="openai", model="fake-model", agent_model="fake-model"
    )
    runner, models = await runner_for(
        db, settings, proto, embedder, judge_model="fake-model", concurrency=1
    )
    try:
        progress = await runner.run()
    finally:
        await models.close()
    assert progress.finished == 2
    assert not progress.last_error
    user = masked_profile(db, runner.id, 0, 40)
    draws = rows(
        db, "SELECT participants, initiator, icebreaker FROM experiment_draws WHERE experiment_id = ?",
        [runner.id],
    )  # fmt: skip
    assert [(json.loads(a), b, c) for a, b, c in draws] == [
        ([user.name, "Assistant"], user.name, TASK)
    ]
    runs = rows(
        db, "SELECT condition, status, session_id FROM experiment_runs WHERE experiment_id = ?"
        " ORDER BY condition", [runner.id],
    )  # fmt: skip
    assert [(c, s) for c, s, _ in runs] == [
        ("u40/no-profile", "finished"),
        ("u40/profile", "finished"),
    ]
    for cond, _, sid in runs:
        speakers = [r[0] for r in rows(db, "SELECT speaker FROM messages WHERE session_id = ? ORDER BY id", [sid])]  # fmt: skip
        assert speakers == [user.name, "Assistant"] * 3  # the user opens; they alternate
        states = rows(
            db, "SELECT h.participant, h.turn FROM hidden_states h JOIN messages m"
            " ON m.session_id = h.session_id AND m.id = h.message_id WHERE h.session_id = ?"
            " ORDER BY h.turn", [sid],
        )  # fmt: skip
        assert states == [(user.name, 0), (user.name, 1), (user.name, 2)]
        design = rows(
            db, "SELECT experiment_id, user_name, profile_id, task, uncertainty, profile_access,"
            " assistant, assistant_model, user_model FROM storm_dialogues WHERE session_id = ?",
            [sid],
        )  # fmt: skip
        assert design == [
            (runner.id, user.name, user.id, TASK, 40, int(cond == "u40/profile"), "plain",
             "fake-model", "fake-model")
        ]  # fmt: skip
        pairs = rows(
            db, "SELECT pair FROM storm_judgements WHERE session_id = ? ORDER BY pair", [sid]
        )
        assert [p for (p,) in pairs] == [0, 1]  # 3 user turns: 2 turn pairs judged
        (calls,) = rows(db, "SELECT calls FROM sessions WHERE id = ?", [sid])[0]
        assert calls >= 3 + 3 + 2  # user, assistant and judge calls, counted in the session
    # What each assistant request carried: the known attributes with access, nothing without.
    known, unknown = attribute_lines(user)
    asked = [
        json.dumps(r["messages"], ensure_ascii=False)
        for r in llm_server.requests
        if r.get("_path") == "/v1/chat/completions"
        and r["messages"][0]["content"].startswith("You are an assistant helping one person")
    ]
    with_access = [a for a in asked if "Besides this chat" in a]
    without = [a for a in asked if "Besides this chat" not in a]
    assert len(with_access) == 3
    assert len(without) == 3
    for a in with_access:
        assert all(line in a for line in known)
        assert not any(line in a for line in unknown)
    for a in without:
        assert not any(line in a for line in known + unknown)
        assert user.description not in a


def test_the_command_runs_a_dyad_with_another_assistant_model_and_no_judge(tmp_path, llm_server):
    db_path = tmp_path / "s.db"
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["storm", "--task", TASK, "--difficulty", "3", "--uncertainty", "40", "--turns", "2",
         "--engine", "openai", "--base-url", llm_server.base_url, "--api-key", "k",
         "--model", "fake-model", "--agent-model", "helper-model", "--no-judge",
         "--db", str(db_path), "--no-progress"],
        out=out, err=err,
    )  # fmt: skip
    assert code == 0, err.getvalue()
    assert "--no-judge" in err.getvalue()
    assert "playground report --storm" in err.getvalue()
    chats = [r for r in llm_server.requests if r.get("_path") == "/v1/chat/completions"]
    by_model = {r["model"] for r in chats if r.get("max_tokens") != 1}
    assert by_model == {"fake-model", "helper-model"}
    assistant_asks = [
        r for r in chats if r["messages"][0]["content"].startswith("You are an assistant")
    ]
    assert assistant_asks
    assert all(r["model"] == "helper-model" for r in assistant_asks)
    names = [((r.get("response_format") or {}).get("json_schema") or {}).get("name") for r in chats]
    assert "PairAnswer" not in names  # no judge
    db = open_database(db_path)
    try:
        (_sid, calls) = rows(db, "SELECT id, calls FROM sessions")[0]
        assert rows(db, "SELECT assistant_model, user_model FROM storm_dialogues") == [
            ("helper-model", "fake-model")
        ]
        assert calls >= 4  # 2 user turns + 2 replies, over both clients
        assert rows(db, "SELECT COUNT(*) FROM storm_judgements")[0][0] == 0
    finally:
        db.close()
    assert out.getvalue().strip().splitlines()[-1].startswith("s")  # the batch id, last


# -- an offline batch, interrupted and resumed ---------------------------------------------------


@pytest.mark.asyncio
async def test_an_interrupted_offline_batch_resumes_losing_nothing_and_running_nothing_twice(
    db, embedder
):
    settings = offline_settings()
    proto = protocol(n=2, uncertainties=(0, 40), turns=2)
    runner, models = await runner_for(db, settings, proto, embedder, concurrency=1)

    def stop_in_the_third(p) -> None:
        if p.finished == 2 and p.running == 1:
            runner.cancel()

    runner.on_progress = stop_in_the_third
    await runner.run()  # returns once the dialogue in flight has ended `interrupted`
    status = dict(
        rows(
            db,
            "SELECT draw || ' ' || condition, status FROM experiment_runs WHERE experiment_id = ?",
            [runner.id],
        )
    )
    assert sorted(status.values()) == ["finished", "finished", "interrupted"]
    before = dict(
        rows(
            db,
            "SELECT session_id, (SELECT COUNT(*) FROM messages m WHERE m.session_id = r.session_id)"
            " FROM experiment_runs r WHERE status = 'finished'",
        )
    )
    again, models2 = await runner_for(db, settings, proto, embedder, concurrency=2)
    try:
        progress = await again.run()
    finally:
        await models.close()
        await models2.close()
    assert again.id == runner.id
    assert sum(c.skipped for c in progress.conditions.values()) == 2
    final = rows(
        db, "SELECT draw, condition, status, attempts, session_id FROM experiment_runs"
        " WHERE experiment_id = ? ORDER BY draw, condition", [runner.id],
    )  # fmt: skip
    assert [(d, c, s) for d, c, s, _, _ in final] == [
        (0, "u0/no-profile", "finished"), (0, "u40/no-profile", "finished"),
        (1, "u0/no-profile", "finished"), (1, "u40/no-profile", "finished"),
    ]  # fmt: skip
    assert sorted(a for *_, a, _ in final) == [1, 1, 1, 2]  # only the interrupted one ran again
    sessions = rows(db, "SELECT id FROM sessions WHERE experiment_id = ?", [runner.id])
    assert len(sessions) == 4  # the interrupted attempt's session is gone: one per dialogue
    after = dict(
        rows(
            db,
            "SELECT id, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) FROM sessions s",
        )
    )
    assert all(after[sid] == n for sid, n in before.items())  # finished ones untouched
    assert rows(db, "SELECT COUNT(*) FROM storm_dialogues WHERE experiment_id = ?", [runner.id])[0][0] == 4  # fmt: skip


# -- the Inner Thoughts assistant ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_an_inner_thoughts_assistant_runs_offline_with_the_masked_profile_as_memories(
    db, embedder
):
    settings = offline_settings()
    proto = protocol(access=(True,), uncertainties=(60,), turns=3, kind="inner-thoughts")
    runner, models = await runner_for(db, settings, proto, embedder)
    try:
        progress = await runner.run()
    finally:
        await models.close()
    assert progress.finished == 1
    assert not progress.last_error
    (sid, status) = rows(db, "SELECT id, status FROM sessions")[0]
    assert status == "finished"
    user = masked_profile(db, runner.id, 0, 60)
    said = rows(db, "SELECT speaker FROM messages WHERE session_id = ? ORDER BY id", [sid])
    assert [s for (s,) in said].count(user.name) == 3
    assert said[0] == (user.name,)
    assert rows(db, "SELECT policy FROM participants WHERE name = 'Assistant'") == [
        ("inner-thoughts",)
    ]
    assert rows(db, "SELECT COUNT(*) FROM thoughts WHERE agent = 'Assistant'")[0][0] > 0
    assert rows(db, "SELECT assistant, profile_access FROM storm_dialogues") == [
        ("inner-thoughts", 1)
    ]
    memories = " | ".join(
        t for (t,) in rows(db, "SELECT text FROM memories WHERE agent = 'Assistant'")
    )
    known, unknown = attribute_lines(user)
    for line in known:
        assert line.split(": ", 1)[1] in memories
    for line in unknown:
        assert line.split(": ", 1)[1] not in memories


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--engine", "gpt"], "--engine:"),
        (["--uncertainty", "30"], "--uncertainty: 30 is not an uncertainty level"),
        (["--uncertainties", "0,forty"], "--uncertainties: 'forty' is not an uncertainty level"),
        (["--profiles-dir", "/nonexistent/users"], "--profiles-dir: /nonexistent/users is not a directory"),
        (["--assistant", "clever"], "--assistant: 'clever' is not an assistant"),
        (["--turns", "0"], "--turns: 0 is out of range (1 … 200)"),
        (["--profile-access-modes", "sometimes"], "--profile-access-modes: 'sometimes'"),
        (["--reply-limit", "trim"], "--reply-limit: 'trim': choose cut or keep"),
        (["--user-speak-probability", "2"], "--user-speak-probability: 2 is out of range (0 … 1)"),
        (["--engine", "offline", "--agent-model", "m"], "--agent-model: the offline engine has no models"),
        (["--engine", "openai", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
          "--timeout", "3"], "127.0.0.1:9"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, flags, says):
    db_path = tmp_path / "s.db"
    line = cli_refusal("storm", "--db", str(db_path), *flags, code=2)
    assert says in line, line
    assert not db_path.exists()


def test_a_bad_profile_file_is_named(tmp_path):
    users = tmp_path / "users"
    users.mkdir()
    good = profiles.generate_profile(1, task=TASK, difficulty=2)
    (users / "a.toml").write_text(profiles.dump_profile(good), encoding="utf-8")
    (users / "b.toml").write_text('id = "b"\nname = "Bo Bo"\n', encoding="utf-8")
    line = cli_refusal(
        "storm", "--profiles-dir", str(users), "--db", str(tmp_path / "s.db"), code=2
    )
    assert "b.toml" in line, line


# -- export and import keep a STORM dialogue whole ------------------------------------------------


def test_export_and_import_carry_the_dialogue_row_hidden_states_and_judgements(tmp_path):
    source, copy, dump = tmp_path / "s.db", tmp_path / "copy.db", tmp_path / "s.jsonl"
    err = io.StringIO()
    code = cli.main(
        ["storm", "--task", TASK, "--difficulty", "2", "--uncertainty", "40", "--turns", "2",
         "--engine", "offline", "--db", str(source), "--no-progress"],
        out=io.StringIO(), err=err,
    )  # fmt: skip
    assert code == 0, err.getvalue()
    db = open_database(source)
    try:
        (sid,) = rows(db, "SELECT id FROM sessions")[0]
        with db.atomic():  # the offline engine has no judge: one judgement written by hand
            db.execute(
                "INSERT INTO storm_judgements (session_id, judge, pair, clarity_change,"
                " satisfaction_change, explanation, created_at)"
                " VALUES (?, 'judge:m', 0, 'improve', 'not change', 'clearer', '2026-01-01')",
                [sid],
            )
        want = {
            t: rows(db, f"SELECT * FROM {t} WHERE session_id = ? ORDER BY 2, 3", [sid])
            for t in ("storm_dialogues", "storm_judgements", "hidden_states")
        }
        (profile,) = rows(db, "SELECT profile FROM participants WHERE kind = 'simulated'")
    finally:
        db.close()
    assert want["storm_dialogues"]
    assert len(want["hidden_states"]) == 2
    assert profile[0]
    assert cli.main(["export", "--db", str(source), "--output", str(dump), "--all"]) == 0
    assert cli.main(["import", str(dump), "--db", str(copy)], out=io.StringIO()) == 0
    db = open_database(copy)
    try:
        for table, expected in want.items():
            assert rows(db, f"SELECT * FROM {table} ORDER BY 2, 3") == expected, table
        (copied,) = rows(db, "SELECT profile FROM participants WHERE kind = 'simulated'")
        assert json.loads(copied[0]) == json.loads(profile[0])
    finally:
        db.close()


def test_looking_back_at_the_opening_turn_says_the_simulated_user_opened(tmp_path):
    from playground.history.snapshot import SessionHistory

    source = tmp_path / "s.db"
    code = cli.main(
        ["storm", "--task", TASK, "--turns", "1", "--engine", "offline", "--db", str(source),
         "--no-progress"],
        out=io.StringIO(), err=io.StringIO(),
    )  # fmt: skip
    assert code == 0
    db = open_database(source)
    try:
        (sid, user) = rows(db, "SELECT session_id, user_name FROM storm_dialogues")[0]
        history = SessionHistory.load(db, sid)
        opening, reply = history.at_message(1), history.at_message(2)
    finally:
        db.close()
    assert opening.origin == "opening"
    assert opening.speaker == user
    assert f"{user}'s opening turn" in opening.describe()
    assert reply.origin == "trigger"  # the assistant's answer came from a trigger
