"""The offline composition of a profile's task part, name, description and example messages, and
the uncertainty mask: pure functions of the pools, the difficulty and a seeded ``random.Random``.

Vagueness follows one difficulty level (the content dimension by default: how much of what is
needed the user states). The measurable rule (tested): every requirement and success criterion
has a number or a unit at levels 1–2, about a third of requirements do at level 3, none do at
levels 4–5; level 4 adds a contradictory wish, level 5 hedges ("I think I need …"), adds a
knowledge gap ("I heard … is important but I'm not sure why") and a "not sure" entry.
"""

from __future__ import annotations

import random
import re
from typing import Literal

from playground.domain import simulated_user as model
from playground.storm import pools
from playground.storm.task_pools import CUSTOM_POOL, TASK_POOLS, Phrasing, TaskPool

#: Which difficulty dimension makes the requirements and success criteria vague: ``content``
#: (how much of what is needed the user states; the default) or ``level`` (the rounded mean of
#: the four, one number as in the paper's prompt).
VagueBy = Literal["content", "level"]
VAGUE_BY: tuple[VagueBy, ...] = ("content", "level")

#: The profile sections whose attributes count for the uncertainty share, in file order.
SECTIONS = ("base", "traits", "context", "task")
#: The task attributes the offline generator draws (appendix J.1 and K.2).
TASK_ATTRIBUTES = (
    "budget",
    "budget_flexibility",
    "payment_method",
    "knowledge",
    "urgency",
    "priorities",
    "nice_to_have",
    "deal_breaker",
)
_DIGIT = re.compile(r"\d")


def vagueness_level(difficulty: model.Difficulty, vague_by: VagueBy = "content") -> int:
    """The level (1–5) the requirements and success criteria are composed at."""
    return difficulty.content if vague_by == "content" else difficulty.level


def pool_of(task: str) -> TaskPool:
    """The pool of one of the 15 tasks, or the generic pool (its subject: the task's text)."""
    found = TASK_POOLS.get(task)
    if found is not None:
        return found
    text = task.strip().rstrip(".")
    return CUSTOM_POOL._replace(subject="help to " + _low(text))


