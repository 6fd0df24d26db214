"""Simulated users' profile files (TOML, ``personas/users/*.toml``): read, check, write.

Every bad file raises :class:`playground.errors.ProfileError` naming the file and the dotted
field (``task.requirements.2``, ``difficulty.tone``, ``uncertainty``), as persona files do.
The directory sits inside the persona directory; :func:`playground.personas.load_personas`
reads only the top-level files, so the profiles never pass for personas.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

from pydantic_core import ErrorDetails

from playground import errors, personas
from playground.domain import simulated_user as model
from playground.storm import compose

DEFAULT_DIR = personas.DEFAULT_DIR / "users"
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
#: pydantic's messages for the patterns of ``id`` and ``name``, said plainly.
_PATTERN_MESSAGES = {
    "id": "may only have letters, digits, '.', '_' and '-'",
    "name": "must be one word, without spaces, commas, colons or semicolons",
}


def _read(path: Path) -> dict[str, object]:
    """Raises: ProfileError naming the file: unreadable, not UTF-8 or not TOML."""
    try:
        return personas._read(path)
    except errors.PersonaError as exc:
        reason = exc.reason.replace("persona files", "profile files")
        raise errors.ProfileError(exc.path, exc.field, reason) from exc


def check_mask(profile: model.UserProfile) -> tuple[str, str] | None:
    """What is wrong with a profile's uncertainty and unknown list: ``(field, reason)``, or None.

    The uncertainty must be one of the paper's levels, every unknown entry an attribute of the
    profile (once), and their number exactly ``round(uncertainty/100 × n)``.
    """
    if profile.uncertainty not in model.UNCERTAINTIES:
        allowed = ", ".join(str(u) for u in model.UNCERTAINTIES)
        return "uncertainty", f"{profile.uncertainty} is not one of {allowed}"
    keys = compose.attribute_keys(profile)
    seen: set[str] = set()
    for i, item in enumerate(profile.unknown):
        if item not in keys:
            return f"unknown.{i}", f"{item!r} is not an attribute of this profile"
        if item in seen:
            return f"unknown.{i}", f"{item!r} is listed twice"
        seen.add(item)
    want = compose.unknown_count(profile.uncertainty, len(keys))
    if len(profile.unknown) != want:
        return "unknown", (
            f"lists {len(profile.unknown)} attributes, but {profile.uncertainty} % of this"
            f" profile's {len(keys)} attributes is {want}; list {want} (or change uncertainty)"
        )
    return None


def load_profile(path: str | Path) -> model.UserProfile:
    """Read one profile file (its id defaults to the file name without ``.toml``).

    Raises:
        ProfileError: naming the file and the first missing or invalid field.
    """
    path = Path(path)
    profile = personas.validate_file(
        path, _read(path), model.UserProfile, errors.ProfileError, _explain
    )
    problem = check_mask(profile)
    if problem:
        raise errors.ProfileError(path, *problem)
    return profile


def _explain(problem: ErrorDetails, field: str) -> str | None:
    """A field the profile has not, or a bad ``id`` or ``name``, said plainly."""
    if problem["type"] == "extra_forbidden":
        return "is not a field of a profile"
    if problem["type"] == "string_pattern_mismatch" and field in _PATTERN_MESSAGES:
        return f"{problem['input']!r} {_PATTERN_MESSAGES[field]}"
    return None


def _not_a_file(path: Path) -> str | None:
    """Why a ``*.toml`` entry of a profiles folder is no file to read, or None when it is one.

    A link that loops or leads nowhere, a folder or a pipe named like a profile used to be
    skipped without a word: the profile the user meant to run went missing unnoticed. A pipe
    is never opened (reading one would wait forever).
    """
    try:
        target = path.resolve(strict=True)
    except RuntimeError:  # Python before 3.13: "Symlink loop from …"
        return _loop(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return _loop(path)
        if path.is_symlink():
            return f"is a symbolic link to {os.readlink(path)}, which does not exist"
        return f"cannot be read ({exc.strerror or exc})"
    link = f" (a symbolic link to {os.readlink(path)})" if path.is_symlink() else ""
    if target.is_dir():
        return f"is a folder{link}, not a profile file"
    if not target.is_file():
        return f"is not a regular file{link} (a pipe or a device?), not a profile file"
    return None


def _loop(path: Path) -> str:
    """The loop a link makes, link by link, as paths from its folder: ``a.toml → b.toml →
    a.toml``."""
    chain = [os.path.abspath(path)]
    while os.path.islink(chain[-1]) and len(chain) <= 40:
        step = os.path.normpath(os.path.join(os.path.dirname(chain[-1]), os.readlink(chain[-1])))
        chain.append(step)
        if step in chain[:-1]:
            break
    names = (os.path.relpath(p, path.parent.absolute()) for p in chain)
    return f"is a symbolic link that loops ({' → '.join(names)})"


def scan_profiles(
    directory: str | Path = DEFAULT_DIR,
) -> list[tuple[Path, model.UserProfile | errors.ProfileError]]:
    """Every ``*.toml`` file of a directory (not its subdirectories), sorted by name, with its
    profile or the error that stops it loading. Two files with the same id: the second is an
    error. So is a ``*.toml`` entry that is no file: a link that loops or leads nowhere, a
    folder, a pipe. Other entries (notes, folders, a link back to the folder) are not read.

    Raises:
        ProfileError: the directory does not exist or cannot be read.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise errors.ProfileError(directory, "", "is not a directory of profile files")
    try:
        files = sorted(p for p in directory.iterdir() if p.suffix == ".toml")
    except OSError as exc:
        raise errors.ProfileError(directory, "", f"cannot be read ({exc.strerror or exc})") from exc
    found: list[tuple[Path, model.UserProfile | errors.ProfileError]] = []
    ids: dict[str, Path] = {}
    for path in files:
        problem = _not_a_file(path)
        if problem is not None:
            found.append((path, errors.ProfileError(path, "", problem)))
            continue
        try:
            profile = load_profile(path)
        except errors.ProfileError as exc:
            found.append((path, exc))
            continue
        other = ids.get(profile.id)
        if other is not None:
            found.append(
                (path, errors.ProfileError(path, "id", f"{profile.id!r} is also {other.name}'s"))
            )
            continue
        ids[profile.id] = path
        found.append((path, profile))
    return found


