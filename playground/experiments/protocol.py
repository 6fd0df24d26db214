"""What defines an experiment of the simulation study, and its paired draws.

docs/spec.md §1.9.2 (the simulation study): 8 personas, each enriched with 2 facts borrowed
from other personas; per conversation 4 participants drawn at random, a random initiator and one
of 10 icebreakers; 15 turns; 50 conversations per condition. Every condition runs on the **same
draws** (a paired design): draw *i* of every condition has the same participants, initiator,
icebreaker and seed, all from the protocol's seed alone (:func:`draws`).

The experiment id is a hash of the protocol (conditions, sizes, seed, personas, icebreakers,
engine and model; :func:`protocol_id`): rerunning the same command finds the same experiment and
resumes it. The command line and the window build the protocol with the same function
(:func:`build_protocol`), so either resumes the other's experiment.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from playground import domain, errors, personas
from playground.settings import Settings

#: Facts each persona borrows from the other personas (docs/spec.md §1.9.2).
BORROWED_FACTS = 2


class BatchProtocol(BaseModel):
    """What every batch of runs (an experiment, a STORM batch) is defined by besides its design:
    the engine and model it runs on. Its id is a hash of the whole protocol."""

    model_config = ConfigDict(frozen=True)

    #: What the batch's id starts with (``x`` an experiment, ``s`` a STORM batch).
    id_prefix: ClassVar[str]

    engine: str
    model: str
    base_url: str | None = None

    @property
    def experiment_id(self) -> str:
        return protocol_id(self, self.id_prefix)


class ExperimentProtocol(BatchProtocol):
    """What defines an experiment; its id is a hash of this."""

    id_prefix = "x"

    conditions: tuple[domain.Policy, ...] = Field(min_length=1)
    conversations: int = Field(ge=1, le=100_000)
    agents: int = Field(ge=1)
    turns: int = Field(ge=1, le=10_000)
    seed: int
    personas: tuple[domain.Persona, ...]
    icebreakers: tuple[str, ...] = Field(min_length=1)


def protocol_id(protocol: BaseModel, prefix: str) -> str:
    """An experiment's id: ``prefix`` and a hash of its protocol, so the same protocol (the same
    command) finds the same experiment again."""
    text = json.dumps(protocol.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return prefix + hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Draw:
    """One conversation of the design, the same for every condition."""

    index: int
    seed: int
    participants: tuple[str, ...]
    initiator: str
    icebreaker: str


def enrich(
    personas: Sequence[domain.Persona], seed: int, k: int = BORROWED_FACTS
) -> list[domain.Persona]:
    """Each persona with ``k`` facts borrowed from the other personas, drawn by seed
    (docs/spec.md §1.9.2).

    Facts already held are never borrowed twice; a persona keeps its own facts first.
    """
    out: list[domain.Persona] = []
    for p in personas:
        rng = random.Random(f"{seed}:enrich:{p.id}")
        mine = set(p.facts)
        pool = sorted({f for q in personas if q.id != p.id for f in q.facts if f not in mine})
        borrowed = rng.sample(pool, min(k, len(pool)))
        facts = [*p.facts, *borrowed][:20]  # a persona holds at most 20 facts
        out.append(p.model_copy(update={"facts": facts}))
    return out


def draws(protocol: ExperimentProtocol) -> list[Draw]:
    """Every conversation's participants, initiator, icebreaker and seed, from the seed alone."""
    names = [p.name for p in protocol.personas]
    out = []
    for i in range(protocol.conversations):
        rng = random.Random(f"{protocol.seed}:draw:{i}")
        chosen = rng.sample(names, protocol.agents)
        out.append(
            Draw(
                index=i,
                seed=rng.randrange(2**31),
                participants=tuple(sorted(chosen, key=names.index)),
                initiator=rng.choice(chosen),
                icebreaker=rng.choice(protocol.icebreakers),
            )
        )
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → (K, N) with 0 ≤ K < N.

    Raises:
        SettingsError: not of that form.
    """
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise errors.SettingsError(
            f"--shard: {text!r} is not K/N (e.g. 0/4: every 4th conversation starting at 0)"
        ) from None
    if n < 1 or not 0 <= k < n:
        raise errors.SettingsError(f"--shard: {text!r} needs 0 ≤ K < N (K counts from 0)")
    return k, n


def build_protocol(
    settings: Settings,
    *,
    conditions: tuple[domain.Policy, ...],
    conversations: int,
    agents: int,
    turns: int,
    seed: int,
    personas_dir: str | Path,
    library: Sequence[domain.Persona] | None = None,
) -> ExperimentProtocol:
    """The protocol from plain values (the command line's flags, the window's New experiment
    dialog): the same values give the same protocol, hence the same experiment id.

    The personas are ``personas_dir``'s, or ``library`` when given (built in code); the
    icebreakers are always ``personas_dir``'s.

    Raises:
        SettingsError: a value out of range (named by its flag); PersonaError: a bad persona
            file.
    """
    if not conditions:
        raise errors.SettingsError("--conditions: give at least one condition")
    if conversations < 1:
        raise errors.SettingsError(f"--conversations: must be at least 1 (got {conversations})")
    if turns < 1:
        raise errors.SettingsError(f"--turns: must be at least 1 (got {turns})")
    where = "the personas given" if library is not None else str(personas_dir)
    library = list(library) if library is not None else personas.load_personas(personas_dir)
    if not 1 <= agents <= len(library):
        raise errors.SettingsError(
            f"--agents: {agents} asked but {where} has {len(library)} personas"
        )
    enriched = enrich(library, seed)
    return ExperimentProtocol(
        conditions=conditions,
        conversations=conversations,
        agents=agents,
        turns=turns,
        seed=seed,
        personas=tuple(enriched),
        icebreakers=tuple(personas.load_icebreakers(personas_dir)),
        engine=settings.engine.engine,
        model="offline" if settings.engine.engine == "offline" else settings.llm.model,
        base_url=None
        if settings.engine.engine == "offline"
        else settings.snapshot()["llm"]["base_url"],  # type: ignore[index]
    )
