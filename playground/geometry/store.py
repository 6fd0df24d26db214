"""TRACE features stored per session, computed from the message vectors.

The vectors come from :mod:`playground.geometry.vectors` (cached per embedding model in
``message_embeddings``, embedded when missing). ``session_features`` keeps one row per (session, model): the features of
:mod:`playground.geometry.features` as JSON, the version of their definitions and the message
count they saw; a row of another version, of a session that gained messages, or whose vectors were
re-embedded is recomputed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import sqlite_utils

from playground import errors
from playground.embedding.base import Embedder
from playground.geometry import features as feat
from playground.geometry.vectors import (
    EMBED_BATCH,
    EmbeddedSession,
    OnProgress,
    chunks,
    embed_missing,
    load_sessions,
)


@dataclass
class SessionFeatures:
    """One session's stored features."""

    session_id: str
    model: str
    version: int
    computed_at: str
    message_count: int
    goal: str | None
    features: dict[str, float | None]
    per_speaker: dict[str, dict[str, float | None]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Everything, for JSON output."""
        return asdict(self)


@dataclass
class ComputeStats:
    """What one :func:`compute_many` call did, and how long its parts took."""

    sessions: int = 0
    messages: int = 0
    embedded: int = 0  #: distinct texts embedded (cache misses)
    computed: int = 0  #: sessions whose features were computed (the rest were stored and current)
    load_seconds: float = 0.0  #: reading messages and cached vectors
    model_seconds: float = 0.0  #: loading the embedding model (when something was missing)
    embed_seconds: float = 0.0  #: embedding and storing the missing vectors
    features_seconds: float = 0.0


def _goal(
    s: EmbeddedSession, task_vecs: dict[str, np.ndarray]
) -> tuple[str | None, np.ndarray | None, bool]:
    """The goal's text and vector, and whether it is the first turn itself.

    A STORM dialogue's goal is its task; otherwise the icebreaker (the message posted with origin
    ``icebreaker``), else the session's first message.
    """
    if s.task:
        return s.task, task_vecs.get(s.task), False
    if not s.messages:
        return None, None, False
    for i, m in enumerate(s.messages):
        if m.origin == "icebreaker":
            return m.text, m.vector, i == 0
    return s.messages[0].text, s.messages[0].vector, True


def _compute(
    s: EmbeddedSession, model: str, task_vecs: dict[str, np.ndarray], late_k: int
) -> SessionFeatures:
    goal_text, goal_vec, first = _goal(s, task_vecs)
    speakers = [m.speaker for m in s.messages]
    times = [m.at for m in s.messages]
    vectors = (
        np.stack([m.vector for m in s.messages])  # type: ignore[misc]
        if s.messages
        else np.zeros((0, 0))
    )
    values = feat.trace_features(
        vectors, speakers, times, goal_vec, late_k=late_k, goal_is_first_turn=first
    )
    values["late_k"] = float(late_k)
    per = feat.per_speaker_features(vectors, speakers, times, goal_vec, goal_is_first_turn=first)
    return SessionFeatures(
        session_id=s.id,
        model=model,
        version=feat.FEATURES_VERSION,
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        message_count=len(s.messages),
        goal=goal_text,
        features=feat.clean(values),
        per_speaker=feat.clean(per),
    )


def _stored(
    db: sqlite_utils.Database, ids: Sequence[str], model: str | None
) -> dict[str, SessionFeatures]:
    out: dict[str, SessionFeatures] = {}
    for part in chunks(list(ids)):
        marks = ",".join("?" * len(part))
        sql = (
            "SELECT session_id, model, version, computed_at, message_count, goal, features,"
            f" per_speaker FROM session_features WHERE session_id IN ({marks})"
        )
        params: list[Any] = list(part)
        if model is not None:
            sql += " AND model = ?"
            params.append(model)
        sql += " ORDER BY computed_at"  # without a model: the latest row per session wins
        for sid, mdl, ver, at, count, goal, values, per in db.execute(sql, params).fetchall():
            out[sid] = SessionFeatures(
                sid,
                mdl,
                int(ver),
                at,
                int(count),
                goal,
                json.loads(values),
                json.loads(per or "{}"),
            )
    return out


def _save(db: sqlite_utils.Database, rows: list[SessionFeatures]) -> None:
    if not rows:
        return
    try:
        with db.conn:
            db.conn.executemany(
                "INSERT OR REPLACE INTO session_features (session_id, model, version, computed_at,"
                " message_count, goal, features, per_speaker) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        r.session_id,
                        r.model,
                        r.version,
                        r.computed_at,
                        r.message_count,
                        r.goal,
                        json.dumps(r.features),
                        json.dumps(r.per_speaker),
                    )
                    for r in rows
                ],
            )
    except sqlite3.Error as exc:
        raise errors.PlaygroundError(f"cannot store session features: {exc}") from exc


async def compute_many(
    db: sqlite_utils.Database,
    session_ids: Sequence[str],
    embedder: Embedder,
    *,
    recompute: bool = False,
    late_k: int = 3,
    batch: int = EMBED_BATCH,
    stats: ComputeStats | None = None,
    on_progress: OnProgress | None = None,
) -> list[SessionFeatures]:
    """The features of many sessions, computing and storing those missing or out of date.

    Every message lacking a cached vector, over all the sessions, is embedded in calls of
    ``batch`` texts. A stored row is reused when it has this version, this model, this
    ``late_k``, the session's current message count, and no vector of the session was embedded
    anew; otherwise (or with ``recompute``) the features are computed again and stored.

    Args:
        db: the session database.
        session_ids: the sessions (full ids).
        embedder: embeds the texts missing from the cache; its ``name`` keys the cache and rows.
        recompute: compute every session's features again even when the stored row is current.
        late_k: the number of final turns late volatility looks at.
        batch: texts per embedder call.
        stats: filled with counts and timings when given.
        on_progress: told after each embedding call (``"texts embedded"``) and each session
            (``"sessions"``, stored rows reused included) how many are done of how many.

    Returns:
        One :class:`SessionFeatures` per session id, in the order given (duplicates once).

    Raises:
        PlaygroundError: an unknown session id, or the database cannot be written.
        ValueError: ``late_k`` below 1.
    """
    if late_k < 1:
        raise ValueError(f"late_k must be at least 1 (got {late_k})")
    ids = list(dict.fromkeys(session_ids))
    known = set()
    for part in chunks(ids):
        marks = ",".join("?" * len(part))
        known |= {r[0] for r in db.execute(f"SELECT id FROM sessions WHERE id IN ({marks})", part)}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise errors.PlaygroundError(f"no session {unknown[0]!r} in this database")
    model = embedder.name
    st = stats if stats is not None else ComputeStats()
    # A local model takes seconds to load: start it in its own thread as soon as the first text
    # without a vector turns up, and read the rest of the sessions meanwhile.
    local = getattr(embedder, "inner", embedder)  # the model behind a cache
    t0 = time.perf_counter()
    sessions = load_sessions(db, ids, model, on_missing=getattr(local, "start_loading", None))
    t1 = time.perf_counter()
    if any(m.vector is None for s in sessions for m in s.messages) or any(s.task for s in sessions):
        # Load the model first (a local model takes seconds), so that its cost is reported apart.
        load = getattr(local, "load", None)
        if load is not None:
            await load()
    t_model = time.perf_counter()
    task_vecs, st.embedded = await embed_missing(
        db, sessions, embedder, batch=batch, on_progress=on_progress
    )
    t2 = time.perf_counter()
    stored = {} if recompute else _stored(db, ids, model)
    out: list[SessionFeatures] = []
    fresh: list[SessionFeatures] = []
    for n, s in enumerate(sessions, start=1):
        if on_progress is not None:
            on_progress("sessions", n - 1, len(sessions))
        old = stored.get(s.id)
        if (
            old is not None
            and not s.stale
            and old.version == feat.FEATURES_VERSION
            and old.message_count == len(s.messages)
            and old.features.get("late_k") == float(late_k)
        ):
            out.append(old)
            continue
        row = _compute(s, model, task_vecs, late_k)
        fresh.append(row)
        out.append(row)
    if on_progress is not None:
        on_progress("sessions", len(sessions), len(sessions))
    _save(db, fresh)
    st.sessions, st.messages, st.computed = (
        len(sessions),
        sum(len(s.messages) for s in sessions),
        len(fresh),
    )
    st.load_seconds, st.model_seconds, st.embed_seconds = t1 - t0, t_model - t1, t2 - t_model
    st.features_seconds = time.perf_counter() - t2
    return out


async def session_features(
    db: sqlite_utils.Database,
    session_id: str,
    embedder: Embedder,
    *,
    recompute: bool = False,
    late_k: int = 3,
) -> SessionFeatures:
    """One session's features (see :func:`compute_many`), stored in ``session_features``.

    Raises:
        PlaygroundError: no such session, or the database cannot be written.
        ValueError: ``late_k`` below 1.
    """
    [row] = await compute_many(db, [session_id], embedder, recompute=recompute, late_k=late_k)
    return row


def features_table(
    db: sqlite_utils.Database, session_ids: Sequence[str], *, model: str | None = None
) -> list[SessionFeatures]:
    """The stored features of these sessions (nothing is computed), in the order given.

    Sessions without a stored row are left out. Without ``model``, a session's most recently
    computed row (of any embedding model) is taken.
    """
    stored = _stored(db, session_ids, model)
    return [stored[s] for s in dict.fromkeys(session_ids) if s in stored]


def compute_many_sync(
    db: sqlite_utils.Database,
    session_ids: Sequence[str],
    embedder: Embedder,
    *,
    recompute: bool = False,
    late_k: int = 3,
) -> list[SessionFeatures]:
    """:func:`compute_many` for callers without an event loop (command lines, reports).

    Raises:
        PlaygroundError: called while an event loop runs in this thread (await
            :func:`compute_many` there), an unknown session, or the database cannot be written.
        ValueError: ``late_k`` below 1.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            compute_many(db, session_ids, embedder, recompute=recompute, late_k=late_k)
        )
    raise errors.PlaygroundError(
        "compute_many_sync called inside a running event loop: await compute_many instead"
    )
