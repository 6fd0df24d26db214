"""``./test --quick`` leaves out every test that starts a real model server, a browser, an X
server or any other process, and the markers that do it are declared and assigned centrally.

The markers come from tests/support/tiers.py (by each module's source and its fixtures); this
file reads the test files its own way (their syntax trees: imports, fixture parameters, calls)
and checks that nothing it finds is in the quick tier's collection.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.support.cli import run_python
from tests.support.tiers import KINDS, QUICK

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
#: Modules whose import means a test starts something outside its process.
OUTSIDE_MODULES = {
    "subprocess": "subprocess",
    "multiprocessing": "subprocess",
    "tests.support.faults": "subprocess",
    "tests.support.tls": "subprocess",
    "testbed.real_server": "real_server",
    "tests.support.browser": "browser",
    "playwright": "browser",
}
#: Names (imported, called or taken as fixtures) that do the same.
OUTSIDE_NAMES = {
    "run_process": "subprocess",
    "run_python": "subprocess",
    "create_subprocess_exec": "subprocess",
    "create_subprocess_shell": "subprocess",
    "Popen": "subprocess",
    "real_server": "real_server",
    "llama_cpp_server": "real_server",
    "chromium": "browser",
    "x_screen": "x_server",
}


def outside_work(path: Path) -> set[str]:
    """What the test file at ``path`` starts outside the test process, read from its syntax."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
            found |= {OUTSIDE_NAMES[a.name] for a in node.names if a.name in OUTSIDE_NAMES}
        else:
            modules = []
        for m in modules:
            for known, kind in OUTSIDE_MODULES.items():
                if m == known or m.startswith(known + "."):
                    found.add(kind)
        if isinstance(node, ast.arg) and node.arg in OUTSIDE_NAMES:
            found.add(OUTSIDE_NAMES[node.arg])
        if isinstance(node, ast.Attribute) and node.attr in OUTSIDE_NAMES:
            found.add(OUTSIDE_NAMES[node.attr])
        if isinstance(node, ast.Name) and node.id in OUTSIDE_NAMES:
            found.add(OUTSIDE_NAMES[node.id])
    return found


def collected(*args: str) -> set[str]:
    """The files of the tests ``pytest --collect-only *args`` selects."""
    got = run_python(
        "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *args, "tests", timeout=900
    )
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    return {line.split("::")[0] for line in got.stdout.splitlines() if "::" in line}


def test_no_test_that_starts_something_outside_is_in_the_quick_tier() -> None:
    quick = collected("-m", QUICK)
    outside = {
        str(p.relative_to(ROOT)): kinds
        for p in sorted(TESTS.rglob("test_*.py"))
        if (kinds := outside_work(p))
    }
    assert "tests/llm/test_real_server.py" in outside  # the reading finds what it must
    assert "tests/ui/test_window_fit.py" in outside
    assert sorted(f"{f}: {sorted(outside[f])}" for f in quick if f in outside) == []
    # …and the tier is still the unit tests, not nothing
    assert {"tests/kernel/test_settings.py", "tests/inner_thoughts/test_participation.py"} <= quick


def test_the_quick_flag_selects_the_declared_markers() -> None:
    """``./test --quick`` passes :data:`QUICK`; every marker in it is declared (--strict-markers
    would stop the run on one that is not)."""
    script = (ROOT / "test").read_text(encoding="utf-8")
    assert f'-m "{QUICK}"' in script
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "pytest"
    ]["ini_options"]["markers"]
    names = {line.split(":")[0] for line in declared}
    assert set(KINDS) <= names
