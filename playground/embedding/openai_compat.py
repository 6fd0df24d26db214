"""Embeddings through an OpenAI-compatible ``/embeddings`` endpoint."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from playground.embedding.base import normalise_rows
from playground.llm.client import ChatClient


class OpenAIEmbedder:
    """Remote embeddings via the same client (and the same retries and error mapping) as chat."""

    def __init__(self, client: ChatClient, model: str) -> None:
        self._client = client
        self._model = model
        self.name = f"{model} (remote)"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        rows = await self._client.embed(list(texts), model=self._model)
        return normalise_rows(np.asarray(rows, dtype=np.float32))