def draw_section(rng: random.Random, pool: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """One value per key of an appendix H pool."""
    return {key: rng.choice(values) for key, values in pool.items()}


def draw_budget(rng: random.Random, pool: TaskPool) -> str:
    """A budget range inside the task's, in the task's steps ("$300–$600", "up to $40")."""
    lo, hi, step, unit = pool.budget
    steps = (hi - lo) // step
    a = lo + step * rng.randrange(steps)
    b = a + step * rng.randint(1, steps - (a - lo) // step)
    return (f"up to ${b:,}" if a == 0 else f"${a:,}–${b:,}") + unit


def draw_task_attributes(rng: random.Random, pool: TaskPool) -> dict[str, str]:
    """The task attributes of :data:`TASK_ATTRIBUTES`, drawn from the pools."""
    return {
        "budget": draw_budget(rng, pool),
        "budget_flexibility": rng.choice(pools.BUDGET_FLEXIBILITY),
        "payment_method": rng.choice(pools.PAYMENT_METHODS),
        "knowledge": rng.choice(pools.KNOWLEDGE_LEVELS),
        "urgency": rng.choice(pools.URGENCY_LEVELS),
        # the paper's "weighted importance list": the order is the weight
        "priorities": " > ".join(rng.sample(pools.DECISION_FACTORS, 3)),
        "nice_to_have": rng.choice(pool.nice_to_have),
        "deal_breaker": rng.choice(pool.deal_breakers),
    }


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _low(text: str) -> str:
    word = text.split(" ", 1)[0]
    return text if len(word) > 1 and word.isupper() else text[:1].lower() + text[1:]


def _budgeted(pool: TaskPool, budget: str) -> TaskPool:
    """The pool with the profile's budget written into its precise phrasings."""

    def fill(items: tuple[Phrasing, ...]) -> tuple[Phrasing, ...]:
        return tuple(p._replace(precise=p.precise.replace("{budget}", budget)) for p in items)

    return pool._replace(must_have=fill(pool.must_have), success=fill(pool.success))


def requirements(rng: random.Random, pool: TaskPool, level: int, budget: str) -> list[str]:
    """The task requirements, vaguer at a higher ``level`` (1–5; see the module docstring)."""
    chosen = rng.sample(_budgeted(pool, budget).must_have, 4 if level == 1 else 3)
    a, b = pool.conflict
    if level <= 2:
        return [p.precise for p in chosen]
    if level == 3:
        return [chosen[0].precise] + [_cap(p.vague) for p in chosen[1:]]
    if level == 4:
        return [_cap(p.vague) for p in chosen] + [f"{_cap(a)}, but also {b}"]
    gap = _low(rng.choice(pool.nice_to_have))
    return [f"{_cap(p.vague)}... I think?" for p in chosen[:2]] + [
        f"Maybe {a}? or {b}",
        f"I heard {gap} is important but I'm not sure why",
        "Not sure what else",
    ]


def success_criteria(rng: random.Random, pool: TaskPool, level: int, budget: str) -> list[str]:
    """How the user would judge the outcome, vaguer at a higher ``level``."""
    chosen = rng.sample(_budgeted(pool, budget).success, 2)
    if level <= 2:
        return [p.precise for p in chosen] + [f"Total cost within {budget}"]
    if level == 3:
        return [chosen[0].precise, _cap(chosen[1].vague)]
    if level == 4:
        return [_cap(p.vague) for p in chosen]
    return [f"I guess {chosen[0].vague}", "Not sure how I'd know it worked"]


#: What the texts say instead of a value the user does not know.
UNSURE = "an amount I'm not sure of"


def unquote(texts: list[str], value: str, *, limit: int | None = None) -> list[str]:
    """``texts`` with ``value`` (an attribute the user does not know) said as :data:`UNSURE`;
    with a ``limit``, a text that grows past it is cut at a word."""
    out = []
    for text in texts:
        said = text.replace(value, UNSURE)
        if limit and len(said) > limit:
            said = said[: limit - 1].rsplit(" ", 1)[0] + "…"
        out.append(said)
    return out


def is_precise(text: str) -> bool:
    """Whether a requirement states a number or a unit (the measurable side of vagueness)."""
    return bool(_DIGIT.search(text))


def pick_name(rng: random.Random, culture: str, avoid: frozenset[str] = frozenset()) -> str:
    """A first name fitting the culture, not one of ``avoid`` (compared case-insensitively)."""
    names = list(pools.NAMES.get(culture) or [n for ns in pools.NAMES.values() for n in ns])
    rng.shuffle(names)
    taken = {a.casefold() for a in avoid}
    free = [n for n in names if n.casefold() not in taken]
    if free:
        return free[0]
    everyone = [n for ns in pools.NAMES.values() for n in ns if n.casefold() not in taken]
    return everyone[0] if everyone else f"{names[0]}{len(avoid)}"


def describe(name: str, base: dict[str, str], context: dict[str, str], task: str) -> str:
    """A two-sentence description of the user and why they are here."""
    personality = base["personality"].lower()
    article = "an" if personality[:1] in "aeiou" else "a"
    return (
        f"{name} ({base['age_group']}, {base['culture']} background) is {article} {personality},"
        f" {base['decision_style'].lower()} decision-maker with"
        f" {base['tech_experience'].lower()} tech experience."
        f' Wants help with "{task.rstrip(".")}"; time: {context["time_constraint"].lower()},'
        f" asking from: {context['environment'].lower()}."
    )


def examples(
    rng: random.Random,
    pool: TaskPool,
    difficulty: model.Difficulty,
    *,
    budget: str,
) -> list[str]:
    """2–3 messages in the user's voice whose style follows the four difficulty dimensions.

    content sets what is said (the subject and a precise detail at 1–2, a vague one at 3, the
    vague subject at 4–5), style how it is put together (sentences at 1–2, one run-on line at 3,
    lowercase fragments at 4, shuffled fragments at 5), tone the feeling (neutral at 1–2, a little
    worry at 3, irritation at 4, swings at 5) and length how much is kept (short and complete at
    1–2, brief or rambling at 4–5). Every message is within the user's length limits (20–100).
    """
    pool = _budgeted(pool, budget)
    req = rng.choice(pool.must_have)
    answer_to = rng.choice([p for p in pool.must_have if p != req])
    c = difficulty.content
    if c <= 2:
        opening = [f"I need {pool.subject}", f"my budget is {budget}", _low(req.precise)]
        follow = [f"It must have: {_low(answer_to.precise)}"]
        react = ["That helps", "what are the next steps?"]
    elif c == 3:
        opening = [f"I need {pool.subject}", req.vague]
        follow = [f"What matters most: {answer_to.vague}"]
        react = ["Okay", "that sounds fine I think"]
    else:
        opening = [f"it's about {pool.vague_subject}"] + ([req.vague] if c == 4 else [])
        follow = [answer_to.vague, "i guess"]
        react = ["hmm", "not really what I meant"] if c == 4 else ["wait what", "no. well maybe"]
    messages = [opening, follow, react]
    count = 3 if difficulty.length <= 3 or rng.random() < 0.5 else 2
    return [
        _voice(parts, difficulty, rng, first=i == 0) for i, parts in enumerate(messages[:count])
    ]


#: Words of feeling put before or after a message, by tone level (1 none, 5 swinging).
_TONE_BEFORE: dict[int, tuple[str, ...]] = {
    1: ("",),
    2: ("Hello", "Hi"),
    3: ("", "Hmm"),
    4: ("ugh", "seriously", "come on"),
    5: ("ok great!!", "sorry", "yay"),
}
_TONE_AFTER: dict[int, tuple[str, ...]] = {
    1: ("",),
    2: ("thanks", ""),
    3: ("I'm a bit worried about it", "if that makes sense", ""),
    4: ("this is taking forever", "whatever", ""),
    5: ("this is so annoying", "sorry!!", "i hate this"),
}
_RAMBLE = "I mean, my neighbour said something about it too, not sure it matters, anyway"


def _voice(parts: list[str], d: model.Difficulty, rng: random.Random, *, first: bool) -> str:
    """One message from its parts, in the style, tone and length of the difficulty."""
    parts = [p for p in parts if p]
    limit = {1: 70, 2: 80, 3: 90}.get(d.length, 100)
    if d.length >= 4:
        brief = rng.random() < 0.5
        parts = parts[:1] if brief else [*parts, _RAMBLE]
        limit = 40 if brief else 100
    before = rng.choice(_TONE_BEFORE[d.tone]) if first or d.tone >= 4 else ""
    after = rng.choice(_TONE_AFTER[d.tone])
    parts = [p for p in (before, *parts, after) if p]
    if d.style >= 5 and len(parts) > 2:
        rest = parts[1:]
        rng.shuffle(rest)
        parts = [parts[0], *rest]
    if d.style <= 2:
        join, end = " ", "."
        parts = [_cap(p) if p[-1] in ".?!" else _cap(p) + "." for p in parts]
    elif d.style == 3:
        join, end = ", ", "."
        parts = [_cap(parts[0]), *parts[1:]]
    elif d.style == 4:
        join, end = ", ", ""
        parts = [p.lower() for p in parts]
    else:
        join, end = "... ", ""
        parts = [p.lower() for p in parts]
    return _fit(parts, join, end, limit)


def _fit(parts: list[str], join: str, end: str, limit: int) -> str:
    """The parts joined, dropping whole parts from the end to stay within ``limit`` characters,
    then within the user's length limits (20–100)."""
    low, high = model.USER_LENGTH
    limit = min(limit, high)
    kept = list(parts)
    while len(kept) > 1 and len(join.join(kept) + end) > limit:
        kept.pop()
    text = join.join(kept).rstrip(".?!, ") + ("?" if kept[-1].endswith("?") else end)
    if len(text) > high:
        text = text[: high - 1].rsplit(" ", 1)[0] + "…"
    for filler in (", can you help?", " please", " please help"):
        if len(text) >= low:
            break
        text = text.rstrip("?.") + filler
    return text


# -- the uncertainty mask ------------------------------------------------------------------


def attribute_keys(profile: model.UserProfile) -> list[str]:
    """Every attribute that counts for the uncertainty share, as ``"section.key"``, in file
    order: base, traits, context and the task attributes (the task itself, its requirements and
    success criteria do not count)."""
    sections = {
        "base": profile.base,
        "traits": profile.traits,
        "context": profile.context,
        "task": profile.task.attributes,
    }
    return [f"{s}.{k}" for s in SECTIONS for k in sections[s]]


def unknown_count(uncertainty: int, attributes: int) -> int:
    """How many of ``attributes`` an ``uncertainty`` (%) hides: ``round(p/100 × n)``.

    For the allowed levels (0, 40, 60, 80) p·n/100 is never halfway between two integers, so the
    rounding rule never has to break a tie.
    """
    return round(uncertainty * attributes / 100)


def choose_unknown(keys: list[str], uncertainty: int, seed: int, task: str) -> list[str]:
    """The attributes an uncertainty hides, in the order of ``keys``, drawn by seed and task
    (one seed gives each task's user their own gaps).

    One seeded order of the attributes serves every level: the unknown set at 40 % is part of
    the one at 60 %, which is part of the one at 80 % (the same user knowing less, so levels can
    be compared pairwise).
    """
    order = sorted(keys)
    random.Random(f"{seed}:{task.casefold()}:mask").shuffle(order)
    hidden = set(order[: unknown_count(uncertainty, len(keys))])
    return [k for k in keys if k in hidden]


def remask(profile: model.UserProfile, uncertainty: int, seed: int) -> model.UserProfile:
    """The profile masked at ``uncertainty`` (not checked here) by ``seed``; a budget that becomes
    unknown is no longer quoted by the requirements, success criteria and examples."""
    unknown = choose_unknown(attribute_keys(profile), uncertainty, seed, profile.task.task)
    update: dict[str, object] = {"uncertainty": uncertainty, "unknown": unknown}
    budget = profile.task.attributes.get("budget", "")
    if budget and "task.budget" in unknown and "task.budget" not in profile.unknown:
        t = profile.task
        update["task"] = t.model_copy(
            update={
                "requirements": unquote(t.requirements, budget),
                "success_criteria": unquote(t.success_criteria, budget),
            }
        )
        update["examples"] = unquote(profile.examples, budget, limit=model.USER_LENGTH[1])
    return profile.model_copy(update=update)
