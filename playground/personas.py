"""Load and validate persona and icebreaker files (TOML); errors name the file and the field."""

from __future__ import annotations

import codecs
import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from playground import domain, errors

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "personas"
ICEBREAKERS = "icebreakers.toml"
M = TypeVar("M", bound=BaseModel)


_BOMS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def _decode(path: Path, raw: bytes) -> str:
    """The text of a persona or icebreaker file: UTF-8, with or without a byte-order mark.

    Raises:
        PersonaError: naming the file, and the line and column of the first byte that is not UTF-8.
    """
    for bom, encoding in _BOMS.items():  # UTF-32 first: its LE mark starts like UTF-16's
        if raw.startswith(bom):
            raise errors.PersonaError(
                path, "", f"is {encoding} text; save it as UTF-8 (persona files are UTF-8 TOML)"
            )
    if (
        b"\x00" in raw
    ):  # valid UTF-8, but no text file has NUL bytes: UTF-16 without a mark, or binary
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise errors.PersonaError(
            path,
            "",
            f"is not UTF-8 text (a NUL byte at line {line}: UTF-16 or a binary file?);"
            " persona files are UTF-8 TOML",
        )
    try:
        return raw.decode("utf-8-sig")  # Notepad's UTF-8 byte-order mark is harmless: accepted
    except UnicodeDecodeError as exc:
        head = raw[: exc.start]
        line = head.count(b"\n") + 1
        column = exc.start - (head.rfind(b"\n") + 1) + 1
        raise errors.PersonaError(
            path,
            "",
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at line {line}, column {column});"
            " persona files are UTF-8 TOML",
        ) from exc


def _read(path: Path) -> dict[str, object]:
    """A TOML file as a table.

    Raises:
        PersonaError: naming the file, when it cannot be read, is not UTF-8 or is not valid TOML.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise errors.PersonaError(path, "", f"cannot be read ({exc.strerror or exc})") from exc
    text = _decode(path, raw)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise errors.PersonaError(path, "", f"not valid TOML ({exc})") from exc


def validate_file(
    path: Path,
    data: dict[str, Any],
    model: type[M],
    error: type[errors.PersonaError] = errors.PersonaError,
    explain: Callable[[ErrorDetails, str], str | None] | None = None,
) -> M:
    """The table read from ``path`` as a ``model`` (its id defaults to the file's name).

    Args:
        explain: says a problem (of a dotted field) plainly, or None for pydantic's message.

    Raises:
        PersonaError: ``error``, naming the file and the first missing or invalid field.
    """
    data.setdefault("id", path.stem)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(file)"
        said = explain(first, field) if explain is not None else None
        msg = "missing" if first["type"] == "missing" else said or first["msg"]
        raise error(path, field, msg) from exc


def write_checked(
    path: Path,
    text: str,
    check: Callable[[Path], object],
    error: type[errors.PersonaError] = errors.PersonaError,
) -> None:
    """Write ``text`` to ``path`` atomically (its directory made if need be), once ``check`` has
    loaded it from a temporary file: a good file is never replaced by one that does not load.

    Raises:
        PersonaError: ``error``, named after ``path``: it could not be written, or ``check``
            failed on it.
    """
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        try:
            check(tmp)
        except errors.PersonaError as exc:  # named after the file it was meant to become
            raise error(path, exc.field, exc.reason) from exc
        tmp.replace(path)
    except OSError as exc:
        raise error(path, "", f"cannot be written ({exc.strerror or exc})") from exc
    finally:
        tmp.unlink(missing_ok=True)


def load_persona(path: str | Path) -> domain.Persona:
    """Read one persona file.

    Raises:
        PersonaError: naming the file and the first missing or invalid field.
    """
    path = Path(path)
    return validate_file(path, _read(path), domain.Persona)


def load_personas(directory: str | Path = DEFAULT_DIR) -> list[domain.Persona]:
    """All persona files in a directory, sorted by file name (``icebreakers.toml`` excluded).

    Raises:
        PersonaError: for the first bad file, or a directory with no personas or duplicate names.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise errors.PersonaError(directory, "", "is not a directory of persona files")
    try:
        files = sorted(
            p for p in directory.iterdir() if p.suffix == ".toml" and p.name != ICEBREAKERS
        )
    except OSError as exc:
        raise errors.PersonaError(directory, "", f"cannot be read ({exc.strerror or exc})") from exc
    if not files:
        raise errors.PersonaError(directory, "", "contains no persona files (*.toml)")
    personas: list[domain.Persona] = []
    seen: dict[str, Path] = {}
    for path in files:
        persona = load_persona(path)
        other = seen.get(persona.name.casefold())
        if other is not None:
            raise errors.PersonaError(
                path, "name", f"{persona.name!r} is also used by {other.name}"
            )
        seen[persona.name.casefold()] = path
        personas.append(persona)
    return personas


def load_icebreakers(directory: str | Path = DEFAULT_DIR) -> list[str]:
    path = Path(directory) / ICEBREAKERS
    if not path.exists():
        path = DEFAULT_DIR / ICEBREAKERS
    data = _read(path)
    items = data.get("icebreakers")
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(i, str) and i.strip() for i in items)
    ):
        raise errors.PersonaError(path, "icebreakers", "must be a non-empty list of strings")
    return [str(i) for i in items]


def _toml_str(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(value, ensure_ascii=False)


def dump_persona(persona: domain.Persona) -> str:
    """A persona as TOML in the same shape as the shipped files."""
    lines = [f"name = {_toml_str(persona.name)}"]
    if persona.description:
        lines.append(f"description = {_toml_str(persona.description)}")
    if persona.style:
        lines.append(f"style = {_toml_str(persona.style)}")
    lines.append("")
    lines.append("facts = [")
    lines += [f"  {_toml_str(f)}," for f in persona.facts]
    lines.append("]")
    for m in persona.memories:
        lines += [
            "",
            "[[memories]]",
            f"kind = {_toml_str(m.kind)}",
            f"text = {_toml_str(m.text)}",
            f"weight = {m.weight:g}",
        ]
    return "\n".join(lines) + "\n"


def save_persona(persona: domain.Persona, directory: str | Path = DEFAULT_DIR) -> Path:
    """Write a persona file (``<id>.toml``) atomically; the result is read back to validate it.

    Raises:
        PersonaError: the file could not be written.
    """
    path = Path(directory) / f"{persona.id}.toml"
    write_checked(path, dump_persona(persona), load_persona)
    return path
