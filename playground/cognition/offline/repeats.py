"""What was said in the conversation, and when a new message would repeat it.

A message *repeats* an earlier one when, with participants' names masked and punctuation and case
ignored, the two are the same words (exact repeat), or when they are near-duplicates: a MiniLM
cosine of at least :data:`NEAR_COSINE`, or :data:`SHARED_RUN` or more words in a row in common
(the same sentence said again inside a different frame).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from playground import domain
from playground.embedding.cache import CachingEmbedder

NEAR_COSINE = 0.9
SHARED_RUN = 6


def words(text: str, names: Iterable[str] = ()) -> list[str]:
    """Lower-case words of ``text``, each participant's name replaced by '@'."""
    folded = {n.casefold() for n in names}
    return ["@" if w in folded else w for w in re.findall(r"[^\W_][\w']*", text.casefold())]


def shared_run(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest run of consecutive words found in both ``a`` and ``b``."""
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def near(a: str, b: str, cosine: float, names: Iterable[str] = ()) -> bool:
    """Whether ``a`` repeats ``b`` (exactly or nearly); ``cosine`` is their MiniLM similarity."""
    wa, wb = words(a, names), words(b, names)
    return wa == wb or cosine >= NEAR_COSINE or shared_run(wa, wb) >= SHARED_RUN


class Transcript:
    """Every message the engine has seen in the conversation it is in, by id.

    A message whose id is known but whose speaker or text differ means another conversation (a new
    session on the same engine, or a fork): what followed that id is forgotten.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, domain.Message] = {}

    def observe(self, messages: Iterable[domain.Message | None]) -> None:
        for m in messages:
            if m is None:
                continue
            known = self._by_id.get(m.id)
            if known is not None and (known.speaker, known.text) != (m.speaker, m.text):
                self._by_id = {i: k for i, k in self._by_id.items() if i < m.id}
            self._by_id[m.id] = m

    @property
    def messages(self) -> list[domain.Message]:
        return [self._by_id[i] for i in sorted(self._by_id)]

    def agent_messages(self, origin: str) -> list[domain.Message]:
        """Messages an agent of this engine posted from a thought (icebreakers excluded)."""
        return [m for m in self.messages if m.origin == origin and m.thought_id is not None]

    async def repeated(
        self, texts: Sequence[str], embedder: CachingEmbedder, names: Iterable[str]
    ) -> list[bool]:
        """For each candidate text, whether it repeats a message already in the conversation."""
        said = self.messages
        if not texts or not said:
            return [False] * len(texts)
        names = list(names)
        vecs = await embedder.embed([*texts, *(m.text for m in said)])
        cand, old = vecs[: len(texts)], vecs[len(texts) :]
        sims = np.asarray(cand @ old.T)
        return [
            any(near(t, m.text, float(sims[i, j]), names) for j, m in enumerate(said))
            for i, t in enumerate(texts)
        ]
