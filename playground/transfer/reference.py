"""The field reference of ``docs/export-format.md``, generated from the export model.

``scripts/export_reference.py`` prints it, or with ``--write docs/export-format.md`` replaces it in
the document, between its two marks (:func:`write_reference`). A test fails when the document and
the model differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playground.transfer.model import (
    ID_PATTERN,
    INT64_MAX,
    INT64_MIN,
    STIMULUS_PATTERN,
    TABLE_MODELS,
    ExportRecord,
    Row,
    StudyStep,
)
from playground.transfer.record_text import MAX_DEPTH

BEGIN_MARK = "<!-- field reference: generated from playground/transfer/model.py; do not edit -->"
END_MARK = "<!-- end of the field reference -->"
#: Objects of a record that are no table's rows, by their key.
_OBJECTS: dict[str, type[Row]] = {"study": StudyStep}


def _type_text(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        key = next((k for k, m in _OBJECTS.items() if m.__name__ == name), None)
        if key is not None:
            return f"`{key}` object"
        table = next((t for t, m in TABLE_MODELS.items() if m.__name__ == name), name)
        return f"`{table}` row"
    if "anyOf" in schema:
        parts = [s for s in schema["anyOf"] if s.get("type") != "null"]
        text = " or ".join(_type_text(s, defs) for s in parts)
        return text + " or null" if len(parts) < len(schema["anyOf"]) else text
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type")
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo, hi) == (INT64_MIN, INT64_MAX):
            return "integer (64-bit)"
        if (lo, hi) == (0, INT64_MAX):
            return "integer ≥ 0 (64-bit)"
        return f"integer {lo}–{hi}"
    if kind == "number":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is None and hi is None:
            return "finite number"
        return f"number ≥ {lo}" if hi is None else f"number {lo}–{hi}"
    if kind == "string":
        if schema.get("format") == "date-time":
            return "timestamp"
        if schema.get("pattern") == ID_PATTERN:
            return "id"
        if schema.get("pattern") == STIMULUS_PATTERN:
            return "`memory:N`, `message:N` or `thought:N`"
        longest = schema.get("maxLength")
        least = "non-empty " if schema.get("minLength") else ""
        return f"{least}string" + (f" (≤ {longest:,} chars)" if longest else "")
    if kind == "array":
        item = _type_text(schema.get("items", {}), defs)
        if item.endswith(" row"):
            return f"list of {item}s"
        return "list of " + (
            "strings" + item.removeprefix("string") if item.startswith("string") else item
        )
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict) and values.get("type") in ("number", "integer"):
            return "object of numbers"
        return "object"
    return "any JSON value"


def _table(model: type[Row]) -> Iterator[str]:
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    yield "| key | type | required |"
    yield "|---|---|---|"
    for name, field in schema["properties"].items():
        if name in required:
            need = "yes"
        elif "default" in field:
            need = f"no (`{json.dumps(field['default'], ensure_ascii=False)}`)"
        else:
            need = "no"
        yield f"| `{name}` | {_type_text(field, defs)} | {need} |"


def reference_markdown() -> str:
    """The field reference of ``docs/export-format.md``, between its two marks."""
    lines = [
        BEGIN_MARK,
        "",
        "Every line is checked against these tables before anything of it is written:",
        f"- integers are SQLite's, from {INT64_MIN} to {INT64_MAX}, and numbers are finite;",
        "- an id is letters, digits, `.`, `_` or `-`, at most 64 characters;",
        "- a timestamp is ISO 8601, such as `2026-01-02T03:04:05.678+00:00`;",
        f"- objects and lists nest at most {MAX_DEPTH} levels deep;",
        "- text holds no lone UTF-16 surrogate (`\\ud800`);",
        "- a key not listed is ignored; one that is not required may be left out, and its",
        "  default is stored;",
        "- an event's `data` must read as the event of its `kind` (`playground/events.py`).",
        "",
    ]
    sections: list[tuple[str, type[Row]]] = [
        ("the record (one line)", ExportRecord),
        *((f"`{key}` (for readers: never imported)", model) for key, model in _OBJECTS.items()),
        *((f"`{table}`", model) for table, model in TABLE_MODELS.items()),
    ]
    for title, model in sections:
        lines += [f"#### {title}", "", *_table(model), ""]
    lines.append(END_MARK)
    return "\n".join(lines)


def write_reference(path: Path) -> None:
    """Replace the field reference in the document at ``path``, between its two marks."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN_MARK), text.index(END_MARK) + len(END_MARK)
    path.write_text(text[:start] + reference_markdown() + text[end:], encoding="utf-8")
