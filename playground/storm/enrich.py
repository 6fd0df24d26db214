"""A language model fills in an offline profile: name, description, task-specific attributes,
requirements, success criteria and example messages (STORM appendices J.2 and K; our wording).

The pools' values stay: the model may add task attributes, never change the drawn ones. Whatever
the model leaves out or gets wrong (an empty list, a name with spaces, examples outside the length
limits, an answer that is not JSON at all) keeps the offline composition, and a note says so.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from playground import errors
from playground.domain import simulated_user as model
from playground.storm import compose

if TYPE_CHECKING:
    from playground.llm.client import ChatClient

log = logging.getLogger(__name__)

#: At most this many task attributes are taken from the model (besides the drawn ones).
MAX_NEW_ATTRIBUTES = 8
_NAME = re.compile(r"^[^\W\d_][\w'-]{0,39}$")


class AttributeOut(BaseModel):
    name: str = Field(description="snake_case, e.g. usage_scenarios, preferred_brands, timeline")
    value: str = Field(description="a short value; a list written as 'a; b; c'")


class ProfileOut(BaseModel):
    """The model's answer; a key it leaves out keeps the offline composition."""

    name: str = Field("", description="a first name only, one word, fitting the culture")
    description: str = Field("", description="2-3 sentences: who they are, why this task now")
    task_attributes: list[AttributeOut] = []
    requirements: list[str] = []
    success_criteria: list[str] = []
    examples: list[str] = Field([], description="2-3 messages this person would send, 20-100 chars")


_SYSTEM = f"""\
You write the private profile of a person who will be role-played talking to an AI assistant about \
a task. The person was drawn at random from fixed attribute pools; you make them concrete and \
believable. Keep every given value as it is. Answer with one JSON object only.

Its keys:
- name: a realistic first name (one word) that fits the culture;
- description: 2-3 sentences on their background, personality and why they want this task done now;
- task_attributes: 3-6 task-specific attributes not given in the profile (e.g. usage_scenarios, \
preferred_brands, timeline, purchase_location), consistent with the profile;
- requirements: 3-5 things the task must achieve for them, in their own words;
- success_criteria: 2-3 ways they would judge the outcome;
- examples: 2-3 opening messages they might send the assistant, each \
{model.USER_LENGTH[0]}-{model.USER_LENGTH[1]} characters, whose style, length, content and tone \
follow the difficulty given."""

_VAGUENESS = {
    1: "state every requirement and criterion precisely, each with a number or a unit",
    2: "state them precisely, each with a number or a unit",
    3: "make one precise (with a number) and the others loose, like 'something modern'",
    4: "make all loose (no numbers or units) and include two wishes that contradict each other",
    5: (
        "make them unclear: no numbers, hedged ('I think I need...'), one knowledge gap ('I heard"
        " X matters but I'm not sure why'), one 'not sure' entry, and some muddled technical terms"
    ),
}
_DIMENSIONS = {
    "style": ("well-organised, logical", "disorganised, jumping around"),
    "length": ("concise but complete", "either far too short or rambling"),
    "content": ("every needed detail given", "key details left out"),
    "tone": ("calm and fitting", "emotions swinging or out of place"),
}


def _known(profile: model.UserProfile) -> dict[str, object]:
    return {
        "base profile": profile.base,
        "behavioural traits": profile.traits,
        "context": profile.context,
        "task": {"category": profile.task.category, "task": profile.task.task},
        "task attributes (keep these values)": profile.task.attributes,
        "what they do not know about themselves": profile.unknown,
    }


