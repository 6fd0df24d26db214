"""The command line shared by the scripts that generate a docs page: write it, or ``--check``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def main(argv: list[str] | None, *, output: Path, render: Callable[[], str], stale: str) -> int:
    """Write ``render()`` to ``output`` when it differs; with ``--check``, only exit 1 (printing
    ``stale``) when it does."""
    cli = argparse.ArgumentParser(description=f"write {output.name} (generated)")
    cli.add_argument("--check", action="store_true", help=f"only say whether {output.name} is stale")
    args = cli.parse_args(argv)
    text = render()
    current = output.read_text(encoding="utf-8") if output.exists() else ""
    if args.check:
        if current != text:
            print(stale, file=sys.stderr)
            return 1
        return 0
    if current != text:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output}")
    else:
        print(f"{output} is up to date")
    return 0
