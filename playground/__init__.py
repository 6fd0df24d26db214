"""Thought Playground: Inner Thoughts agents in a shared chat room (the headless engine)."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__version__ = "0.1.0"

# -- running from Python (issue 35 point 1, branch s38-api) ------------------------------------
# Exported lazily: `import playground` loads none of the engines (openai, torch), which a name
# of playground.api.running loads only once it is first used.
_RUNNING = {
    **dict.fromkeys(
        ("simulate", "simulate_async", "experiment", "experiment_async", "storm", "storm_async"),
        "playground.api.running",
    ),
    **dict.fromkeys(("ServerOptions", "BatchOptions"), "playground.api.running"),
    **dict.fromkeys(("SessionResult", "BatchResult", "BatchRun"), "playground.api.results"),
    **dict.fromkeys(
        ("persona", "default_personas", "load_personas", "generate_profiles", "load_profiles"),
        "playground.api.people",
    ),
    **dict.fromkeys(("Persona", "PersonaMemory"), "playground.domain"),
    **dict.fromkeys(
        ("UserProfile", "TaskProfile", "Difficulty"), "playground.domain.simulated_user"
    ),
    **dict.fromkeys(
        ("Settings", "LLMSettings", "EngineSettings", "RoomSettings", "ProactivitySettings"),
        "playground.settings",
    ),
}

__all__ = ["__version__", *_RUNNING]


def __getattr__(name: str) -> object:
    module = _RUNNING.get(name)
    if module is None:
        raise AttributeError(f"module 'playground' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


class _Playground(types.ModuleType):
    """The package, whose ``storm`` is always ``pg.storm(...)``.

    ``playground.storm`` is also the STORM subpackage, and importing it sets the package as the
    attribute ``storm`` here, over the function. Imports of it go through ``sys.modules``
    (``from playground.storm import run``), so the attribute is free for the function; the
    subpackage stays reachable as ``sys.modules["playground.storm"]``.
    """

    @property
    def storm(self) -> Any:
        return importlib.import_module(_RUNNING["storm"]).storm

    @storm.setter
    def storm(self, module: types.ModuleType) -> None:
        self.__dict__["_storm_package"] = module


sys.modules[__name__].__class__ = _Playground


# -- end of running from Python -----------------------------------------------------------------
