"""The package map holds: no import cycles, and every package imports only its own layer and below.

Every import counts: module level, inside functions (they run too) and under ``if
TYPE_CHECKING:`` (a type-only import is the same coupling, and hiding cycles there is how they
grow). A failure names each offending ``module → module`` import. The layers are described in
docs/architecture.md.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

KERNEL = {
    "errors",
    "clock",
    "settings",
    "urls",
    "workers",
    "gc_tuning",
    "terminal_text",
    "domain",
    "events",
}
INFRA = {"llm", "embedding", "storage", "personas", "web"}
ENGINE = {"cognition", "inner_thoughts", "room"}

#: playground's top-level package or module → what it may import besides itself. Lower layers
#: first; features may import each other only where listed.
MAY_IMPORT: dict[str, set[str]] = {
    **{name: KERNEL for name in KERNEL},
    "llm": KERNEL,
    "storage": KERNEL,
    "personas": KERNEL,
    "web": KERNEL,
    "embedding": KERNEL | {"llm"},
    "cognition": KERNEL | {"llm", "embedding"},
    "inner_thoughts": KERNEL | {"llm", "embedding", "cognition"},
    "room": KERNEL | {"llm", "embedding", "cognition", "inner_thoughts"},
    "factory": KERNEL | INFRA | ENGINE,
    "rating": KERNEL | {"storage", "web"},
    "judging": KERNEL | INFRA | {"rating"},
    "geometry": KERNEL | {"embedding", "storage"},
    "transfer": KERNEL | {"storage"},
    "experiments": KERNEL | INFRA | ENGINE | {"factory"},
    "report": KERNEL | INFRA | {"rating", "geometry", "experiments"},
    "storm": KERNEL | INFRA | ENGINE | {"factory", "experiments"},
    "history": KERNEL | INFRA | ENGINE | {"factory", "storm"},
    "study": KERNEL | INFRA | ENGINE | {"factory", "rating"},
    "cli": set(),  # anything in playground (checked below)
    "__main__": {"cli"},
    "__init__": set(),
}


def _modules(root: str) -> dict[str, Path]:
    paths = {}
    for path in (REPO / root).rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return paths


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every absolute import in the file, as (line, imported module or module.name)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _graph(root: str) -> dict[str, set[str]]:
    """Module → the modules of ``root`` it imports. ``from pkg import name`` counts as importing
    ``pkg.name`` when that is a module, else ``pkg`` itself."""
    paths = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        found = {target for _, target in _imports(path) if target in paths}
        # `from a.b import c` where a.b.c is a module: the edge is to a.b.c (a.b is a package
        # whose __init__ is also imported, which matters only if it imports something).
        graph[name] = {t for t in found if t != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each strongly connected group of modules (Tarjan), shown as one loop through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [" ⇄ ".join(g) for g in groups]


def test_no_import_cycles_in_the_engine() -> None:
    cycles = _cycles(_graph("playground"))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_import_cycles_in_the_window() -> None:
    cycles = _cycles(_graph("ui"))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_engine_package_imports_only_its_layer_and_below() -> None:
    paths = _modules("playground")
    unknown = sorted({_top(m) for m in paths} - set(MAY_IMPORT))
    assert unknown == [], f"add these to MAY_IMPORT (and docs/architecture.md): {unknown}"
    offending = []
    for name, path in sorted(paths.items()):
        here = _top(name)
        if here == "cli":
            continue
        allowed = MAY_IMPORT[here] | {here}
        for line, target in _imports(path):
            if not target.startswith("playground.") or target not in paths:
                continue
            there = _top(target)
            if there not in allowed and target != "playground":
                offending.append(f"{path.relative_to(REPO)}:{line}: {name} → {target}")
    offending = sorted(set(offending))
    assert not offending, "imports from a higher layer:\n" + "\n".join(offending)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a ⇄ b ⇄ c"]
    assert _cycles({"a": {"b"}, "b": set()}) == []
