"""docs/architecture.md lists every module with its docstring's first sentence, and is current."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location(
        "architecture_map", ROOT / "scripts" / "architecture_map.py"
    )
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_map_is_current() -> None:
    gen = _generator()
    page = gen.PAGE.read_text()
    assert gen.updated(page) == page, (
        "docs/architecture.md is stale: run .venv/bin/python scripts/architecture_map.py"
    )


def test_every_module_has_a_docstring_for_the_map() -> None:
    gen = _generator()
    missing = [
        path.relative_to(ROOT).as_posix()
        for top in ("playground", "ui")
        for path in sorted((ROOT / top).rglob("*.py"))
        if "__pycache__" not in path.parts and not gen.summary(path)
    ]
    assert not missing, "modules without a docstring:\n" + "\n".join(missing)
