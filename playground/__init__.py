"""Thought Playground: Inner Thoughts agents in a shared chat room (the headless engine).

``import playground as pg`` gives the public API (docs/api.md), the names in :data:`__all__`. Each
is imported from its module on first use (PEP 562), so ``import playground`` itself loads no model
client, no torch, no pandas and no Qt: a command that never talks to a model starts at once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name → the module that defines it. The names are the stable API (docs/api.md).
_EXPORTS: dict[str, str] = {
    "Database": "playground.api.reading",
    "Experiment": "playground.api.reading",
    "ExportRecord": "playground.api.reading",
    "Frames": "playground.api.frames",
    "PlaygroundError": "playground.errors",
    "RatingPlan": "playground.api.reading",
    "Session": "playground.api.reading",
    "SessionNotFound": "playground.errors",
    "Study": "playground.api.reading",
    "StudyPlanStep": "playground.api.reading",
    "open": "playground.api.reading",
}

__all__ = [
    "Database",
    "Experiment",
    "ExportRecord",
    "Frames",
    "PlaygroundError",
    "RatingPlan",
    "Session",
    "SessionNotFound",
    "Study",
    "StudyPlanStep",
    "open",
]

if TYPE_CHECKING:  # what editors and mypy see; at run time __getattr__ imports on first use
    from playground.api.frames import Frames as Frames
    from playground.api.reading import Database as Database
    from playground.api.reading import Experiment as Experiment
    from playground.api.reading import ExportRecord as ExportRecord
    from playground.api.reading import RatingPlan as RatingPlan
    from playground.api.reading import Session as Session
    from playground.api.reading import Study as Study
    from playground.api.reading import StudyPlanStep as StudyPlanStep
    from playground.api.reading import open as open
    from playground.errors import PlaygroundError as PlaygroundError
    from playground.errors import SessionNotFound as SessionNotFound


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'playground' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without calling this again
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
