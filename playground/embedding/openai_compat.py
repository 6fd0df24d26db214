"""Embeddings through an OpenAI-compatible ``/embeddings`` endpoint."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from playground import errors
from playground.embedding.base import normalise_rows
from playground.llm.client import ChatClient

#: What an empty batch sends to learn the dimension when no answer has told it yet.
_PROBE_TEXT = "dimension"


class OpenAIEmbedder:
    """Remote embeddings via the same client (and the same retries and error mapping) as chat.

    The vector length is the server's: :attr:`dim` is learned from the first answer (a server's
    model need not be MiniLM's 384 wide), and an empty batch asked before any answer sends one
    short text to learn it, so that its shape is right too.
    """

    def __init__(self, client: ChatClient, model: str) -> None:
        self._client = client
        self._model = model
        self.name = f"{model} (remote)"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The length of the server's vectors.

        Raises:
            PlaygroundError: asked before the server has answered one embedding request.
        """
        if self._dim is None:
            raise errors.PlaygroundError(
                f"the dimension of {self.name} embeddings is not known before its first answer"
            )
        return self._dim

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            if self._dim is None:
                await self.embed([_PROBE_TEXT])
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = await self._client.embed(list(texts), model=self._model)
        vectors = normalise_rows(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        return vectors
