"""The command line: simulate, sessions, show --json, and clear errors."""

import io
import json
import sqlite3

import pytest

from playground.cli import main as cli
from playground.storage import open_database
from tests.support.timed import SID, THOUGHT, write_timed_session


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    db = tmp_path_factory.mktemp("cli") / "cli.db"
    code, out, err = run(
        "simulate", "--agents", "3", "--turns", "5", "--seed", "7", "--db", str(db)
    )
    return db, code, out, err


def test_simulate_prints_transcript_thoughts_scores_and_ends_with_the_session_id(simulated):
    _db, code, out, err = simulated
    assert code == 0, err
    lines = out.strip().splitlines()
    assert "offline engine" in lines[0]
    assert sum(1 for line in lines if line.startswith("[")) == 5
    assert any("thought #" in line and "score" in line for line in lines)
    session_id = lines[-1]
    assert len(session_id) == 20
    assert session_id.count("-") == 2
    assert "step 1" in err  # progress goes to stderr


def test_sessions_lists_it(simulated):
    db, _, out, _ = simulated
    code, listing, _ = run("sessions", "--db", str(db))
    assert code == 0
    assert out.strip().splitlines()[-1] in listing
    assert "finished" in listing


def test_show_json_has_all_parts_with_scores(simulated):
    db, _, out, _ = simulated
    code, text, _ = run("show", out.strip().splitlines()[-1], "--db", str(db), "--json")
    assert code == 0
    data = json.loads(text)
    assert {"session", "participants", "messages", "thoughts", "decisions"} <= set(data)
    assert len(data["messages"]) == 5
    scored = [t for t in data["thoughts"] if t["score"] is not None]
    assert scored
    assert all(t["distribution"] and t["method"] == "offline-heuristic" for t in scored)


def test_show_text(simulated):
    db, _, out, _ = simulated
    code, text, _ = run("show", out.strip().splitlines()[-1], "--db", str(db))
    assert code == 0
    assert "read as:" in text
    assert "thought #" in text


def test_show_gives_each_trigger_s_total_and_critical_path_and_with_timings_its_stages(tmp_path):
    db = tmp_path / "timed.db"
    write_timed_session(db)
    code, text, err = run("show", SID, "--db", str(db))
    assert code == 0, err
    section = text.split("Time per trigger (2 timed):\n")[1].splitlines()
    assert section[:2] == [
        "  step 1 · new message #1 · 1.83 s · posted #2 · critical path: interpretation 0.41"
        " → Ana System-2 thoughts 0.40 → Ana evaluation 0.41 → floor 0.00 → Ana articulation 0.40",
        "  step 2 · a pause after #2 · 0.52 s · everyone stayed silent · critical path:"
        " turn type 0.12 → Bo decision 0.40",
    ]
    assert "waited" not in text
    code, full, err = run("show", SID, "--db", str(db), "--timings")
    assert code == 0, err
    lines = full.splitlines()
    table = lines[lines.index(section[0]) + 1 :]
    assert table[0].split() == ["agent", "stage", "ready", "started", "waited", "took", "in", "calls", "calls", "detail"]  # fmt: skip
    assert table[3].split()[:10] == ["*", "Ana", "System-2", "thoughts", "0.41", "0.62", "+0.21", "0.40", "0.39", "1"]  # fmt: skip
    assert THOUGHT[:40] in table[4]
    assert "  * on the critical path · seconds after the trigger fired" in full


def test_show_json_has_the_timings_as_recorded(tmp_path):
    db = tmp_path / "timed.db"
    write_timed_session(db)
    code, text, err = run("show", SID, "--db", str(db), "--json")
    assert code == 0, err
    timings = json.loads(text)["timings"]
    assert [(t["step"], t["trigger"], t["posted"], t["total"]) for t in timings] == [
        (1, "new_message", 2, 1.83),
        (2, "pause", None, 0.52),
    ]
    waited = timings[0]["stages"][2]
    assert (waited["agent"], waited["stage"], waited["ready"], waited["started"]) == (
        "Ana", "System-2 thoughts", 0.41, 0.62,
    )  # fmt: skip
    assert timings[0]["stages"][3]["detail"] == THOUGHT


def test_show_of_a_session_without_timings_says_so_only_when_asked(tmp_path):
    db = tmp_path / "timed.db"
    write_timed_session(db)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM events WHERE kind = 'trigger_timed'")
    _, text, _ = run("show", SID, "--db", str(db))
    assert "Time per trigger" not in text
    _, text, _ = run("show", SID, "--db", str(db), "--timings")
    assert "No trigger of this session was timed." in text
    _, text, _ = run("show", SID, "--db", str(db), "--json")
    assert json.loads(text)["timings"] == []


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["simulate", "--agents", "20", "--engine", "offline"], "--agents: 20 asked"),
        (["simulate", "--turns", "0"], "--turns: 0 is out of range (1 … 10000)"),
        (["show", "nope"], "no session 'nope'"),
        (
            [
                "simulate",
                "--engine",
                "openai",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--turns",
                "3",
            ],
            "cannot reach http://127.0.0.1:9/v1",
        ),
    ],
    ids=["too_many_agents", "zero_turns", "unknown_session", "unreachable_server"],
)
def test_errors_are_one_clear_line(tmp_path, argv, fragment):
    open_database(tmp_path / "e.db").close()  # an existing, empty session database
    code, _, err = run(*argv, "--db", str(tmp_path / "e.db"))
    assert code == (2 if "out of range" in fragment else 1)  # a usage error: argparse's 2
    assert fragment in err
    assert "Traceback" not in err


def test_corrupt_persona_directory_is_named(tmp_path):
    (tmp_path / "x.toml").write_text('name = "X"\n')
    code, _, err = run("simulate", "--personas", str(tmp_path), "--db", str(tmp_path / "e.db"))
    assert code == 1
    assert "x.toml: facts: missing" in err
