"""The ranges of the command line's numeric flags, checked while the command line is parsed.

Every numeric flag has one of these as its argparse ``type=``, so a value no run could use is
refused before anything starts, in one line that names the flag, the value and the range, with
argparse's exit code 2: ``error: --seed: 99999999999999999999999 is out of range (0 … 2**63-1)``.
Without them a huge seed got as far as SQLite and ended in a traceback (OverflowError).

A flag that sets a setting takes its bounds from the setting's pydantic field
(:func:`setting`), so the flag and the settings (environment, window) never disagree.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from typing import get_args

import annotated_types
from pydantic import BaseModel

from playground.settings import EngineSettings, LLMSettings, RoomSettings

#: The largest value an SQLite INTEGER column holds: seeds and ids are stored in one.
SQLITE_INT_MAX = 2**63 - 1
_WHOLE = re.compile(r"[+-]?[0-9]+")
#: A typed value longer than this is shortened in the error line.
_SHOWN_CHARS = 40


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _bound(value: float) -> str:
    if value == SQLITE_INT_MAX:
        return "2**63-1"
    return str(value) if isinstance(value, int) else f"{value:g}"


@dataclass(frozen=True)
class Number:
    """An argparse ``type=``: a whole or real number from ``lo`` to ``hi``.

    Attributes:
        lo, hi: the bounds, both finite (NaN and infinities are never in range).
        whole: whole numbers only (``3``, not ``3.0`` or ``1e3``).
        above: ``lo`` itself is excluded (a timeout must be more than 0 seconds).
        below: ``hi`` itself is excluded.
        words: words accepted as they are besides numbers (``auto``).
    """

    lo: float
    hi: float
    whole: bool = True
    above: bool = False
    below: bool = False
    words: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo <= self.hi):
            raise ValueError(f"a flag's range needs finite bounds, low to high: {self}")

    def __call__(self, text: str) -> int | float | str:
        typed = str(text).strip()
        if typed in self.words:
            return typed
        value = self._number(typed)
        if not self.contains(value):
            raise argparse.ArgumentTypeError(f"{_shown(typed)} is out of range {self.describe()}")
        return value

    def _number(self, typed: str) -> int | float:
        words = "".join(f" or {w}" for w in self.words)
        if self.whole:
            if _WHOLE.fullmatch(typed) is None:
                raise argparse.ArgumentTypeError(f"{_shown(typed)!r} is not a whole number{words}")
            try:
                return int(typed)
            except ValueError:  # more digits than Python converts: far out of any range
                raise argparse.ArgumentTypeError(
                    f"{_shown(typed)} is out of range {self.describe()}"
                ) from None
        try:
            return float(typed)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(typed)!r} is not a number{words}") from None

    def contains(self, value: float) -> bool:
        """Whether ``value`` is in range (NaN never is)."""
        if math.isnan(value):
            return False
        low_ok = value > self.lo if self.above else value >= self.lo
        high_ok = value < self.hi if self.below else value <= self.hi
        return low_ok and high_ok

    def describe(self) -> str:
        """The range as the error line says it: ``(0 … 2**63-1)``, ``(above 0 … 600)``."""
        lo = f"above {_bound(self.lo)}" if self.above else _bound(self.lo)
        hi = f"below {_bound(self.hi)}" if self.below else _bound(self.hi)
        words = "".join(f", or {w}" for w in self.words)
        return f"({lo} … {hi}{words})"


def _finite(bound: object) -> float:
    """A field's bound as a number.

    Raises:
        ValueError: the bound is not a number.
    """
    if isinstance(bound, (int, float)):
        return float(bound)
    raise ValueError(f"a flag's bound must be a number (got {bound!r})")


def setting(model: type[BaseModel], name: str, *, words: tuple[str, ...] = ()) -> Number:
    """The range of a pydantic field (its ``ge``/``gt``/``le``/``lt``), for the flag that sets it.

    Raises:
        ValueError: the field has no lower or no upper bound.
    """
    field = model.model_fields[name]
    lo = hi = math.nan
    above = below = False
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            lo = _finite(rule.ge)
        elif isinstance(rule, annotated_types.Gt):
            lo, above = _finite(rule.gt), True
        elif isinstance(rule, annotated_types.Le):
            hi = _finite(rule.le)
        elif isinstance(rule, annotated_types.Lt):
            hi, below = _finite(rule.lt), True
    if math.isnan(lo) or math.isnan(hi):
        raise ValueError(f"{model.__name__}.{name} has no range for a flag to take")
    whole = field.annotation is int or (
        int in get_args(field.annotation) and float not in get_args(field.annotation)
    )
    if whole:
        return Number(int(lo), int(hi), above=above, below=below, words=words)
    return Number(lo, hi, whole=False, above=above, below=below, words=words)


#: Seeds go into SQLite INTEGER columns (sessions, experiments, STORM batches).
SEED = Number(0, SQLITE_INT_MAX)
#: A row id (a rating plan's).
ROW_ID = Number(1, SQLITE_INT_MAX)
#: AI participants in one room: every listener costs several calls per message.
AGENTS = Number(1, 100)
#: Conversations or dialogues in flight at once in a batch.
BATCH_CONCURRENCY = Number(1, 1000)
#: A count of items asked for or required (predictions, rated pairs, sessions).
COUNT = Number(1, 1_000_000)
#: Simulated users' profiles made in one go.
PROFILES = Number(1, 10_000)
#: Seconds a write waits for another program's lock: up to a day (SQLite's own limit is about
#: 24 days in milliseconds).
BUSY_TIMEOUT = Number(0, 86_400, whole=False)

TURNS = setting(RoomSettings, "max_turns")
MAX_SILENT_STEPS = setting(RoomSettings, "max_silent_steps")
TIMEOUT = setting(LLMSettings, "timeout")
MAX_RETRIES = setting(LLMSettings, "max_retries")
LLM_CALLS = setting(LLMSettings, "concurrency")
LLM_CONCURRENCY = setting(LLMSettings, "concurrency", words=("auto",))
RATING_SAMPLES = setting(EngineSettings, "rating_samples")
PROBABILITY = Number(0, 1, whole=False)
