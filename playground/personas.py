"""Load and validate persona and icebreaker files (TOML); errors name the file and the field."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from pydantic import ValidationError

from playground import domain, errors

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "personas"
ICEBREAKERS = "icebreakers.toml"


def _read(path: Path) -> dict[str, object]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise errors.PersonaError(path, "", f"not valid TOML ({exc})") from exc
    except OSError as exc:
        raise errors.PersonaError(path, "", f"cannot be read ({exc.strerror})") from exc


def load_persona(path: str | Path) -> domain.Persona:
    """Read one persona file.

    Raises:
        PersonaError: naming the file and the first missing or invalid field.
    """
    path = Path(path)
    data = _read(path)
    data.setdefault("id", path.stem)
    try:
        return domain.Persona.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(file)"
        msg = "missing" if first["type"] == "missing" else first["msg"]
        raise errors.PersonaError(path, field, msg) from exc


def load_personas(directory: str | Path = DEFAULT_DIR) -> list[domain.Persona]:
    """All persona files in a directory, sorted by file name (``icebreakers.toml`` excluded).

    Raises:
        PersonaError: for the first bad file, or a directory with no personas or duplicate names.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise errors.PersonaError(directory, "", "is not a directory of persona files")
    personas = [load_persona(p) for p in sorted(directory.glob("*.toml")) if p.name != ICEBREAKERS]
    if not personas:
        raise errors.PersonaError(directory, "", "contains no persona files (*.toml)")
    seen: dict[str, str] = {}
    for p in personas:
        if p.name.casefold() in seen:
            raise errors.PersonaError(
                directory / f"{p.id}.toml",
                "name",
                f"{p.name!r} is also used by {seen[p.name.casefold()]}.toml",
            )
        seen[p.name.casefold()] = p.id
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
    tmp = path.with_suffix(".toml.tmp")
    try:
        tmp.write_text(dump_persona(persona), encoding="utf-8")
        load_persona(tmp)  # never replace a good file with one that does not load
        tmp.replace(path)
    except OSError as exc:
        raise errors.PersonaError(path, "", f"cannot be written ({exc.strerror})") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path