def load_profiles(directory: str | Path = DEFAULT_DIR) -> list[model.UserProfile]:
    """All profile files of a directory, sorted by file name (an empty directory: none).

    Raises:
        ProfileError: for the first bad file, or a directory that is missing or unreadable.
    """
    out: list[model.UserProfile] = []
    for _, item in scan_profiles(directory):
        if isinstance(item, errors.ProfileError):
            raise item
        out.append(item)
    return out


def _s(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _s(key)


def _list(name: str, items: list[str]) -> list[str]:
    if not items:
        return [f"{name} = []"]
    return [f"{name} = [", *(f"  {_s(i)}," for i in items), "]"]


def _table(name: str, values: dict[str, str]) -> list[str]:
    return ["", f"[{name}]", *(f"{_key(k)} = {_s(v)}" for k, v in values.items())]


def dump_profile(profile: model.UserProfile) -> str:
    """A profile as TOML, in the shape of the shipped files (the id is the file's name)."""
    d = profile.difficulty
    lines = [f"name = {_s(profile.name)}"]
    if profile.description:
        lines.append(f"description = {_s(profile.description)}")
    if profile.seed is not None:
        lines.append(f"seed = {profile.seed}")
    lines.append(f"origin = {_s(profile.origin)}")
    lines.append(f"uncertainty = {profile.uncertainty}")
    lines += _list("unknown", profile.unknown)
    lines += _list("examples", profile.examples)
    lines += [
        "",
        "[difficulty]",
        f"style = {d.style}",
        f"length = {d.length}",
        f"content = {d.content}",
        f"tone = {d.tone}",
    ]
    lines += _table("base", profile.base)
    lines += _table("traits", profile.traits)
    lines += _table("context", profile.context)
    t = profile.task
    lines += ["", "[task]", f"category = {_s(t.category)}", f"task = {_s(t.task)}"]
    lines += _list("requirements", t.requirements)
    lines += _list("success_criteria", t.success_criteria)
    lines += _table("task.attributes", t.attributes)
    return "\n".join(lines) + "\n"


def save_profile(profile: model.UserProfile, directory: str | Path = DEFAULT_DIR) -> Path:
    """Write a profile file (``<id>.toml``) atomically; it is read back to validate it first.

    Raises:
        ProfileError: the file could not be written, or would not load (naming the field).
    """
    path = Path(directory) / f"{profile.id}.toml"

    def check(tmp: Path) -> None:
        if load_profile(tmp).model_copy(update={"id": profile.id}) != profile:
            raise errors.ProfileError(path, "", "does not read back as the profile written")

    personas.write_checked(path, dump_profile(profile), check, errors.ProfileError)
    return path
