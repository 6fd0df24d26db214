#!/usr/bin/env python3
"""Print the field reference of docs/export-format.md, or write it into that document.

The reference is generated from the export model (``playground.transfer.reference``, from
playground/transfer/model.py); ``tests/transfer/test_import_validation.py`` fails when the document
and the model differ.

Usage::

    .venv/bin/python scripts/export_reference.py                                # print it
    .venv/bin/python scripts/export_reference.py --write docs/export-format.md  # replace it there
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from playground.transfer.reference import reference_markdown, write_reference


def main(argv: list[str] | None = None) -> int:
    """Print the field reference, or write it into the document given with ``--write``."""
    parser = argparse.ArgumentParser(prog="scripts/export_reference.py")
    parser.add_argument("--write", metavar="FILE", help="replace the reference in this file")
    args = parser.parse_args(argv)
    if args.write:
        write_reference(Path(args.write))
    else:
        print(reference_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
