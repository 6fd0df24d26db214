"""The commands that never talk to a model start without the model client, torch or plotting.

Issue 35 asks them to start in ≤ 0.5 s (bench/bench_cli_start.py measures it; docs/benchmarks.md
has the figures). A time would be a flaky test; what makes the time is which modules a command
imports, so that is what these tests check: each command runs as its own process
(``python -m playground``, from the repository) on a real recorded database, and reports the
modules it has loaded when it exits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO, run_python
from tests.support.timed import SID, write_timed_session

#: What only model calls, embeddings, statistics or plots need (and pandas, which sqlite-utils
#: would load on its own): none of it may load to list, show or export sessions.
HEAVY = (
    "openai",
    "httpx",
    "httpx2",
    "aiohttp",
    "torch",
    "transformers",
    "sentence_transformers",
    "keybert",
    "scipy",
    "sklearn",
    "krippendorff",
    "matplotlib",
    "pandas",
    "rich",
    "PySide6",
    "playground.factory",
    "playground.llm.client",
    "playground.room.room",
    "playground.embedding.minilm",
)
#: Run in the child process: the command as ``python -m playground`` runs it, then, at exit, the
#: loaded modules written as JSON to the file named by the first argument.
PROBE = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
def _write():
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
atexit.register(_write)
sys.argv[0] = "playground"
runpy.run_module("playground", run_name="__main__", alter_sys=True)
"""


def loaded_by(tmp_path: Path, *argv: str, code: int = 0) -> set[str]:
    """Run ``playground *argv`` in its own process, which must exit with ``code``; the modules it
    had loaded at exit."""
    out = tmp_path / "modules.json"
    got = run_python("-c", PROBE, str(out), *argv)
    assert got.returncode == code, got.stderr
    return set(json.loads(out.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("start") / "recorded.db"
    write_timed_session(path)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["sessions"],
        ["show", SID],
        ["show", "--json", "--timings", SID],
        ["export", SID],
        ["experiments"],
        ["study", "list"],
        ["rate", "plan", "list"],
        ["features", "--help"],
    ],
    ids=lambda argv: " ".join(a for a in argv if a != SID),
)
def test_a_command_without_a_model_loads_no_heavy_module(
    tmp_path: Path, recorded: Path, argv: list[str]
) -> None:
    db = [] if argv == ["--help"] else ["--db", str(recorded)]
    modules = loaded_by(tmp_path, *argv, *db)
    assert "playground.cli.main" in modules  # the probe ran the command line
    assert sorted(set(HEAVY) & modules) == []


def test_the_report_loads_no_model_client_torch_or_plotting(tmp_path: Path, recorded: Path) -> None:
    """The ratings report computes its statistics (scipy) but calls no model and draws nothing."""
    modules = loaded_by(tmp_path, "report", "--db", str(recorded))
    assert "playground.cli.report" in modules
    model_or_plots = {"openai", "httpx2", "aiohttp", "torch", "matplotlib", "pandas", "PySide6"}
    assert sorted(model_or_plots & modules) == []


def test_importing_the_package_loads_nothing_heavy() -> None:
    """``import playground`` (the notebook API's entry) stays light: its parts load when used."""
    code = (
        "import json, sys; import playground;"
        f" print(json.dumps(sorted(set({list(HEAVY)!r}) & set(sys.modules))))"
    )
    got = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert json.loads(got.stdout) == []


def test_a_command_that_simulates_does_load_the_engine(tmp_path: Path, recorded: Path) -> None:
    """The probe can see a heavy import: ``judge`` with an unreachable server loads the client."""
    modules = loaded_by(
        tmp_path,
        "judge",
        SID,
        "--db",
        str(recorded),
        "--engine",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--api-key",
        "k",
        "--max-retries",
        "0",
        code=1,  # nothing listens there
    )
    assert "openai" in modules
