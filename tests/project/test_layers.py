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
FEATURES = {
    "rating",
    "judging",
    "geometry",
    "report",
    "experiments",
    "storm",
    "history",
    "transfer",
    "study",
}

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
    # The runs the simulate, experiment and storm commands and the Python API share.
    "runs": KERNEL | INFRA | ENGINE | {"factory", "experiments", "storm"},
    "cli": set(),  # anything in playground (checked below)
    # The public Python API sits on top: it may use everything but the command line, and
    # nothing imports it but playground/__init__.py, which exports its names lazily.
    "api": (KERNEL | INFRA | ENGINE | FEATURES | {"factory", "runs"}),
    "__main__": {"cli"},
    "__init__": {"api", "errors"},
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
        # whose __init__ is also imported, which matters only if it imports something). The
        # root package's own __init__ only names the public API lazily (its imports are
        # TYPE_CHECKING ones), so `from playground import errors` is an edge to
        # playground.errors alone; counting the root too would loop every module back
        # through playground/__init__.py.
        graph[name] = {
            t
            for t in found
            if t != name and not (t == root and any(f.startswith(f"{root}.") for f in found))
        }
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


def test_nothing_imports_the_public_api_but_the_package_itself() -> None:
    """``playground.api`` is the top: the engine and the command line never depend on it, so
    ``import playground`` and every command stay as light as they are."""
    paths = _modules("playground")
    offending = sorted(
        f"{path.relative_to(REPO)}:{line}: {name} → {target}"
        for name, path in paths.items()
        if name != "playground" and _top(name) != "api"
        for line, target in _imports(path)
        if target == "playground.api" or target.startswith("playground.api.")
    )
    assert not offending, "imports of playground.api:\n" + "\n".join(offending)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a ⇄ b ⇄ c"]
    assert _cycles({"a": {"b"}, "b": set()}) == []


#: ui/'s app-wide modules at its root, the layer under all others: the theme and screen fitting,
#: the bridge from engine events to Qt signals, the shared selection, and the names of policies
#: and proactivity every pane, dialog and feature shows.
UI_KERNEL = {
    "__init__",
    "theme",
    "screen_fit",
    "bridge",
    "selection",
    "policies",
    "proactivity_text",
    "collector",
}
#: The feature windows and dialogs; they may use each other and everything below.
UI_FEATURES = {"dialogs", "rating", "replay", "storm", "experiments", "study_plans", "jobs"}
_UI_BELOW_FEATURES = UI_KERNEL | {"widgets", "panes", "session", "window"}

#: ui's top-level package or root module → what it may import besides itself, lowest first:
#: kernel → widgets → panes → session → window → features; ``app`` composes them all.
UI_MAY_IMPORT: dict[str, set[str]] = {
    **{name: UI_KERNEL for name in UI_KERNEL},
    "widgets": UI_KERNEL,
    "panes": UI_KERNEL | {"widgets"},
    "session": UI_KERNEL | {"widgets", "panes"},
    "window": UI_KERNEL | {"widgets", "panes", "session"},
    **{name: _UI_BELOW_FEATURES | UI_FEATURES for name in UI_FEATURES},
    "app": _UI_BELOW_FEATURES | UI_FEATURES,
}

#: The imports allowed against the layers, each (importer, imported module) with its reason. A
#: new one fails the test until it is listed here or the module moves to its layer.
UI_EXCEPTIONS: dict[tuple[str, str], str] = {
    # The main window hosts the features: it builds their menus and opens their dialogs and the
    # replay. The features reach back only through the WindowHost protocol (ui/window/host.py).
    **{
        ("ui.window.main_window", target): "the main window builds the feature's menu or dialog"
        for target in (
            "ui.dialogs.new_session",
            "ui.experiments.menu",
            "ui.rating.menu",
            "ui.storm.menu",
            "ui.replay.fork_dialog",
            "ui.replay.leave_live",
            "ui.replay.panel",
        )
    },
    **{
        ("ui.window.session_dialogs", f"ui.dialogs.{name}"): "the Session menu opens its dialogs"
        for name in ("engine_settings", "invite", "join", "new_session", "participant_settings")
    },
    ("ui.window.session_dialogs", "ui.dialogs.persona_editor"): "the Session menu opens it",
    ("ui.window.session_dialogs", "ui.storm.seating"): "the Session menu seats a STORM user",
    ("ui.window.file_menu", "ui.dialogs.new_session"): "File ▸ New session opens the dialog",
    ("ui.window.host", "ui.replay.controller"): "the window shows a replay in its own panes",
    ("ui.window.history", "ui.replay.controller"): "looking back reads the replay's position",
    ("ui.window.geometry_view", "ui.dialogs.common"): "keeps the Geometry toggle like a dialog",
    ("ui.panes.memory.memory_edit", "ui.dialogs.common"): "the memory editor is a small dialog",
}


def _ui_top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _ui_offending(paths: dict[str, Path]) -> list[str]:
    offending = []
    for name, path in sorted(paths.items()):
        allowed = UI_MAY_IMPORT[_ui_top(name)] | {_ui_top(name)}
        for line, target in _imports(path):
            if target not in paths or _ui_top(target) in allowed:
                continue
            if (name, target) not in UI_EXCEPTIONS:
                shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
                offending.append(f"{shown}:{line}: {name} → {target}")
    return sorted(set(offending))


def test_every_window_package_imports_only_its_layer_and_below() -> None:
    paths = _modules("ui")
    unknown = sorted({_ui_top(m) for m in paths} - set(UI_MAY_IMPORT))
    assert unknown == [], f"add these to UI_MAY_IMPORT (and docs/architecture.md): {unknown}"
    offending = _ui_offending(paths)
    assert not offending, "imports from a higher layer:\n" + "\n".join(offending)


def test_every_listed_window_exception_is_still_needed() -> None:
    paths = _modules("ui")
    used = {(name, t) for name, path in paths.items() for _, t in _imports(path) if t in paths}
    stale = sorted(f"{a} → {b}" for a, b in set(UI_EXCEPTIONS) - used)
    assert stale == [], "UI_EXCEPTIONS lists imports no module makes:\n" + "\n".join(stale)


def test_the_window_layer_check_names_a_pane_importing_the_window(tmp_path: Path) -> None:
    pane = tmp_path / "pane.py"
    pane.write_text("from ui.window.main_window import MainWindow\n")
    paths = {"ui.panes.x.pane": pane, "ui.window.main_window": pane}
    offending = _ui_offending(paths)
    assert len(offending) == 1
    assert offending[0].endswith("ui.panes.x.pane → ui.window.main_window")
