"""Long-term memory of one agent, and salient-memory retrieval (docs/spec.md §1.2 Retrieval)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from playground import domain, events
from playground.cognition import scoring
from playground.domain.refs import parse_ref, ref
from playground.embedding.cache import CachingEmbedder


@dataclass
class Pool:
    """Rows that can be retrieved: refs, texts, unit vectors, weights and last-access steps."""

    refs: list[str]
    texts: list[str]
    vectors: np.ndarray
    weights: np.ndarray
    taus: np.ndarray
    _index: dict[str, int] | None = None

    def index(self) -> dict[str, int]:
        """Row of each ref (built once per pool)."""
        if self._index is None:
            self._index = {r: i for i, r in enumerate(self.refs)}
        return self._index

    @classmethod
    def empty(cls, dim: int) -> Pool:
        """A pool with no rows; ``dim`` is the embedder's vector length."""
        return cls(
            [], [], np.zeros((0, dim), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64)
        )


def salient(
    pool: Pool,
    u: np.ndarray,
    u_interp: np.ndarray | None,
    t: int,
    *,
    threshold: float,
    decay: float,
    limit: int,
) -> list[tuple[int, float]]:
    """Indices and saliencies of rows above ``threshold``, highest first, at most ``limit``."""
    if not pool.refs:
        return []
    sal = scoring.saliency_matrix(pool.vectors, pool.weights, pool.taus, u, u_interp, t, decay)
    idx = np.flatnonzero(sal > threshold)
    if idx.size > limit:
        idx = idx[np.argpartition(-sal[idx], limit - 1)[:limit]]
    order = idx[np.argsort(-sal[idx], kind="stable")]
    return [(int(i), float(sal[i])) for i in order]


class MemoryStore:
    """An agent's long-term memories with cached embeddings; every change is published."""

    def __init__(
        self,
        agent: str,
        embedder: CachingEmbedder,
        ids: Iterator[int],
        emit: Callable[[events.BaseEvent], None],
    ) -> None:
        self.agent = agent
        self._embedder = embedder
        self._ids = ids
        self._emit = emit
        self.items: dict[int, domain.MemoryItem] = {}
        self._vec: dict[int, np.ndarray] = {}
        self._pool: Pool | None = None

    def __len__(self) -> int:
        return len(self.items)

    async def add(
        self, kind: domain.MemoryKind, text: str, *, weight: float = 1.0, step: int = 0
    ) -> domain.MemoryItem:
        vec = await self._embedder.embed_one(text)
        item = domain.MemoryItem(
            id=next(self._ids),
            kind=kind,
            text=text,
            weight=weight,
            created_step=step,
            last_access=step,
        )
        self.items[item.id] = item
        self._vec[item.id] = vec
        self._pool = None
        self._emit(events.MemoryChanged(agent=self.agent, change="added", memory=item))
        return item

    async def put(self, item: domain.MemoryItem) -> domain.MemoryItem:
        """Add a memory with its own id (a fork restoring a saved state); publishes "added"."""
        self._vec[item.id] = await self._embedder.embed_one(item.text)
        self.items[item.id] = item
        self._pool = None
        self._emit(events.MemoryChanged(agent=self.agent, change="added", memory=item))
        return item

    async def add_many(
        self, rows: list[tuple[domain.MemoryKind, str, float]], *, step: int = 0
    ) -> list[domain.MemoryItem]:
        if rows:  # one batch; add() then hits the cache
            await self._embedder.embed([text for _, text, _ in rows])
        return [await self.add(kind, text, weight=weight, step=step) for kind, text, weight in rows]

    async def edit(
        self,
        memory_id: int,
        *,
        text: str | None = None,
        weight: float | None = None,
        kind: domain.MemoryKind | None = None,
    ) -> domain.MemoryItem:
        old = self._get(memory_id)
        changes: dict[str, object] = {}
        if text is not None and text != old.text:
            changes["text"] = text
            self._vec[memory_id] = await self._embedder.embed_one(text)
        if weight is not None:
            changes["weight"] = weight
        if kind is not None:
            changes["kind"] = kind
        item = domain.MemoryItem.model_validate({**old.model_dump(), **changes})
        self.items[memory_id] = item
        self._pool = None
        self._emit(events.MemoryChanged(agent=self.agent, change="edited", memory=item))
        return item

    def delete(self, memory_id: int) -> None:
        item = self._get(memory_id)
        del self.items[memory_id]
        del self._vec[memory_id]
        self._pool = None
        self._emit(events.MemoryChanged(agent=self.agent, change="deleted", memory=item))

    def _get(self, memory_id: int) -> domain.MemoryItem:
        try:
            return self.items[memory_id]
        except KeyError:
            raise KeyError(f"{self.agent} has no memory {memory_id}") from None

    def pool(self) -> Pool:
        """All memories as a retrieval pool; the matrix is rebuilt only after a change."""
        if self._pool is None:
            ids = list(self.items)
            self._pool = Pool(
                refs=[ref("memory", i) for i in ids],
                texts=[self.items[i].text for i in ids],
                vectors=(
                    np.stack([self._vec[i] for i in ids])
                    if ids
                    else Pool.empty(self._embedder.dim).vectors
                ),
                weights=np.array([self.items[i].weight for i in ids], np.float32),
                taus=np.array([self.items[i].last_access for i in ids], np.int64),
            )
        return self._pool

    def touch(self, refs: list[str], t: int) -> None:
        """Refresh τ of retrieved memories to ``t`` (in the items and, in place, the pool)."""
        pool = self._pool
        index = pool.index() if pool else {}
        for text in refs:
            kind, mid = parse_ref(text)
            if kind == "memory" and mid in self.items:
                self.items[mid] = self.items[mid].model_copy(update={"last_access": t})
                if pool is not None and text in index:
                    pool.taus[index[text]] = t
