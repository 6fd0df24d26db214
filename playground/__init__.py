"""Thought Playground: Inner Thoughts agents in a shared chat room (the headless engine).

``import playground as pg`` gives the public API (docs/api.md), the names in :data:`__all__`. Each
is imported from its module on first use (PEP 562), so ``import playground`` itself loads no model
client, no torch, no pandas and no Qt: a command that never talks to a model starts at once.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name → the module that defines it. The names are the stable API (docs/api.md).
_EXPORTS: dict[str, str] = {
    "BatchOptions": "playground.api.options",
    "BatchResult": "playground.api.results",
    "BatchRun": "playground.api.results",
    "Database": "playground.api.reading",
    "Difficulty": "playground.api.people",
    "EngineSettings": "playground.api.running",
    "Experiment": "playground.api.reading",
    "ExportRecord": "playground.api.reading",
    "Frames": "playground.api.frames",
    "LLMSettings": "playground.api.running",
    "Persona": "playground.api.people",
    "PersonaMemory": "playground.api.people",
    "PlaygroundError": "playground.errors",
    "RatingPlan": "playground.api.reading",
    "RoomSettings": "playground.api.running",
    "ServerOptions": "playground.api.options",
    "Session": "playground.api.reading",
    "SessionNotFound": "playground.errors",
    "SessionResult": "playground.api.results",
    "Settings": "playground.api.running",
    "Study": "playground.api.reading",
    "StudyPlanStep": "playground.api.reading",
    "TaskProfile": "playground.api.people",
    "UserProfile": "playground.api.people",
    "default_personas": "playground.api.people",
    "experiment": "playground.api.running",
    "experiment_async": "playground.api.running",
    "generate_profiles": "playground.api.people",
    "load_personas": "playground.api.people",
    "load_profiles": "playground.api.people",
    "open": "playground.api.reading",
    "persona": "playground.api.people",
    "simulate": "playground.api.running",
    "simulate_async": "playground.api.running",
    "storm": "playground.api.running",
    "storm_async": "playground.api.running",
}

__all__ = [
    "BatchOptions",
    "BatchResult",
    "BatchRun",
    "Database",
    "Difficulty",
    "EngineSettings",
    "Experiment",
    "ExportRecord",
    "Frames",
    "LLMSettings",
    "Persona",
    "PersonaMemory",
    "PlaygroundError",
    "RatingPlan",
    "RoomSettings",
    "ServerOptions",
    "Session",
    "SessionNotFound",
    "SessionResult",
    "Settings",
    "Study",
    "StudyPlanStep",
    "TaskProfile",
    "UserProfile",
    "default_personas",
    "experiment",
    "experiment_async",
    "generate_profiles",
    "load_personas",
    "load_profiles",
    "open",
    "persona",
    "simulate",
    "simulate_async",
    "storm",
    "storm_async",
]

if TYPE_CHECKING:  # what editors and mypy see; at run time __getattr__ imports on first use
    from playground.api.frames import Frames as Frames
    from playground.api.options import BatchOptions as BatchOptions
    from playground.api.options import ServerOptions as ServerOptions
    from playground.api.people import Difficulty as Difficulty
    from playground.api.people import Persona as Persona
    from playground.api.people import PersonaMemory as PersonaMemory
    from playground.api.people import TaskProfile as TaskProfile
    from playground.api.people import UserProfile as UserProfile
    from playground.api.people import default_personas as default_personas
    from playground.api.people import generate_profiles as generate_profiles
    from playground.api.people import load_personas as load_personas
    from playground.api.people import load_profiles as load_profiles
    from playground.api.people import persona as persona
    from playground.api.reading import Database as Database
    from playground.api.reading import Experiment as Experiment
    from playground.api.reading import ExportRecord as ExportRecord
    from playground.api.reading import RatingPlan as RatingPlan
    from playground.api.reading import Session as Session
    from playground.api.reading import Study as Study
    from playground.api.reading import StudyPlanStep as StudyPlanStep
    from playground.api.reading import open as open
    from playground.api.results import BatchResult as BatchResult
    from playground.api.results import BatchRun as BatchRun
    from playground.api.results import SessionResult as SessionResult
    from playground.api.running import EngineSettings as EngineSettings
    from playground.api.running import LLMSettings as LLMSettings
    from playground.api.running import RoomSettings as RoomSettings
    from playground.api.running import Settings as Settings
    from playground.api.running import experiment as experiment
    from playground.api.running import experiment_async as experiment_async
    from playground.api.running import simulate as simulate
    from playground.api.running import simulate_async as simulate_async
    from playground.api.running import storm as storm
    from playground.api.running import storm_async as storm_async
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


class _Playground(types.ModuleType):
    """The package, whose ``storm`` is always ``pg.storm(...)``.

    ``playground.storm`` is also the STORM subpackage, and importing it sets the package as the
    attribute ``storm`` here, over the function. Imports of it go through ``sys.modules``
    (``from playground.storm import run``), so the attribute is free for the function; the
    subpackage stays reachable as ``sys.modules["playground.storm"]``.
    """

    @property
    def storm(self) -> Any:
        return importlib.import_module(_EXPORTS["storm"]).storm

    @storm.setter
    def storm(self, module: types.ModuleType) -> None:
        self.__dict__["_storm_package"] = module


sys.modules[__name__].__class__ = _Playground
