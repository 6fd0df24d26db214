"""``pg.simulate``, ``pg.experiment`` and ``pg.storm`` on the offline engine into real SQLite
files: blocking in plain code, a task inside a running loop, and their results the same as
``playground show --json`` shows."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

import playground as pg
from playground import errors
from playground.cli import main as cli


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _shown(db: Path, session_id: str) -> dict[str, Any]:
    code, text, err = _cli("show", session_id, "--db", str(db), "--json")
    assert code == 0, err
    return json.loads(text)


def _assert_as_shown(result: pg.SessionResult, db: Path) -> None:
    data = _shown(db, result.session_id)
    s = data["session"]
    assert result.session_id == s["id"]
    assert result.status == s["status"]
    assert result.end_reason == s["end_reason"]
    assert result.condition == s["condition"]
    assert result.messages == len(data["messages"])
    assert result.participants == tuple(p["name"] for p in data["participants"])
    for field in ("calls", "prompt_tokens", "completion_tokens", "dropped", "cut", "retries"):
        assert getattr(result.usage, field) == s[field], field


def test_simulate_blocks_without_a_loop_and_returns_what_show_json_shows(tmp_path: Path) -> None:
    db = tmp_path / "api.db"
    result = pg.simulate(agents=3, turns=5, seed=7, db=db)
    assert isinstance(result, pg.SessionResult)
    assert result.status == "finished"
    assert result.messages == 5
    assert len(result.participants) == 3
    assert "max turns 5" in (result.end_reason or "")
    assert result.usage.calls == 0  # the offline engine: no model calls
    _assert_as_shown(result, db)


def test_simulate_is_the_command_s_run_with_its_defaults(tmp_path: Path) -> None:
    """The same arguments through the API and the command give the same conversation."""
    result = pg.simulate(agents=3, turns=4, seed=3, db=tmp_path / "api.db")
    assert not isinstance(result, asyncio.Task)
    code, out, err = _cli(
        "simulate", "--agents", "3", "--turns", "4", "--seed", "3", "--engine", "offline",
        "--quiet", "--db", str(tmp_path / "cli.db"),
    )  # fmt: skip
    assert code == 0, err
    by_api = _shown(tmp_path / "api.db", result.session_id)
    by_cli = _shown(tmp_path / "cli.db", out.strip().splitlines()[-1])
    assert [p["name"] for p in by_api["participants"]] == [
        p["name"] for p in by_cli["participants"]
    ]
    assert by_api["messages"][0]["text"] == by_cli["messages"][0]["text"]  # the icebreaker
    assert by_api["session"]["config"] == by_cli["session"]["config"]


@pytest.mark.asyncio
async def test_in_a_running_loop_simulate_returns_a_task_to_await(tmp_path: Path) -> None:
    db = tmp_path / "loop.db"
    started = pg.simulate(agents=2, turns=3, seed=1, db=db)  # no "asyncio.run() cannot be called"
    assert isinstance(started, asyncio.Task)
    result = await started
    assert result.status == "finished"
    assert result.messages == 3
    _assert_as_shown(result, db)


@pytest.mark.asyncio
async def test_await_simulate_directly_in_a_running_loop(tmp_path: Path) -> None:
    task = pg.simulate(agents=2, turns=2, seed=2, db=tmp_path / "await.db")
    assert isinstance(task, asyncio.Task)  # a loop runs: the task running it
    result = await task
    assert result.messages == 2


def test_personas_built_in_code_are_seated(tmp_path: Path) -> None:
    ada = pg.persona(
        "Ada",
        ["I write compilers for a living.", "I keep bees on my roof."],
        memories=[{"kind": "interest", "text": "honey harvests", "weight": 0.8}],
    )
    bo = pg.Persona(id="bo", name="Bo", facts=["I restore old bicycles.", "I grew up by the sea."])
    db = tmp_path / "code.db"
    result = pg.simulate([ada, bo], turns=3, db=db, icebreaker="What did you do this weekend?")
    assert not isinstance(result, asyncio.Task)  # no loop runs: the result itself
    assert result.participants == ("Ada", "Bo")
    data = _shown(db, result.session_id)
    assert data["messages"][0]["text"] == "What did you do this weekend?"
    assert any(m["text"] == "I keep bees on my roof." for m in data["memories"])
    _assert_as_shown(result, db)


def test_the_default_personas_load_from_the_personas_directory() -> None:
    library = pg.default_personas()
    assert len(library) >= 4
    assert all(isinstance(p, pg.Persona) for p in library)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: pg.persona("Ada Lovelace", ["x"]), "persona 'Ada Lovelace': name:"),
        (lambda: pg.persona("Ada", []), "persona 'Ada': facts:"),
        (
            lambda: pg.persona("Ada", ["x"], memories=[{"kind": "x", "text": "y"}]),
            "persona 'Ada': memories.0.kind:",
        ),
        (lambda: pg.simulate(turns=0), "turns: "),
        (lambda: pg.simulate(agents=20), "agents: 20 asked"),
        (lambda: pg.simulate(preset="shy"), "preset: unknown preset 'shy'"),
        (lambda: pg.simulate([]), "personas: give at least one persona"),
        (
            lambda: pg.experiment(["chatty"]),  # type: ignore[list-item]  # an unknown one
            "conditions: unknown condition 'chatty'",
        ),
        (lambda: pg.experiment(conversations=0), "conversations: must be at least 1"),
        (lambda: pg.storm(uncertainties=[50]), "uncertainties: "),
        (lambda: pg.storm(difficulty=9), "difficulty: must be 1 to 5"),
        (lambda: pg.storm(agent_model="gpt-4o"), "agent_model: the offline engine has no models"),
    ],
    ids=[
        "name-with-space",
        "no-facts",
        "memory-kind",
        "turns-0",
        "too-many-agents",
        "unknown-preset",
        "no-personas",
        "unknown-condition",
        "no-conversations",
        "bad-uncertainty",
        "bad-difficulty",
        "offline-model",
    ],
)
def test_bad_input_is_a_clear_error_naming_the_keyword(
    call: Any, says: str, tmp_path: Path
) -> None:
    with pytest.raises(errors.PlaygroundError) as caught:
        call()
    assert str(caught.value).startswith(says), str(caught.value)


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    with pytest.raises(errors.SettingsError):
        pg.simulate(turns=0, db=db)
    assert not db.exists()


def test_settings_objects_are_taken_and_keywords_override_them(tmp_path: Path) -> None:
    settings = pg.Settings(room=pg.RoomSettings(max_turns=3, max_silent_steps=2))
    db = tmp_path / "settings.db"
    result = pg.simulate(agents=2, settings=settings, seed=5, db=db)
    assert not isinstance(result, asyncio.Task)  # no loop runs: the result itself
    config = _shown(db, result.session_id)["session"]["config"]
    assert config["room"]["max_turns"] == 3
    assert config["room"]["max_silent_steps"] == 2
    assert config["engine"]["seed"] == 5
    assert result.messages <= 3


def test_experiment_runs_every_condition_on_the_same_draws(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    result = pg.experiment(
        ["inner-thoughts", "next-speaker"], conversations=1, agents=3, turns=4, db=db
    )
    assert isinstance(result, pg.BatchResult)
    assert result.kind == "experiment"
    assert [(r.draw, r.condition) for r in result.runs] == [
        (0, "inner-thoughts"),
        (0, "next-speaker"),
    ]
    assert all(r.status == "finished" for r in result.runs)
    for s in result.sessions:
        _assert_as_shown(s, db)
    assert set(result.messages_by_condition()) == {"inner-thoughts", "next-speaker"}
    code, text, err = _cli(
        "experiments", result.batch_id, "--runs", "--db", str(db), "--format", "json"
    )
    assert code == 0, err
    assert {r["session_id"] for r in json.loads(text)["runs"]} == {
        s.session_id for s in result.sessions
    }
    again = pg.experiment(
        ["inner-thoughts", "next-speaker"], conversations=1, agents=3, turns=4, db=db
    )
    assert not isinstance(again, asyncio.Task)  # no loop runs: the result itself
    assert again.batch_id == result.batch_id
    assert again.skipped == 2  # resumed: nothing run twice


def test_storm_runs_a_dialogue_offline(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    user = pg.generate_profiles(1, seed=4, task="Buy a smartphone")[0]
    result = pg.storm([user], turns=2, db=db)
    assert isinstance(result, pg.BatchResult)
    assert result.kind == "storm"
    assert [r.condition for r in result.runs] == ["u0/no-profile"]
    (session,) = result.sessions
    assert session.status == "finished"
    assert user.name in session.participants
    _assert_as_shown(session, db)


def test_pg_storm_is_the_function_also_once_the_storm_package_is_imported() -> None:
    import sys

    from playground.storm import run as storm_run  # the subpackage, imported as ever

    assert callable(pg.storm)
    assert pg.storm.__name__ == "storm_async"  # the wrapped coroutine function's name
    assert sys.modules["playground.storm.run"] is storm_run
    assert sys.modules["playground.storm"].__name__ == "playground.storm"


def test_an_experiment_seats_personas_built_in_code(tmp_path: Path) -> None:
    cast = [
        pg.persona("Ada", ["I write compilers for a living.", "I keep bees on my roof."]),
        pg.persona("Bo", ["I restore old bicycles.", "I grew up by the sea."]),
        pg.persona("Cy", ["I teach chemistry.", "I run marathons in the winter."]),
    ]
    db = tmp_path / "cast.db"
    result = pg.experiment(
        ["inner-thoughts"], conversations=1, agents=2, turns=3, personas=cast, db=db
    )
    assert not isinstance(result, asyncio.Task)  # no loop runs: the result itself
    (session,) = result.sessions
    assert set(session.participants) <= {"Ada", "Bo", "Cy"}
    assert len(session.participants) == 2
    _assert_as_shown(session, db)
    with pytest.raises(
        errors.SettingsError, match=r"^agents: 4 asked but the personas given has 3"
    ):
        pg.experiment(["inner-thoughts"], conversations=1, personas=cast, db=db)
