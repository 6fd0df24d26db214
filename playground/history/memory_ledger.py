"""Every participant's long-term memory and what its latest retrieval brought in, folded from events.

The memory pane shows, for the selected participant, its memories (``memory_changed``: added,
edited, deleted) with the ones its latest trigger retrieved (``memories_retrieved``) marked by
their saliency, or a random pull's raw cosine, and whether the participant is a person (no
memory in the engine) or a simulated user (a private profile instead; ``participant_joined``).
This is that fold, Qt-free: the live window and a replay apply the same events to a
:class:`MemoryLedger` and the pane renders what it holds, as the thoughts pane renders a
:class:`playground.history.ledger.ThoughtLedger`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, NamedTuple

from playground import domain, events
from playground.domain.refs import ref_id
from playground.domain.simulated_user import UserProfile

#: How a memory changed (``memory_changed``).
MemoryChangeKind = Literal["added", "edited", "deleted"]


class Hit(NamedTuple):
    """A memory brought in at a participant's latest retrieval."""

    saliency: float
    """Its saliency (the highest, when several stimuli cite it)."""
    random: bool
    """Pulled in at random ("creativity"), not by saliency."""
    cosine: float | None
    """A random pull's raw cosine to the latest utterance."""


class MemoryLedger:
    """Per participant: memories by id, the latest retrieval's hits and its step; and which
    participants are people or simulated users (with their profiles)."""

    def __init__(self) -> None:
        self.memories: dict[str, dict[int, domain.MemoryItem]] = {}
        #: agent -> memory id -> its hit at that agent's latest retrieval
        self.retrieved: dict[str, dict[int, Hit]] = {}
        self.retrieved_step: dict[str, int] = {}
        self.humans: set[str] = set()
        #: Simulated users' private profiles (shown instead of a memory), by name.
        self.profiles: dict[str, UserProfile | None] = {}

    def apply(self, folded: Iterable[events.Event]) -> None:
        """Fold events, in order; the kinds that change no memory are passed over."""
        for e in folded:
            match e:
                case events.MemoryChanged():
                    self.changed(e.agent, e.change, e.memory)
                case events.MemoriesRetrieved():
                    self.retrieve(e.agent, e.stimuli, e.step)
                case events.ParticipantJoined():
                    self.joined(e)
                case _:
                    pass  # not about memories

    def joined(self, e: events.ParticipantJoined) -> None:
        """A participant joined: a person has no memory in the engine, a simulated user a
        profile (a name seated again takes its new kind)."""
        if e.participant_kind == "human":
            self.humans.add(e.name)
        else:
            self.humans.discard(e.name)
        if e.participant_kind == "simulated":
            self.profiles[e.name] = e.profile
        else:
            self.profiles.pop(e.name, None)

    def changed(self, agent: str, change: MemoryChangeKind, memory: domain.MemoryItem) -> None:
        """A memory was added, edited or deleted (a deleted one is no longer a hit either)."""
        items = self.memories.setdefault(agent, {})
        if change == "deleted":
            items.pop(memory.id, None)
            self.retrieved.get(agent, {}).pop(memory.id, None)
        else:
            items[memory.id] = memory

    def retrieve(self, agent: str, stimuli: Sequence[domain.Stimulus], step: int) -> None:
        """``agent`` retrieved ``stimuli`` at ``step``: its hits are these memories now (a memory
        cited twice keeps its higher saliency); other stimuli (messages, thoughts) are not."""
        current: dict[int, Hit] = {}
        for s in stimuli:
            mid = ref_id(s.ref, "memory")
            if mid is None or (mid in current and current[mid].saliency >= s.saliency):
                continue
            current[mid] = Hit(float(s.saliency), s.random, s.cosine)
        self.retrieved[agent] = current
        self.retrieved_step[agent] = step

    def hits(self, agent: str) -> Mapping[int, Hit]:
        """``agent``'s memories brought in at its latest retrieval (empty before any)."""
        return self.retrieved.get(agent, {})

    def retrieved_count(self, agent: str) -> tuple[int, int] | None:
        """How many of ``agent``'s memories its latest retrieval brought in that it still has,
        and that retrieval's step; None before any retrieval."""
        if agent not in self.retrieved or agent not in self.retrieved_step:
            return None
        items = self.memories.get(agent, {})
        shown = sum(1 for mid in self.retrieved[agent] if mid in items)
        return shown, self.retrieved_step[agent]
