"""Reading a JSON Lines export file: its non-blank lines, each parsed and checked against the
export model, or refused in one error that names the line (and the field) at fault.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from playground import errors
from playground.transfer import export
from playground.transfer.model import ExportRecord
from playground.transfer.record_text import RecordError, loads
from playground.transfer.validation import validate_record


class LineError(errors.PlaygroundError):
    """One line of the file is unusable (the message names what is wrong)."""


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their numbers (1-based)."""
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise LineError(f"line {number}: not UTF-8 text ({exc.reason})") from exc
                if text.strip():
                    yield number, text
    except OSError as exc:
        raise errors.PlaygroundError(f"cannot read {path}: {exc.strerror or exc}") from exc


def parse_line(number: int, text: str) -> ExportRecord:
    """One line, checked against the export model before anything of it is written."""
    if number == 1 and text.strip() == "[":
        raise LineError(
            "line 1: this looks like a --format json export (one JSON array); import reads"
            " JSON Lines: export with --format jsonl"
        )
    try:
        record = loads(text)
    except RecordError as exc:
        raise LineError(f"line {number}: {exc}") from exc
    if not isinstance(record, dict):
        raise LineError(f"line {number}: expected a JSON object, found {type(record).__name__}")
    if "format" not in record:
        raise LineError(f"line {number}: missing key 'format'")
    marker = record["format"]
    name, _, version = (marker if isinstance(marker, str) else "").partition("/")
    if name != export.FORMAT_NAME or not version.isdigit() or len(version) > 6:
        raise LineError(
            f"line {number}: not a Thought Playground export (format {marker!r}, "
            f"expected {export.FORMAT!r})"
        )
    if int(version) > export.FORMAT_VERSION:
        raise LineError(
            f"line {number}: written by a newer version of the app (format {marker!r};"
            f" this one reads up to {export.FORMAT!r})"
        )
    try:
        return validate_record(record)
    except RecordError as exc:
        raise LineError(f"line {number}: {exc}") from exc
