"""The engine never imports Qt or the UI, and runs with Qt made unimportable (the layers and
the import cycles: tests/project/test_layers.py)."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BANNED = {"ui", "PySide6", "shiboken6", "qasync"}


def test_playground_imports_no_qt_or_ui():
    offenders = []
    for path in (REPO / "playground").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [
                f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in BANNED
            ]
    assert offenders == []


def test_a_headless_simulation_runs_with_qt_blocked(tmp_path):
    code = f"""
import sys
sys.modules["PySide6"] = None
sys.modules["qasync"] = None
from playground.cli.main import main
raise SystemExit(main(["simulate", "--agents", "2", "--turns", "2", "--engine", "offline", "--db", {str(tmp_path / "h.db")!r}]))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    assert "[ 2/2]" in proc.stdout
