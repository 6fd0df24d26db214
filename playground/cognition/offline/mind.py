"""What every part of the offline engine shares: the embedder, topics, the transcript, the seed."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable

from playground import domain
from playground.cognition.base import Context
from playground.cognition.offline.repeats import Transcript
from playground.cognition.offline.topics import Topics
from playground.embedding.cache import CachingEmbedder

NAME = "offline engine"
GREETING = re.compile(r"^\s*(hey|hi|hello|hiya|morning|good (morning|evening|afternoon))\b", re.I)


def is_question(text: str) -> bool:
    return "?" in text


def is_greeting(text: str) -> bool:
    return bool(GREETING.match(text)) and len(text.split()) <= 6


def named_in(text: str, people: Iterable[str], but: str = "") -> list[str]:
    """The participants (other than ``but``) whose name appears in ``text``."""
    return [
        p
        for p in people
        if p.casefold() != but.casefold() and re.search(rf"(?<!\w){re.escape(p)}\b", text, re.I)
    ]


class Mind:
    """State of the offline engine, shared by its agents within a conversation.

    Args:
        embedder: the cached MiniLM embedder the room uses for retrieval.
        seed: every random choice comes from a generator keyed by seed, agent, step and purpose.
    """

    def __init__(self, embedder: CachingEmbedder, *, seed: int = 0) -> None:
        self._embedder = embedder
        self._seed = seed
        self.topics = Topics(embedder)
        self.transcript = Transcript()
        self.people: list[str] = []  # everyone seen so far: never part of a topic
        self.quick: set[str] = set()  # texts of System-1 thoughts: reactions, never developed
        self.echoes: set[str] = set()  # our replies whose content is someone else's message

    @property
    def embedder(self) -> CachingEmbedder:
        return self._embedder

    def rng(self, *key: object) -> random.Random:
        return random.Random(":".join(str(k) for k in (self._seed, *key)))

    def see(
        self, participants: Iterable[str], messages: Iterable[domain.Message | None] = ()
    ) -> None:
        """Note who is in the room and what was said."""
        for p in participants:
            if p not in self.people:
                self.people.append(p)
        self.topics.exclude = frozenset(p.casefold() for p in self.people)
        self.transcript.observe(messages)

    def see_context(self, ctx: Context) -> None:
        self.see(ctx.participants, [*ctx.recent, ctx.latest])

    async def topic(self, text: str) -> str | None:
        """The main content phrase of ``text`` (None when it has none)."""
        return await self.topics.topic(text)
