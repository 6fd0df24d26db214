"""Benchmark: the paper's simulation protocol, run with the offline engine.

docs/spec.md §1.9.2: 8 personas, 50 conversations, 4 participants drawn per conversation, a random
initiator, one of 10 icebreakers, 15 turns (the icebreaker included), the simulation preset.
Conversation ``i`` uses seed ``i``, chosen as ``playground simulate --seed i`` chooses.

Prints what shapes the dynamics and what a reader notices:

- messages per agent;
- the share of agent messages that address someone (name a participant; allocate the turn);
- the share of agent-triggers whose stimuli hold a salient memory, only a random one, or none;
- interruptions (and attempts) and System-1 replies;
- repeats: an agent message equal, or nearly equal, to an earlier message of the conversation;
- topic phrases that are stop words ("tell me more about see?").

Run: .venv/bin/python bench/bench_offline_protocol.py [--conversations N] [--show K]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from _common import REPO

from playground import domain, events, factory, personas
from playground.room import loops
from playground.cognition.offline.repeats import NEAR_COSINE, SHARED_RUN, shared_run, words
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.settings import load_settings

AGENTS = 4
TURNS = 15
#: "about X?", "on X." where X is a stop word: a topic phrase gone wrong ("more about see?").
TOPIC_SLOT = re.compile(r"\b(?:about|on)\s+([A-Za-z']+)(?:\s+myself)?\s*[?.!]", re.I)
#: Natural objects of "about": "what about you?", "not sure about that."
PRONOUNS = {"you", "it", "that", "this", "them", "everyone", "yourself", "yourselves"}


@dataclass
class Tally:
    conversations: int = 0
    seconds: list[float] = field(default_factory=list)
    per_agent: list[int] = field(default_factory=list)
    silent_agents: int = 0
    top_share: list[float] = field(default_factory=list)
    agent_messages: int = 0
    naming: int = 0
    naming_about: int = 0
    allocating: int = 0
    triggers: int = 0
    salient: int = 0
    random_only: int = 0
    no_memory: int = 0
    any_random: int = 0
    built_on_random: int = 0
    interruptions: int = 0
    attempts: int = 0
    system1: int = 0
    exact: int = 0
    near: int = 0
    same_speaker: int = 0
    stopword_topics: int = 0
    examples: list[str] = field(default_factory=list)
    stops: Counter[str] = field(default_factory=Counter)


def about_person(
    thought: domain.Thought | None, name: str, msgs: dict[int, domain.Message]
) -> bool:
    """The thought reacts to a message by ``name`` or mentions ``name``."""
    if thought is None:
        return False
    if re.search(rf"\b{re.escape(name)}\b", thought.text, re.I):
        return True
    for ref in thought.stimuli:
        kind, _, num = ref.partition(":")
        if kind == "message" and int(num) in msgs and msgs[int(num)].speaker == name:
            return True
    return False


async def one(
    seed: int, inner: MiniLMEmbedder, library: list[domain.Persona], tally: Tally
) -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    settings = load_settings({}, {"engine": "offline", "seed": seed, "max_turns": TURNS})
    icebreaker = random.Random(f"{seed}:icebreaker").choice(personas.load_icebreakers())
    embedder = CachingEmbedder(inner)
    engine = await factory.build_engine(settings, embedder=embedder)
    bus = events.EventBus()
    seen: list[Any] = []
    bus.subscribe(seen.append)
    room, _ = await factory.create_room(
        settings,
        engine,
        db=None,
        personas=factory.pick_personas(library, AGENTS, seed),
        bus=bus,
    )
    t0 = time.perf_counter()
    await loops.run_simulation(room, icebreaker=icebreaker)
    tally.seconds.append(time.perf_counter() - t0)
    tally.conversations += 1
    names = [a.name for a in room.agents]
    msgs = {m.id: m for m in room.messages}
    thoughts = {e.thought.id: e.thought for e in seen if isinstance(e, events.ThoughtFormed)}
    random_refs: dict[tuple[str, int], set[str]] = {}
    for e in seen:
        if isinstance(e, events.MemoriesRetrieved):
            tally.triggers += 1
            mem = [s for s in e.stimuli if s.ref.startswith("memory:")]
            random_refs[(e.agent, e.step)] = {s.ref for s in mem if s.random}
            if any(not s.random for s in mem):
                tally.salient += 1
            elif mem:
                tally.random_only += 1
            else:
                tally.no_memory += 1
            tally.any_random += any(s.random for s in mem)
        elif isinstance(e, events.DecisionMade):
            d = e.decision
            if d.turn_type == "allocated-other" and (
                d.action == "speak" or "lost the floor" in d.reason
            ):
                tally.attempts += 1
    spoken = [m for m in room.messages if m.thought_id is not None]
    counts = Counter(m.speaker for m in spoken)
    tally.per_agent += [counts.get(n, 0) for n in names]
    tally.silent_agents += sum(1 for n in names if counts.get(n, 0) == 0)
    if spoken:
        tally.top_share.append(max(counts.values()) / len(spoken))
    vecs = await embedder.embed([m.text for m in room.messages])
    lines = []
    for m in room.messages:
        tag = " [interrupts]" if m.interruption else ""
        tag += " [S1]" if m.system == 1 else ""
        lines.append(f"  {m.id:>2} {m.speaker}: {m.text}{tag}")
        if m.thought_id is None:
            continue
        tally.agent_messages += 1
        thought = thoughts.get(m.thought_id)
        named = [
            n for n in names if n != m.speaker and re.search(rf"\b{re.escape(n)}\b", m.text, re.I)
        ]
        if named:
            tally.naming += 1
            about = all(about_person(thought, n, msgs) for n in named)
            tally.naming_about += about
            if not about and len(tally.examples) < 8:
                text = thought.text if thought else "?"
                tally.examples.append(
                    f"seed {seed}: names {named} from thought {text!r}: {m.text!r}"
                )
        turn = await engine.cognition.predict_turn_type(m, [], list(room.participants))
        tally.allocating += turn.kind == "allocated"
        if thought and random_refs.get((m.speaker, thought.created_step), set()) & set(
            thought.stimuli
        ):
            tally.built_on_random += 1
        tally.interruptions += m.interruption
        tally.system1 += m.system == 1
        ws = words(m.text, names)
        earlier = room.messages[: m.id - 1]
        exact = [p for p in earlier if words(p.text, names) == ws]
        near = [
            p
            for p in earlier
            if float(vecs[m.id - 1] @ vecs[p.id - 1]) >= NEAR_COSINE
            or shared_run(ws, words(p.text, names)) >= SHARED_RUN
        ]
        tally.exact += bool(exact)
        tally.near += bool(near)
        tally.same_speaker += any(p.speaker == m.speaker for p in near)
        if near and len(tally.examples) < 6:
            tally.examples.append(f"seed {seed}: {m.speaker}: {m.text!r} ~ {near[0].text!r}")
        for hit in TOPIC_SLOT.finditer(m.text):
            word = hit.group(1).casefold()
            if word in ENGLISH_STOP_WORDS and word not in PRONOUNS:
                tally.stopword_topics += 1
                tally.stops[word] += 1
    return lines


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else f"{n}/0"


def report(t: Tally) -> None:
    print(f"\n{t.conversations} conversations, {AGENTS} agents, {TURNS} turns, offline engine")
    print(
        f"time per conversation: median {statistics.median(t.seconds):.2f} s "
        f"(max {max(t.seconds):.2f} s); total {sum(t.seconds):.0f} s"
    )
    per = t.per_agent
    print(
        f"messages per agent (icebreaker excluded): mean {statistics.mean(per):.2f}, "
        f"sd {statistics.pstdev(per):.2f}, min {min(per)}, max {max(per)}; "
        f"agents who never spoke {pct(t.silent_agents, len(per))}; "
        f"most talkative agent's share of a conversation: mean {statistics.mean(t.top_share):.2f}"
    )
    print(f"agent messages: {t.agent_messages}")
    print(
        f"address someone: names a participant {pct(t.naming, t.agent_messages)}; "
        f"allocates the turn {pct(t.allocating, t.agent_messages)}; "
        f"naming messages whose thought is about that person {pct(t.naming_about, t.naming)}"
    )
    print(
        f"memory stimuli per agent-trigger: salient {pct(t.salient, t.triggers)}, "
        f"random only {pct(t.random_only, t.triggers)}, none {pct(t.no_memory, t.triggers)}; "
        f"with a random memory {pct(t.any_random, t.triggers)}; "
        f"messages built on a random memory {pct(t.built_on_random, t.agent_messages)}"
    )
    print(
        f"interruptions {t.interruptions} (attempts {t.attempts}); "
        f"System-1 replies {pct(t.system1, t.agent_messages)}"
    )
    print(
        f"repeats: exact {pct(t.exact, t.agent_messages)}, "
        f"near (cosine ≥ {NEAR_COSINE} or ≥ {SHARED_RUN} words in a row) {pct(t.near, t.agent_messages)}, "
        f"of which repeat the same speaker {t.same_speaker}"
    )
    print(f"stop-word topic phrases: {t.stopword_topics} {dict(t.stops.most_common(5))}")
    for ex in t.examples:
        print(f"  e.g. {ex}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=50)
    ap.add_argument("--show", type=int, default=1, help="print this many transcripts")
    args = ap.parse_args()
    inner = MiniLMEmbedder()
    await inner.load()
    library = personas.load_personas(REPO / "personas")
    tally = Tally()
    for seed in range(args.conversations):
        lines = await one(seed, inner, library, tally)
        if seed < args.show:
            print(f"seed {seed}:")
            print("\n".join(lines))
    report(tally)


if __name__ == "__main__":
    asyncio.run(main())
