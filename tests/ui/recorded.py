"""Write a recorded session event by event, as the engine would, for tests that need a saved
session of a given shape without running one."""

from __future__ import annotations

from pathlib import Path

from playground import domain, events
from playground.storage import SessionRecorder, open_database


class SessionWriter:
    """A recorder on a real database: :meth:`emit` stamps each event with the session id, the
    next sequence number and ``step``. It starts the session (offline engine, inner-thoughts)
    with ``agents`` joined, each with a one-fact persona."""

    def __init__(self, path: Path, session_id: str, agents: list[str]) -> None:
        self.db = open_database(path)
        self.recorder = SessionRecorder(self.db)
        self.session_id = session_id
        self.seq = 0
        self.emit(
            events.SessionStarted(
                engine="offline engine", model="offline", seed=1, condition="inner-thoughts",
                settings={},
            ),
            0,
        )  # fmt: skip
        for i, name in enumerate(agents):
            persona = domain.Persona(id=name.lower(), name=name, facts=[f"I am {name}."])
            self.emit(
                events.ParticipantJoined(
                    name=name, participant_kind="ai", persona=persona, color_index=i
                ),
                0,
            )

    def emit(self, e: events.Event, step: int) -> None:
        self.seq += 1
        update = {
            "session_id": self.session_id, "seq": self.seq, "step": step,
            "at": "2026-01-01T00:00:00+00:00",
        }  # fmt: skip
        self.recorder.handle(e.model_copy(update=update))
