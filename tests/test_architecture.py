"""The engine never imports Qt or the UI, and runs with Qt made unimportable."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
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


#: Cycles that exist on purpose (lazy imports inside functions), with the reason.
KNOWN_CYCLES = {
    # export.py's import entry points hand over to importer.py, which reads the export layout.
    frozenset({"playground.transfer.export", "playground.transfer.importer"}),
}


def _import_graph() -> dict[str, set[str]]:
    """Module → the playground modules it imports at run time (``if TYPE_CHECKING:`` excluded,
    imports inside functions included: they run too)."""
    paths = {}
    for path in (REPO / "playground").rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body
            for n in ast.walk(stmt)
        }
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def test_no_import_cycles_in_the_engine():
    graph = _import_graph()
    cycles = []

    def reaches(start: str, goal: str) -> list[str] | None:
        seen, todo = {start}, [[start]]
        while todo:
            path = todo.pop()
            for nxt in graph[path[-1]]:
                if nxt == goal:
                    return [*path, nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append([*path, nxt])
        return None

    for module, imported in graph.items():
        for other in imported:
            back = reaches(other, module)
            if back and frozenset(back) not in KNOWN_CYCLES:
                cycles.append(" → ".join([module, *back]))
    assert cycles == []
    # The room holds state and one step; the loops that drive it depend on it, never the reverse.
    assert "playground.room.room" in graph["playground.room.loops"]
    assert reaches("playground.room.room", "playground.room.loops") is None
