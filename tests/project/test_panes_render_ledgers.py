"""The window folds no engine events itself: the panes render the engine's Qt-free ledgers.

The thoughts pane applies each thought event to a :class:`playground.history.ledger.ThoughtLedger`
and renders what the ledger answers (tests/ui/test_one_fold.py checks that live, replay and
``show --json`` agree); the memory and hidden-state panes do the same with a
:class:`~playground.history.memory_ledger.MemoryLedger` and a
:class:`~playground.history.hidden_state_ledger.HiddenStateLedger`. These checks read ``ui/``
with ``ast`` and fail when window code starts folding events again: a handler of a thought
signal that keeps state of its own, code that writes into a ledger or works out a thought's
current score or scoring step, a pane's handler of memory or hidden-state events that does not
go to its ledger, or a pane that keeps engine records per participant.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from playground.history.ledger import THOUGHT_KINDS

REPO = Path(__file__).resolve().parents[2]

#: Methods that change a collection in place.
_GROWS = {"append", "extend", "insert", "add", "setdefault", "update"}
MUTATORS = _GROWS | {"pop", "popitem", "clear", "remove", "discard"}
#: A ledger's folded state.
LEDGER_FIELDS = {"thoughts", "evaluations", "retained", "deleted"}


def _ui_files(root: Path = REPO) -> Iterator[Path]:
    yield from sorted((root / "ui").rglob("*.py"))


def _chain(node: ast.AST) -> list[str]:
    """The names along ``a.b().c[d].e``, outermost last: ``["a", "b", "c", "e"]``."""
    names: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            names.append(node.id)
            return names[::-1]
        else:
            return names[::-1]


def _writes(body: ast.AST) -> Iterator[tuple[int, list[str]]]:
    """Every in-place change in ``body``: (line, what is changed, as a :func:`_chain`)."""
    for node in ast.walk(body):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
        ):
            yield node.lineno, _chain(node.func.value)
        for t in targets:
            if isinstance(t, ast.Attribute | ast.Subscript):
                yield t.lineno, _chain(t)


def _handlers(
    tree: ast.Module, signals: frozenset[str] = THOUGHT_KINDS
) -> Iterator[tuple[ast.ClassDef, str, ast.Call]]:
    """(class, signal, connect call) for each ``<x>.<signal>.connect(...)`` in a class."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "connect"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr in signals
            ):
                yield cls, node.func.value.attr, node


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}


def _self_calls(fn: ast.FunctionDef) -> set[str]:
    return {
        n.func.attr
        for n in ast.walk(fn)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
    }


def thought_handler_problems(root: Path = REPO) -> list[str]:
    """What is wrong with the window's handlers of thought events (empty: nothing)."""
    problems: list[str] = []
    for path in _ui_files(root):
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(root)
        for cls, signal, call in _handlers(tree):
            methods = _methods(cls)
            target = call.args[0] if call.args else None
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and target.attr in methods
            ):
                problems.append(f"{where}:{call.lineno}: {signal} goes to something not a method")
                continue
            handler = methods[target.attr]
            if "ledger.apply" not in ".".join(
                ".".join(_chain(n.func)) for n in ast.walk(handler) if isinstance(n, ast.Call)
            ):
                problems.append(
                    f"{where}:{handler.lineno}: {cls.name}.{handler.name} handles {signal}"
                    " without applying it to the ledger"
                )
            # The handler and every method of the class it calls keep no state of their own.
            seen: set[str] = set()
            todo = [handler.name]
            while todo:
                name = todo.pop()
                if name in seen or name not in methods:
                    continue
                seen.add(name)
                for line, changed in _writes(methods[name]):
                    if changed[:1] == ["self"]:
                        problems.append(
                            f"{where}:{line}: {cls.name}.{name} (handling {signal}) changes"
                            f" {'.'.join(changed)}: fold it in the ledger instead"
                        )
                todo.extend(_self_calls(methods[name]))
    return sorted(set(problems))


def ledger_write_problems(root: Path = REPO) -> list[str]:
    """Window code that writes into a ledger's folded state, or works out a thought's current
    score or scoring step from its evaluations (``evaluations[-1].score``)."""
    problems: list[str] = []
    for path in _ui_files(root):
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(root)
        for line, changed in _writes(tree):
            if {"ledger", "_ledger"} & set(changed) and LEDGER_FIELDS & set(changed):
                problems.append(f"{where}:{line}: writes into a ledger: {'.'.join(changed)}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in {"score", "step"}
                and isinstance(node.value, ast.Subscript)
                and isinstance(node.value.slice, ast.UnaryOp)
                and isinstance(node.value.slice.op, ast.USub)
            ):
                problems.append(
                    f"{where}:{node.lineno}: works out a latest {node.attr} (ask the ledger)"
                )
    return sorted(set(problems))


