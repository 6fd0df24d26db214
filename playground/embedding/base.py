"""The Embedder protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into unit-length float32 rows of :attr:`dim` numbers."""

    name: str

    @property
    def dim(self) -> int:
        """The length of every vector (an empty batch is an array of shape (0, dim))."""
        ...

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``; returns an array of shape (len(texts), dim)."""
        ...


def normalise_rows(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    rows: np.ndarray = (m / norms).astype(np.float32)  # numpy types m / norms as Any
    return rows
