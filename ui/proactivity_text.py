"""How the window names an agent's proactivity: its preset (or "custom") and its thresholds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from playground.settings import PRESETS, ProactivitySettings


def preset_of(proactivity: ProactivitySettings | Mapping[str, Any]) -> str:
    """The name of the preset these settings are exactly, else ``custom``."""
    p = _settings(proactivity)
    for name, preset in PRESETS.items():
        if preset == p:
            return name
    return "custom"


def thresholds(proactivity: ProactivitySettings | Mapping[str, Any]) -> str:
    """One line: ``imThreshold 3.95 · interruptThreshold 4.8 · System-1 chance 0.1 · …``."""
    p = _settings(proactivity)
    tone = "proactive tone" if p.proactive_tone else "plain tone"
    return (
        f"imThreshold {p.im_threshold:g} · interruptThreshold {p.interrupt_threshold:g}"
        f" · System-1 chance {p.system1_prob:g} · {tone}"
        f" · {p.system1_count} System-1 + {p.system2_count} System-2 thoughts per trigger"
    )


def summary(proactivity: ProactivitySettings | Mapping[str, Any]) -> str:
    """``active-contributor preset (imThreshold 3.59 · …)`` or ``custom (…)``."""
    name = preset_of(proactivity)
    label = "custom" if name == "custom" else f"{name} preset"
    return f"{label} ({thresholds(proactivity)})"


def _settings(proactivity: ProactivitySettings | Mapping[str, Any]) -> ProactivitySettings:
    if isinstance(proactivity, ProactivitySettings):
        return proactivity
    return ProactivitySettings(**dict(proactivity))
