"""Each distinct text is embedded once."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from playground.embedding.base import Embedder


class CachingEmbedder:
    """Wraps an :class:`Embedder`; vectors are kept by the text's hash for the life of the object."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: dict[bytes, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def cached(self, text: str) -> np.ndarray | None:
        return self._cache.get(self._key(text))

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing: dict[bytes, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in self._cache and k not in missing:
                missing[k] = t
        self.misses += len(missing)
        self.hits += len(keys) - len(missing)
        if missing:
            vecs = await self.inner.embed(list(missing.values()))
            for k, v in zip(missing, vecs, strict=True):
                self._cache[k] = v
        if not keys:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys])

    async def embed_one(self, text: str) -> np.ndarray:
        return (await self.embed([text]))[0]
