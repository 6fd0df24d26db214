"""Sentence embeddings: local MiniLM or a server's /embeddings endpoint, both behind a cache."""

from playground.embedding.base import Embedder
from playground.embedding.cache import CachingEmbedder

__all__ = ["CachingEmbedder", "Embedder"]
