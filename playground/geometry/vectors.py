"""A session's message vectors, from the ``message_embeddings`` cache or embedded now.

A cached vector is valid while the hash of its message's text still matches
(:func:`playground.storage.vectors.text_hash`); the others are embedded, in calls of
:data:`EMBED_BATCH` texts, and stored. :mod:`playground.geometry.store` computes a conversation's
features from the sessions read here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeAlias

import numpy as np
import sqlite_utils

from playground import errors
from playground.embedding.base import Embedder
from playground.storage.vectors import VectorRow, save_vectors, text_hash

#: Texts handed to the embedder per call when many are missing (the local model sorts each
#: call's texts by length, so big calls pad less).
EMBED_BATCH = 1024
_CHUNK = 500  # session ids per SQL ``IN (...)``


@dataclass
class EmbeddedMessage:
    """A message as the geometry reads it, with its vector (None until embedded)."""

    id: int
    speaker: str
    text: str
    origin: str | None
    at: float | None
    vector: np.ndarray | None = None


@dataclass
class EmbeddedSession:
    """A session's messages in order, and its STORM task (the goal of a STORM dialogue)."""

    id: str
    messages: list[EmbeddedMessage]
    task: str | None  # the STORM task, when the session is a STORM dialogue
    stale: bool = False  # some vector was (re)embedded now


def _seconds(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    """``ids`` in parts small enough for one SQL ``IN (...)``."""
    for i in range(0, len(ids), _CHUNK):
        yield list(ids[i : i + _CHUNK])


def load_sessions(
    db: sqlite_utils.Database,
    ids: Sequence[str],
    model: str,
    on_missing: Callable[[], object] | None = None,
) -> list[EmbeddedSession]:
    """The sessions' messages in order, each with its cached vector when still valid.

    ``on_missing`` is called (once per chunk of sessions at most) as soon as a text is found that
    will need embedding, so that a caller can start loading the model while the rest is read.
    """
    by_id: dict[str, EmbeddedSession] = {sid: EmbeddedSession(sid, [], None) for sid in ids}
    for part in chunks(list(by_id)):
        marks = ",".join("?" * len(part))
        rows = db.execute(
            "SELECT m.session_id, m.id, m.speaker, m.text, m.origin, m.posted_at,"
            " e.text_hash, e.dim, e.vector FROM messages m"
            " LEFT JOIN message_embeddings e ON e.session_id = m.session_id"
            " AND e.message_id = m.id AND e.model = ?"
            f" WHERE m.session_id IN ({marks}) ORDER BY m.session_id, m.id",
            [model, *part],
        ).fetchall()
        for sid, mid, speaker, text, origin, posted, h, dim, blob in rows:
            vec = None
            if blob is not None and h == text_hash(text) and dim and len(blob) == 4 * dim:
                vec = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            by_id[sid].messages.append(
                EmbeddedMessage(mid, speaker, text, origin, _seconds(posted), vec)
            )
        tasks = db.execute(
            f"SELECT session_id, task FROM storm_dialogues WHERE session_id IN ({marks})", part
        ).fetchall()
        for sid, task in tasks:
            by_id[sid].task = task
        if on_missing is not None and (any(r[8] is None for r in rows) or any(t for _, t in tasks)):
            on_missing()
    return list(by_id.values())


#: Told how far a long computation got: what (``"texts embedded"``), how many done, of how many.
OnProgress: TypeAlias = Callable[[str, int, int], None]


async def _embed(
    embedder: Embedder, texts: list[str], batch: int, on_progress: OnProgress | None = None
) -> dict[str, np.ndarray]:
    """Vectors of the distinct ``texts``, by text, embedded ``batch`` at a time."""
    unique = list(dict.fromkeys(texts))
    out: dict[str, np.ndarray] = {}
    for i in range(0, len(unique), batch):
        part = unique[i : i + batch]
        vecs = await embedder.embed(part)
        for t, v in zip(part, vecs, strict=True):
            out[t] = np.asarray(v, dtype=np.float32)
        if on_progress is not None:
            on_progress("texts embedded", len(out), len(unique))
    return out


async def embed_missing(
    db: sqlite_utils.Database,
    sessions: list[EmbeddedSession],
    embedder: Embedder,
    *,
    batch: int = EMBED_BATCH,
    on_progress: OnProgress | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """Embed every message lacking a valid cached vector (and every STORM task), store the new
    message vectors, and return the task vectors by text and how many texts were embedded.

    Raises:
        PlaygroundError: the database cannot be written.
    """
    missing = [m for s in sessions for m in s.messages if m.vector is None]
    tasks = [s.task for s in sessions if s.task]
    if not missing and not tasks:
        return {}, 0
    vecs = await _embed(embedder, [m.text for m in missing] + tasks, batch, on_progress)
    rows: list[VectorRow] = []
    for s in sessions:
        for m in s.messages:
            if m.vector is None:
                m.vector = vecs[m.text]
                s.stale = True
                rows.append(
                    (
                        s.id,
                        m.id,
                        embedder.name,
                        text_hash(m.text),
                        int(m.vector.shape[0]),
                        m.vector.astype("<f4").tobytes(),
                    )
                )
    if rows:
        try:
            with db.conn:
                save_vectors(db, rows)
        except sqlite3.Error as exc:
            raise errors.PlaygroundError(f"cannot store message vectors: {exc}") from exc
    return {t: vecs[t] for t in tasks}, len({m.text for m in missing} | set(tasks))


async def message_vectors(
    db: sqlite_utils.Database, session_id: str, embedder: Embedder
) -> tuple[list[int], np.ndarray]:
    """A session's message ids and their vectors, in order, from the cache or embedded now.

    Messages without a cached vector for ``embedder.name`` (or whose text changed since) are
    embedded and stored.

    Returns:
        The message ids and an array (len(ids) × dim); (``[]``, a 0 × 0 array) for no messages.

    Raises:
        PlaygroundError: the database cannot be written.
    """
    [s] = load_sessions(db, [session_id], embedder.name)
    await embed_missing(db, [s], embedder)
    if not s.messages:
        return [], np.zeros((0, 0), dtype=np.float32)
    return [m.id for m in s.messages], np.stack([m.vector for m in s.messages])  # type: ignore[misc]
