"""docs/cli.md is generated from the ``playground`` argparse parser (scripts/cli_reference.py):
it must match what the parser prints today."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "scripts" / "cli_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_cli_md_is_current() -> None:
    generator = _generator()
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == generator.render(), generator.STALE


def test_every_command_has_a_section(monkeypatch) -> None:
    """Every subcommand, nested ones included, is documented, at a width the terminal does not
    change."""
    generator = _generator()
    monkeypatch.setenv("COLUMNS", "40")
    text = generator.render()
    for command in (
        "simulate",
        "experiment",
        "report",
        "judge",
        "storm",
        "profiles generate",
        "profiles list",
        "merge",
    ):
        assert f"\n## playground {command}\n" in text
    assert text == (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), generator.STALE
