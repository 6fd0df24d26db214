"""Build rooms for tests from the real factory, personas and embedder."""

from __future__ import annotations

from typing import Any

from playground import domain, events, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.settings import Settings

#: Every table holding rows of one session (for tests that count what a session owns).
SESSION_TABLES = (
    "participants",
    "memories",
    "messages",
    "thoughts",
    "evaluations",
    "decisions",
    "events",
    "annotations",
    "labels",
    "ratings",
    "turn_marks",
    "predictions",
    "hidden_states",
    "storm_dialogues",
    "storm_judgements",
)


def persona(
    name: str, facts: list[str], memories: list[dict[str, Any]] | None = None
) -> domain.Persona:
    return domain.Persona(
        id=name.lower(),
        name=name,
        facts=facts,
        memories=[domain.PersonaMemory(**m) for m in memories or []],
    )


def library(n: int) -> list[domain.Persona]:
    return personas.load_personas()[:n]


async def build(
    settings: Settings,
    embedder: CachingEmbedder | None,
    people: list[domain.Persona],
    *,
    db: Any = None,
    bus: events.EventBus | None = None,
    cognition: Any = None,
    policies: dict[str, Any] | None = None,
    policy: str | None = None,
):
    """A started room; returns (room, engine, events list). ``policies`` (by name) or ``policy``
    (for everyone) set the agents' turn-taking policies."""
    if policy is not None:
        policies = dict.fromkeys((p.name for p in people), policy)
    engine = await factory.build_engine(settings, embedder=embedder)
    if cognition is not None:
        engine.cognition = cognition
    bus = bus or events.EventBus(strict=True)
    seen: list[Any] = []
    bus.subscribe(seen.append)
    room, _ = await factory.create_room(
        settings, engine, db=db, personas=people, bus=bus, policies=policies
    )
    return room, engine, seen


def of(kind: type, seen: list[Any]) -> list[Any]:
    return [e for e in seen if isinstance(e, kind)]


def listener_count(seen: list[Any]) -> int:
    """Agents that thought at each trigger, summed over the run (L summed over triggers)."""
    return sum(
        len({e.agent for e in seen if isinstance(e, events.MemoriesRetrieved) and e.step == t.step})
        for t in seen
        if isinstance(t, events.TriggerFired)
    )
