"""Long commands show their progress on standard error as ``experiment`` does
(:mod:`playground.cli.progress`): a line per step when standard error is a file (here a buffer),
a bar on a terminal, nothing with ``--no-progress``; standard output keeps only the results."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from playground.cli.progress import ProgressBar
from testbed.llm_server import FakeLLMServer
from tests.support.cli import run_cli
from tests.support.timed import SID, write_timed_session

STEP = re.compile(r"^\[\d+/\d+\] ")


def steps(err: str) -> list[str]:
    """The progress lines of standard error."""
    return [line for line in err.splitlines() if STEP.match(line)]


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "recorded.db"
    write_timed_session(path)
    return path


def test_features_counts_texts_and_sessions_and_keeps_json_clean(recorded: Path) -> None:
    code, out, err = run_cli("features", "--db", str(recorded), "--format", "json")
    assert code == 0, err
    lines = steps(err)
    assert any(re.match(r"\[\d+/\d+\] texts embedded$", line) for line in lines), err
    assert lines[-1] == "[1/1] sessions"
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == [SID]

    code, out, err = run_cli("features", "--db", str(recorded), "--recompute", "--no-progress")
    assert code == 0, err
    assert steps(err) == []
    assert SID in out


def test_judge_counts_the_sessions_judged(recorded: Path, llm_server: FakeLLMServer) -> None:
    flags = ["--base-url", llm_server.base_url, "--api-key", "k", "--model", "fake-model"]
    code, out, err = run_cli("judge", SID, *flags, "--db", str(recorded))
    assert code == 0, err
    assert steps(err) == ["[1/1] sessions judged"]
    assert "Judged 1 of 1 sessions as judge:fake-model" in out
    assert not any(STEP.match(line) and "sessions judged" in line for line in out.splitlines())

    code, _, err = run_cli("judge", SID, *flags, "--db", str(recorded), "--no-progress")
    assert code == 0, err
    assert steps(err) == []


def test_import_counts_the_file_s_conversations(recorded: Path, tmp_path: Path) -> None:
    exported = tmp_path / "export.jsonl"
    code, _, err = run_cli("export", SID, "--db", str(recorded), "--output", str(exported))
    assert code == 0, err
    target = tmp_path / "target.db"
    code, out, err = run_cli("import", str(exported), "--db", str(target))
    assert code == 0, err
    assert steps(err) == ["[1/1] conversations"]
    assert out.splitlines() == [f"imported {SID} as {SID}", "1 imported, 0 already in the database"]

    code, out, err = run_cli("import", str(exported), "--db", str(target), "--no-progress")
    assert code == 0, err
    assert steps(err) == []
    assert out.splitlines()[-1] == "0 imported, 1 already in the database"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_replaces_the_lines() -> None:
    err = _Terminal()
    with ProgressBar(err, enabled=True) as bar:
        bar.advance("sessions judged", 1, 2)
        bar.advance("sessions judged", 2, 2)
    shown = err.getvalue()
    assert "sessions judged" in shown
    assert "2/2" in shown
    assert steps(shown) == []


def test_disabled_shows_nothing_anywhere() -> None:
    for err in (io.StringIO(), _Terminal()):
        with ProgressBar(err, enabled=False) as bar:
            bar.advance("conversations", 1, 1)
        assert err.getvalue() == ""
