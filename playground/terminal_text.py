"""Text made safe to print on a terminal.

Persona and profile files, imported exports, a model's answers and a server's error pages can
hold escape sequences that clear the screen, set the window title or recolour it, backspaces and
carriage returns that overwrite what was printed, C1 controls and bidi overrides that reorder a
line. A terminal acts on them instead of showing them, so a file could make the command line
lie about what it holds.

The command line prints everything through :class:`TerminalStream`, which shows each such
character as a visible escape, ``\\u001b``: the data is unchanged in the database and in export
files, and only its printed form differs. The notation is JSON's, so ``show --json`` stays valid
JSON that reads back to the same text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import TextIO

#: C0 controls except tab and newline, a carriage return not followed by a newline, DEL, C1
#: controls, the bidi embeddings, overrides and isolates (the "Trojan Source" set) and lone
#: surrogates (which no encoding can write). ``\r\n`` stays: a line end, not an overwrite.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]|\r(?!\n)"
)
#: The same, and tab and every line break too: for a value that must stay on its line.
_UNSAFE_ONE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with every character a terminal would act on shown as ``\\uXXXX``.

    Args:
        one_line: also escape newlines, tabs and line separators, for a value printed in a
            one-line layout (a table row), where a newline would forge a row of its own.
    """
    return (_UNSAFE_ONE_LINE if one_line else _UNSAFE).sub(_escape, text)


class TerminalStream(io.TextIOBase, TextIO):
    """A text stream that writes through :func:`visible` to the stream it wraps; everything
    else (flush, isatty, fileno, encoding) is the wrapped stream's.

    It never closes or flushes the wrapped stream on its own (no ``__del__``), so a closed pipe
    is still noticed only where the command line expects it.
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, s: str) -> int:
        self.raw.write(visible(s))
        return len(s)

    def writelines(self, lines: Iterable[str]) -> None:  # type: ignore[override]
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        try:
            return self.raw.isatty()
        except (AttributeError, ValueError):
            return False

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.raw, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)

    @property
    def closed(self) -> bool:
        return bool(getattr(self.raw, "closed", False))

    def close(self) -> None:
        """Nothing: the wrapped stream belongs to whoever opened it."""

    def __enter__(self) -> TerminalStream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def guard(stream: TextIO) -> TextIO:
    """``stream`` printing safely (the same stream when it already does)."""
    return stream if isinstance(stream, TerminalStream) else TerminalStream(stream)


def unguarded(stream: TextIO) -> TextIO:
    """The stream under :func:`guard`: for output the program itself makes of control codes
    (a progress bar redrawing its lines), never for text from outside."""
    return stream.raw if isinstance(stream, TerminalStream) else stream


def for_data(stream: TextIO) -> TextIO:
    """The stream for a data file written to standard output (``export``): unchanged when it
    goes to a file or a pipe, made safe when it is shown on a terminal."""
    raw = unguarded(stream)
    try:
        shown = raw.isatty()
    except (AttributeError, ValueError):
        shown = False
    return guard(raw) if shown else raw
