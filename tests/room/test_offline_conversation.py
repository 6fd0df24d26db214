"""The offline engine's conversations read well: the paper's simulation protocol, run offline.

Six conversations as ``bench/bench_offline_protocol.py`` runs them (4 of the 8 personas, a
seeded initiator and icebreaker, 15 turns, the simulation preset). The checks measure the
transcript from outside, with their own oracle: they do not reuse the engine's helpers.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from playground import domain, events, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.room import loops
from playground.settings import load_settings

SEEDS = range(6)
#: The repeat rule the engine must honour (README, Fidelity notes).
NEAR_COSINE = 0.9
SHARED_RUN = 6


@dataclass
class Run:
    seed: int
    room: Any
    engine: Any
    seen: list[Any]
    vectors: np.ndarray

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.room.agents]

    @property
    def spoken(self) -> list[domain.Message]:
        """Agent messages expressed from a thought (the icebreaker excluded)."""
        return [m for m in self.room.messages if m.thought_id is not None]

    def thought(self, message: domain.Message) -> domain.Thought:
        formed = [e.thought for e in self.seen if isinstance(e, events.ThoughtFormed)]
        return next(t for t in formed if t.id == message.thought_id)


async def _conversation(seed: int, inner: MiniLMEmbedder) -> Run:
    settings = load_settings({}, {"engine": "offline", "seed": seed, "max_turns": 15})
    library = personas.load_personas()
    engine = await factory.build_engine(settings, embedder=CachingEmbedder(inner))
    bus = events.EventBus(strict=True)
    seen: list[Any] = []
    bus.subscribe(seen.append)
    room, _ = await factory.create_room(
        settings, engine, db=None, personas=factory.pick_personas(library, 4, seed), bus=bus
    )
    icebreaker = random.Random(f"{seed}:icebreaker").choice(personas.load_icebreakers())
    await loops.run_simulation(room, icebreaker=icebreaker)
    vectors = await engine.embedder.embed([m.text for m in room.messages])
    return Run(seed, room, engine, seen, vectors)


@pytest.fixture(scope="module")
def runs(minilm: MiniLMEmbedder) -> list[Run]:
    async def all_runs() -> list[Run]:
        return [await _conversation(seed, minilm) for seed in SEEDS]

    return asyncio.run(all_runs())


def _words(text: str, names: list[str]) -> list[str]:
    folded = {n.casefold() for n in names}
    return ["@" if w in folded else w for w in re.findall(r"[a-z0-9']+", text.casefold())]


def _run_length(a: list[str], b: list[str]) -> int:
    best, prev = 0, [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def _named(text: str, people: list[str], speaker: str) -> list[str]:
    return [p for p in people if p != speaker and re.search(rf"\b{re.escape(p)}\b", text)]


def test_no_agent_message_repeats_one_already_in_the_conversation(runs: list[Run]) -> None:
    repeats = []
    for run in runs:
        msgs = run.room.messages
        assert len(msgs) == 15
        assert all(m.origin == "offline engine" for m in run.spoken)
        for m in run.spoken:
            mine = _words(m.text, run.names)
            for p in msgs[: m.id - 1]:
                theirs = _words(p.text, run.names)
                cosine = float(run.vectors[m.id - 1] @ run.vectors[p.id - 1])
                if (
                    mine == theirs
                    or cosine >= NEAR_COSINE
                    or _run_length(mine, theirs) >= SHARED_RUN
                ):
                    repeats.append((run.seed, m.speaker, m.text, p.text, round(cosine, 3)))
    assert repeats == []


def test_at_most_a_quarter_of_messages_name_someone_and_only_when_it_is_about_them(
    runs: list[Run],
) -> None:
    spoken = naming = 0
    unrelated = []
    for run in runs:
        by_id = {m.id: m for m in run.room.messages}
        for m in run.spoken:
            spoken += 1
            named = _named(m.text, run.names, m.speaker)
            if not named:
                continue
            naming += 1
            thought = run.thought(m)
            sources = {
                by_id[int(r.split(":")[1])].speaker
                for r in thought.stimuli
                if r.startswith("message:") and int(r.split(":")[1]) in by_id
            }
            for person in named:
                if person not in sources and not re.search(rf"\b{person}\b", thought.text):
                    unrelated.append((run.seed, m.text, thought.text))
    assert spoken >= 80
    assert naming / spoken <= 0.25, f"{naming} of {spoken} messages name someone"
    assert unrelated == []


def test_the_turn_is_handed_to_someone_in_at_most_a_quarter_of_messages(runs: list[Run]) -> None:
    allocated = [
        e.turn_type
        for run in runs
        for e in run.seen
        if isinstance(e, events.TurnTypePredicted)
        and e.turn_type.kind == "allocated"
        and run.room.messages[e.turn_type.message_id - 1].thought_id is not None
    ]
    spoken = sum(len(run.spoken) for run in runs)
    assert len(allocated) / spoken <= 0.25


def _topic_slots(interpretation: str) -> list[str]:
    """The topic phrases an interpretation names ("... asks the group about X and ...")."""
    found = re.findall(
        r"\babout (.+?)(?= and (?:waits|wants|may)\b| by talking\b|\.$)", interpretation
    )
    return [part for slot in found for part in slot.split(" and ")]


def test_interpretations_name_content_phrases_never_stop_words(runs: list[Run]) -> None:
    slots = [
        (run.seed, e.interpretation.text, slot)
        for run in runs
        for e in run.seen
        if isinstance(e, events.MessageInterpreted)
        for slot in _topic_slots(e.interpretation.text)
    ]
    assert len(slots) >= 40
    bad = [s for s in slots if any(w.casefold() in ENGLISH_STOP_WORDS for w in s[2].split())]
    assert bad == []
