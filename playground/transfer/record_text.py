"""One line of an export as JSON text: parsed within the format's limits, and the error raised
for a line (or a field of it) that breaks the format.

:func:`loads` is the only way the importer parses a line: it bounds how deeply values nest
(checked before parsing, so no line can exhaust the stack), takes only finite numbers, and
refuses lone UTF-16 surrogates. :mod:`playground.transfer.model` and
:mod:`playground.transfer.validation` check what it returns.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from playground import errors

#: How deeply objects and lists may nest in a line. The app's own exports reach about 10 levels;
#: the limit keeps a hostile line from exhausting the parser's stack.
MAX_DEPTH = 64


class RecordError(errors.PlaygroundError):
    """A line of an export breaks the format.

    Attributes:
        field: where, dotted with list positions (``messages[3].thought_id``); ``""`` for the line.
        reason: what is wrong there.
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = _one_line(field)
        self.reason = _one_line(reason)
        super().__init__(f"{self.field}: {self.reason}" if field else self.reason)


#: Characters that would break the one line an error is said in.
_LINE_BREAKS = re.compile("[\n\r\t\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _one_line(text: str) -> str:
    """``text`` with its line breaks and tabs written as ``\\u000a``: a value quoted from a
    file stays on the error's line."""
    return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deeply objects and lists nest in JSON ``text``, counted without parsing it (strings
    are skipped); stops counting once past ``limit``, so a hostile line costs one scan."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number (at most about 1.8e308)")
    return value


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number (only finite numbers are allowed)")


def loads(text: str) -> Any:
    """Parse JSON text with the format's limits: at most :data:`MAX_DEPTH` levels (checked
    before parsing, so no line can exhaust the stack), finite numbers only, and no lone UTF-16
    surrogate (``\\ud800``: no text encoding can store it).

    Raises:
        RecordError: the text breaks a limit or is not JSON (its ``field`` names where, when known).
    """
    if nesting_depth(text) > MAX_DEPTH:
        raise RecordError("", f"nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_constant)
    except ValueError as exc:
        raise RecordError("", f"not JSON ({exc})") from None
    if _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(value, "")
        if where is not None:
            raise RecordError(
                where, "holds a lone UTF-16 surrogate (such as \\ud800), which is not text"
            )
    return value


def _lone_surrogate(value: Any, at: str) -> str | None:
    """The path of the first string (or key) in ``value`` that cannot be encoded as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return at or "(the line)"
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{at}[{i}]")
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{at}.{key}" if at else str(key)
            if _lone_surrogate(key, path) is not None:
                return path
            found = _lone_surrogate(item, path)
            if found is not None:
                return found
    return None
