"""Each distinct text is embedded once."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence

import numpy as np

from playground.embedding.base import Embedder


class CachingEmbedder:
    """Wraps an :class:`Embedder`; vectors are kept by the text's hash for the life of the object.

    A text already being embedded for one caller is waited for by the next instead of embedded
    again: the conversations of an experiment start together and share their personas' memories.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: dict[bytes, np.ndarray] = {}
        self._inflight: dict[bytes, asyncio.Task[np.ndarray]] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    @property
    def dim(self) -> int:
        """The inner embedder's vector length."""
        return self.inner.dim

    def cached(self, text: str) -> np.ndarray | None:
        return self._cache.get(self._key(text))

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing: dict[bytes, str] = {}
        waits: set[asyncio.Task[np.ndarray]] = set()
        for k, t in zip(keys, texts, strict=True):
            if k in self._cache or k in missing:
                continue
            task = self._inflight.get(k)
            if task is not None and not task.done():
                waits.add(task)
            else:
                missing[k] = t
        self.misses += len(missing)
        self.hits += len(keys) - len(missing)
        if missing:
            # A task of its own, shielded: a caller cancelled half-way does not cancel the encode
            # that other callers wait for, and the vectors still reach the cache.
            task = asyncio.ensure_future(self._fill(missing))
            for k in missing:
                self._inflight[k] = task
            waits.add(task)
        for task in waits:
            await asyncio.shield(task)
        if not keys:
            return await self.inner.embed([])  # its own empty shape: (0, its dim)
        return np.stack([self._cache[k] for k in keys])

    async def _fill(self, missing: dict[bytes, str]) -> np.ndarray:
        try:
            vecs = await self.inner.embed(list(missing.values()))
            for k, v in zip(missing, vecs, strict=True):
                self._cache[k] = v
            return vecs
        finally:
            for k in missing:
                self._inflight.pop(k, None)

    async def embed_one(self, text: str) -> np.ndarray:
        row: np.ndarray = (await self.embed([text]))[0]  # numpy types a row as Any
        return row
