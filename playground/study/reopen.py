"""A finished conversation, opened again for its review only (a study plan resumed while its
people were reviewing it).

The room holds the session's participants and messages as saved, and stays ended: nobody can
post, join or think in it. What the people save (their retrospective notes and ratings) goes to
the study's own tables, and their pages coming and going is recorded as in the live room.
"""

from __future__ import annotations

import sqlite_utils

from playground import domain, events
from playground.factory import Engine
from playground.room.participants import Human
from playground.room.room import Room
from playground.settings import Settings
from playground.storage import SessionRecorder
from playground.storage.reader import SessionReader


def reopen_for_review(
    db: sqlite_utils.Database, session_id: str, engine: Engine, settings: Settings
) -> Room:
    """The ended session ``session_id`` as a room a study hub can serve for its review."""
    reader = SessionReader(db)
    saved = reader.load(session_id)
    room = Room(
        cognition=engine.cognition,
        embedder=engine.embedder,
        settings=settings,
        bus=events.EventBus(),
        session_id=session_id,
    )
    SessionRecorder(db).attach(room.bus)
    for row in saved["participants"]:
        room.participants[row["name"]] = Human(name=row["name"], kind=row["kind"])
    room.messages = [
        domain.Message(
            id=m["id"],
            speaker=m["speaker"],
            text=m["text"],
            step=m["step"],
            at=m["posted_at"],
            kind=m["speaker_kind"],
        )
        for m in saved["messages"]
    ]
    status = saved["session"]["status"]
    room.status = status if status in ("finished", "interrupted", "failed") else "interrupted"
    return room
