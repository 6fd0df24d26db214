"""Simulated users' profiles: drawn from the paper's pools by seed, masked by uncertainty,
enriched by a language model, saved as TOML files (docs/spec.md §2.2; STORM appendices H–K).

The offline generator is the product's own (no model needed) and deterministic by seed: every
draw comes from ``random.Random(f"{seed}:{task}:{part}")``, never the global generator, so the
same seed and task give the same person, and one seed over different tasks gives different people.
The TOML files are read and written by :mod:`playground.storm.profile_files` (re-exported here).
"""

from __future__ import annotations

import logging
import random
import unicodedata
from collections.abc import Iterable

from playground import errors
from playground.domain import simulated_user as model
from playground.storm import compose, pools
from playground.storm.compose import VAGUE_BY, VagueBy
from playground.storm.enrich import enrich_profile
from playground.storm.profile_files import (
    DEFAULT_DIR,
    dump_profile,
    load_profile,
    load_profiles,
    save_profile,
    scan_profiles,
)

__all__ = [
    "DEFAULT_DIR",
    "VAGUE_BY",
    "VagueBy",
    "dump_profile",
    "enrich_profile",
    "find_task",
    "generate_profile",
    "load_profile",
    "load_profiles",
    "save_profile",
    "scan_profiles",
    "with_uncertainty",
]

log = logging.getLogger(__name__)

#: Every known task by its case-folded name: ``(category, task)``.
_KNOWN = {t.casefold(): (c, t) for c, ts in pools.TASKS.items() for t in ts}


def all_tasks() -> list[tuple[str, str]]:
    """The 15 tasks of appendix I as ``(category, task)``, category by category."""
    return [(c, t) for c, ts in pools.TASKS.items() for t in ts]


def find_task(text: str) -> tuple[str, str]:
    """The category and task for a task name or free text.

    A known task name is matched case-insensitively and with its spaces normalised
    (``"buy a  Smartphone"`` → ``("technology", "Buy a smartphone")``); any other text is kept
    as the task, in the category ``"custom"``, and drawn from the generic pools.

    Raises:
        SettingsError: the text is empty or longer than 200 characters (field ``task``).
    """
    clean = " ".join(text.split())
    if not clean:
        raise errors.SettingsError(
            "task: give a task (one of the 15, or your own words)", field="task", reason="empty"
        )
    if len(clean) > 200:
        raise errors.SettingsError(
            f"task: {len(clean)} characters is too long (at most 200)",
            field="task",
            reason="longer than 200 characters",
        )
    return _KNOWN.get(clean.casefold().rstrip("."), (pools.CUSTOM_CATEGORY, clean))


def check_uncertainty(uncertainty: object) -> int:
    """Raises: SettingsError naming the value and the allowed ones."""
    if isinstance(uncertainty, bool) or uncertainty not in model.UNCERTAINTIES:
        allowed = ", ".join(str(u) for u in model.UNCERTAINTIES)
        raise errors.SettingsError(
            f"uncertainty: {uncertainty!r} is not allowed; choose one of {allowed} (%)",
            field="uncertainty",
            reason=f"must be one of {allowed}",
        )
    return int(uncertainty)


def _difficulty(value: int | model.Difficulty | None, rng: random.Random) -> model.Difficulty:
    if isinstance(value, model.Difficulty):
        return value
    if value is None:
        return model.Difficulty(
            style=rng.randint(1, 5),
            length=rng.randint(1, 5),
            content=rng.randint(1, 5),
            tone=rng.randint(1, 5),
        )
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise errors.SettingsError(
            f"difficulty: {value!r} is not a level from 1 (precise) to 5 (ambiguous)",
            field="difficulty",
            reason="must be from 1 to 5",
        )
    return model.Difficulty(style=value, length=value, content=value, tone=value)


def slug(text: str) -> str:
    """A file-name-safe form of a task ("Buy a smartphone" → "buy-a-smartphone")."""
    plain = unicodedata.normalize("NFKD", text.casefold())
    word = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in plain)
    return "-".join(filter(None, word.split("-")))[:60] or "task"


def generate_profile(
    seed: int,
    *,
    task: str | None = None,
    difficulty: int | model.Difficulty | None = None,
    uncertainty: int = 0,
    avoid_names: Iterable[str] = (),
    vague_by: VagueBy = "content",
) -> model.UserProfile:
    """A simulated user's profile composed offline from the pools.

    Args:
        seed: the same seed (and arguments) always gives the same profile.
        task: one of the 15 tasks (any case) or free text (category ``custom``); None draws one.
        difficulty: one level for all four dimensions, a :class:`~model.Difficulty`, or None to
            draw each dimension from 1 to 5.
        uncertainty: the share of attributes (%) unknown to the user: 0, 40, 60 or 80.
        avoid_names: names already taken (another profile of the same batch, a persona).
        vague_by: the difficulty dimension the requirements' vagueness follows.

    Returns:
        The profile; its id is ``<task slug>-s<seed>``, its origin ``"offline pools"``.

    Raises:
        SettingsError: a task, difficulty, uncertainty or ``vague_by`` that is not allowed,
            naming the value.
    """
    unc = check_uncertainty(uncertainty)
    if vague_by not in VAGUE_BY:
        raise errors.SettingsError(
            f"vague_by: {vague_by!r} is not one of {', '.join(VAGUE_BY)}", field="vague_by"
        )
    if task is None:
        category, name = random.Random(f"{seed}:task").choice(all_tasks())
    else:
        category, name = find_task(task)

    def rng(part: str) -> random.Random:
        return random.Random(f"{seed}:{name.casefold()}:{part}")

    diff = _difficulty(difficulty, rng("difficulty"))
    level = compose.vagueness_level(diff, vague_by)
    pool = compose.pool_of(name)
    base = compose.draw_section(rng("base"), pools.BASE)
    traits = compose.draw_section(rng("traits"), pools.TRAITS)
    context = compose.draw_section(rng("context"), pools.CONTEXT)
    attributes = compose.draw_task_attributes(rng("attributes"), pool)
    who = compose.pick_name(rng("name"), base["culture"], frozenset(avoid_names))
    profile = model.UserProfile(
        id=f"{slug(name)}-s{seed}",
        name=who,
        description=compose.describe(who, base, context, name),
        base=base,
        traits=traits,
        context=context,
        task=model.TaskProfile(
            category=category,
            task=name,
            attributes=attributes,
            requirements=compose.requirements(
                rng("requirements"), pool, level, attributes["budget"]
            ),
            success_criteria=compose.success_criteria(
                rng("success"), pool, level, attributes["budget"]
            ),
        ),
        difficulty=diff,
        examples=compose.examples(rng("examples"), pool, diff, budget=attributes["budget"]),
        seed=seed,
    )
    return with_uncertainty(profile, unc, seed)


def with_uncertainty(profile: model.UserProfile, uncertainty: int, seed: int) -> model.UserProfile:
    """The profile with ``round(uncertainty/100 × n)`` of its n attributes unknown to the user.

    The n attributes are those of base, traits, context and the task's attributes together
    (:func:`playground.storm.compose.attribute_keys`); which ones is chosen by ``seed``, and the
    unknown set of a lower level is part of that of a higher one for the same seed.

    The budget is the one attribute the composed texts quote: when it becomes unknown, the
    requirements, success criteria and examples say "an amount I'm not sure of" instead (mask
    the original profile again to get it back).

    Raises:
        SettingsError: ``uncertainty`` is not 0, 40, 60 or 80, naming the value.
    """
    return compose.remask(profile, check_uncertainty(uncertainty), seed)
