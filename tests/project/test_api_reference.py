"""The public Python API is what ``playground.__all__`` lists: every name resolves, has its own
docstring (so do its public methods and properties), is visible to editors and mypy, and
docs/api.md, generated from them (scripts/api_reference.py), is current."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import playground
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def test_docs_api_md_is_current() -> None:
    generator = load_script("api_reference")
    written = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert written == generator.render(), generator.STALE


def test_every_public_name_resolves_and_has_its_own_docstring() -> None:
    generator = load_script("api_reference")
    missing = []
    for name in playground.__all__:
        obj = getattr(playground, name)
        assert obj.__module__.startswith("playground."), name
        own = vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__
        if not (own or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            missing += [
                f"{name}.{member}"
                for member, value in generator._members(obj)
                if not (inspect.getdoc(value) or "").strip()
            ]
    assert not missing, f"public names without a docstring: {missing}"


def test_every_public_name_is_exported_lazily_and_seen_by_type_checkers() -> None:
    """``__all__``, the lazy table and the TYPE_CHECKING imports list the same names, so
    ``pg.X`` works at run time and editors and mypy know its type."""
    tree = ast.parse((ROOT / "playground" / "__init__.py").read_text(encoding="utf-8"))
    checked = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for stmt in node.body
        if isinstance(stmt, ast.ImportFrom)
        for alias in stmt.names
    }
    assert playground.__all__ == sorted(playground.__all__, key=lambda n: (n.islower(), n))
    assert set(playground.__all__) == set(playground._EXPORTS) == checked
    assert len(playground.__all__) == len(set(playground.__all__))