def test_thought_events_are_folded_by_the_ledger_alone() -> None:
    problems = thought_handler_problems()
    assert not problems, "\n".join(problems)


def test_the_window_neither_writes_into_a_ledger_nor_works_out_scores() -> None:
    problems = ledger_write_problems()
    assert not problems, "\n".join(problems)


def test_the_thoughts_pane_is_checked() -> None:
    """The checks see the pane's five handlers (a rename must not make them pass vacuously)."""
    path = REPO / "ui" / "panes" / "thoughts" / "thoughts_pane.py"
    signals = {s for _, s, _ in _handlers(ast.parse(path.read_text()))}
    assert signals == THOUGHT_KINDS


def test_the_checks_name_a_pane_that_folds_thoughts_itself(tmp_path: Path) -> None:
    pane = tmp_path / "ui" / "panes" / "x.py"
    pane.parent.mkdir(parents=True)
    pane.write_text(
        "class P:\n"
        "    def __init__(self, bridge):\n"
        "        bridge.thought_evaluated.connect(self._on)\n"
        "        bridge.thought_deleted.connect(self._gone)\n"
        "    def _on(self, e):\n"
        "        self.ledger.apply([e])\n"
        "        self._latest[e.agent] = e.evaluation.step\n"
        "    def _gone(self, e):\n"
        "        self._note(e)\n"
        "    def _note(self, e):\n"
        "        self._scored.pop(e.agent, None)\n"
        "        evs = self.ledger.evaluations.setdefault(e.agent, {})\n"
        "        return evs[-1].score\n"
    )
    handlers = thought_handler_problems(tmp_path)
    assert any("P._on (handling thought_evaluated) changes self._latest" in p for p in handlers)
    assert any("P._gone handles thought_deleted without applying it" in p for p in handlers)
    assert any("P._note (handling thought_deleted) changes self._scored" in p for p in handlers)
    writes = ledger_write_problems(tmp_path)
    assert any("writes into a ledger: self.ledger.evaluations" in p for p in writes)
    assert any("works out a latest score" in p for p in writes)


#: Pane modules → the signals whose handlers must go to the pane's ledger.
LEDGER_PANES = {
    "ui/panes/memory/memory_pane.py": frozenset({"memory_changed", "memories_retrieved"}),
    "ui/panes/hidden_state/hidden_state_pane.py": frozenset({"hidden_state_recorded"}),
}


def pane_fold_problems(root: Path = REPO) -> list[str]:
    """Panes whose handlers of memory or hidden-state events do not go to the pane's ledger, and
    pane attributes that keep engine records per participant (``dict[str, ...]`` of ``domain``
    or ``events`` records): that is a fold, and folds live in ``playground/history``."""
    problems: list[str] = []
    for rel, signals in LEDGER_PANES.items():
        tree = ast.parse((root / rel).read_text(), rel)
        found = set()
        for cls, signal, call in _handlers(tree, signals):
            found.add(signal)
            target = call.args[0] if call.args else None
            handler = _methods(cls).get(target.attr) if isinstance(target, ast.Attribute) else None
            calls = [] if handler is None else [_chain(n) for n in ast.walk(handler)]
            if not any(c[:2] == ["self", "ledger"] for c in calls):
                problems.append(f"{rel}:{call.lineno}: {signal} is not folded by self.ledger")
        problems += [f"{rel}: no handler of {s}" for s in sorted(signals - found)]
    for path in sorted((root / "ui" / "panes").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.AnnAssign) and _chain(node.target)[:1] == ["self"]):
                continue
            shown = ast.unparse(node.annotation)
            if shown.startswith("dict[str,") and ("domain." in shown or "events." in shown):
                problems.append(
                    f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node.target)}: {shown}"
                    " keeps engine records per participant (fold them in playground/history)"
                )
    return problems


def test_memory_and_hidden_state_panes_render_their_ledgers() -> None:
    problems = pane_fold_problems()
    assert not problems, "\n".join(problems)
