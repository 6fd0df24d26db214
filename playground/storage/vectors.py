"""The ``message_embeddings`` cache's rows: how a vector is keyed and how it is written.

A cached vector belongs to a (session, message, embedding model) and carries the hash of the text
it was computed from (:func:`text_hash`), so a message whose text changed is embedded again. The
vector itself is float32 little-endian, ``dim`` values. Both writers use :func:`save_vectors`: the
recorder (the vector the room computed for retrieval) and :mod:`playground.geometry.vectors` (the
vectors it embeds for a conversation's geometry).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import sqlite_utils

#: One cached vector: session id, message id, model, text hash, dim, float32 little-endian bytes.
VectorRow = tuple[str, int, str, str, int, bytes]


def text_hash(text: str) -> str:
    """The hash a cached vector is keyed by (blake2b-128 of the UTF-8 text, hex)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def save_vectors(db: sqlite_utils.Database, rows: Iterable[VectorRow]) -> None:
    """Store the vectors, replacing any cached for the same (session, message, model), in the
    caller's transaction."""
    db.conn.executemany(
        "INSERT OR REPLACE INTO message_embeddings"
        " (session_id, message_id, model, text_hash, dim, vector) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