def enrichment_messages(
    profile: model.UserProfile, *, vague_by: compose.VagueBy = "content"
) -> list[dict[str, str]]:
    """The chat messages asking a model to fill in ``profile``."""
    d = profile.difficulty
    level = compose.vagueness_level(d, vague_by)
    dims = "\n".join(
        f"- {name} {getattr(d, name)}: 1 = {lo}, 5 = {hi}" for name, (lo, hi) in _DIMENSIONS.items()
    )
    user = f"""\
Profile:
{json.dumps(_known(profile), indent=2, ensure_ascii=False)}

Task: {profile.task.task}
Difficulty (1 = precise ... 5 = ambiguous), per dimension:
{dims}
Requirements and success criteria are at difficulty {level}: {_VAGUENESS[level]}.
Nothing you write may state what they do not know about themselves.

Write their profile."""
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def _strings(items: list[str], *, most: int, length: tuple[int, int] = (1, 200)) -> list[str]:
    lo, hi = length
    clean = [" ".join(i.split()) for i in items]
    return [c for c in clean if lo <= len(c) <= hi][:most]


def _attribute_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")[:40]


async def enrich_profile(
    profile: model.UserProfile,
    client: ChatClient,
    *,
    vague_by: compose.VagueBy = "content",
    notes: list[str] | None = None,
) -> model.UserProfile:
    """The profile filled in by the client's model; what it cannot give stays offline.

    The uncertainty mask is drawn again over the attributes the model added (the same share of
    the larger set, with the profile's seed).

    Args:
        profile: an offline profile (:func:`playground.storm.profiles.generate_profile`).
        client: the chat client of the model.
        vague_by: the difficulty dimension the requirements' vagueness follows.
        notes: receives one line per field the model did not give usably (or for a whole answer
            that could not be read): nothing in it means the model gave everything.

    Returns:
        The profile; its ``origin`` is the model's name, followed by ``+ offline pools (…)``
        naming the fields kept from the offline composition, or unchanged when the model's answer
        could not be read at all.

    Raises:
        LLMError: the server could not be reached or refused the call (a bad answer is not an
            error: it keeps the offline composition).
    """
    said = notes if notes is not None else []
    try:
        res = await client.chat_json(
            f"profile of {profile.name}",
            enrichment_messages(profile, vague_by=vague_by),
            ProfileOut,
            max_tokens=1200,
        )
    except errors.LLMOutputError as exc:
        said.append(
            f"{client.model} gave no readable profile for {profile.id} ({exc});"
            " kept the offline composition"
        )
        log.warning("%s", said[-1])
        return profile
    out: ProfileOut = res.parsed
    update: dict[str, object] = {}
    kept: list[str] = []

    name = out.name.strip().split(" ")[0].strip(".,;:") if out.name.strip() else ""
    if _NAME.match(name):
        update["name"] = name
    else:
        kept.append("name")
    description = " ".join(out.description.split())
    if 20 <= len(description) <= 800:
        update["description"] = description
    else:
        kept.append("description")
    attributes = dict(profile.task.attributes)
    added = 0
    for item in out.task_attributes:
        key, value = _attribute_key(item.name), " ".join(item.value.split())
        if key and value and key not in attributes and len(value) <= 200:
            attributes[key] = value
            added += 1
        if added == MAX_NEW_ATTRIBUTES:
            break
    if not added:
        kept.append("task attributes")
    task_update: dict[str, object] = {"attributes": attributes}
    for field, most in (("requirements", 8), ("success_criteria", 5)):
        items = _strings(getattr(out, field), most=most)
        if items:
            task_update[field] = items
        else:
            kept.append(field.replace("_", " "))
    update["task"] = profile.task.model_copy(update=task_update)
    examples = _strings(out.examples, most=3, length=model.USER_LENGTH)
    if len(examples) >= 2:
        update["examples"] = examples
    else:
        kept.append("examples")

    if len(kept) == 6:
        said.append(
            f"{client.model} gave nothing usable for {profile.id}; kept the offline composition"
        )
        return profile
    if kept:
        said.append(
            f"{client.model} gave no usable {', '.join(kept)} for {profile.id};"
            " kept the offline composition for them"
        )
    update["origin"] = client.model + (f" + offline pools ({', '.join(kept)})" if kept else "")
    enriched = model.UserProfile.model_validate({**profile.model_dump(), **_dumped(update)})
    return compose.remask(
        enriched, enriched.uncertainty, profile.seed if profile.seed is not None else 0
    )


def _dumped(update: dict[str, object]) -> dict[str, object]:
    return {k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in update.items()}
