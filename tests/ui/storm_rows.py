"""Hand-made STORM rows for the window's tests: dyadic dialogues written straight into a real
session database (sessions, participants, messages, hidden_states, storm_dialogues and a judge's
labels), so the STORM view can be checked against numbers worked out by hand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlite_utils

from playground.domain.simulated_user import TaskProfile, UserProfile

AT = "2025-05-01T10:00:00+00:00"


@dataclass(frozen=True)
class Dialogue:
    """One dyadic run: its design and the user's (satisfaction, clarity) per turn; a satisfaction
    of None is an unreadable one, stored as the simulator stores it (0.5, flagged missing)."""

    session_id: str
    model: str
    uncertainty: int
    access: bool
    states: Sequence[tuple[float | None, float]]
    judged: Sequence[str] = ()  # the judge's clarity label of each turn pair


def profile(name: str = "Mara") -> UserProfile:
    return UserProfile(
        id=f"{name.lower()}-1",
        name=name,
        task=TaskProfile(category="technology", task="Buy a smartphone"),
    )


def write(db: sqlite_utils.Database, dialogues: Sequence[Dialogue]) -> None:
    """Insert ``dialogues`` (each a finished session) into ``db``."""
    for d in dialogues:
        user = profile()
        db.table("sessions").insert(
            {
                "id": d.session_id,
                "created_at": AT,
                "status": "finished",
                "engine": "openai",
                "model": d.model,
                "config": "{}",
            }
        )
        for name, kind, prof in (
            (user.name, "simulated", user.model_dump_json()),
            ("Assistant", "ai", None),
        ):
            db.table("participants").insert(
                {
                    "session_id": d.session_id,
                    "name": name,
                    "kind": kind,
                    "joined_at": AT,
                    "profile": prof,
                }
            )
        mid = 0
        for turn, (sat, clar) in enumerate(d.states):
            mid += 1
            db.table("messages").insert(
                {
                    "session_id": d.session_id,
                    "id": mid,
                    "step": mid,
                    "speaker": user.name,
                    "speaker_kind": "simulated",
                    "text": f"turn {turn}: I need a phone, not sure which",
                    "posted_at": AT,
                }
            )
            db.table("hidden_states").insert(
                {
                    "session_id": d.session_id,
                    "message_id": mid,
                    "participant": user.name,
                    "turn": turn,
                    "step": mid,
                    "satisfaction": 0.5 if sat is None else sat,
                    "satisfaction_missing": int(sat is None),
                    "clarity": clar,
                    "format": "json",
                    "recorded_at": AT,
                }
            )
            mid += 1
            db.table("messages").insert(
                {
                    "session_id": d.session_id,
                    "id": mid,
                    "step": mid,
                    "speaker": "Assistant",
                    "speaker_kind": "ai",
                    "text": "What matters most to you: the camera, the battery or the price?",
                    "posted_at": AT,
                }
            )
        db.table("storm_dialogues").insert(
            {
                "session_id": d.session_id,
                "user_name": user.name,
                "profile_id": user.id,
                "category": user.task.category,
                "task": user.task.task,
                "difficulty": 3,
                "uncertainty": d.uncertainty,
                "profile_access": int(d.access),
                "assistant": "plain",
                "assistant_model": d.model,
                "user_model": "gpt-4o-mini",
            }
        )
        for pair, label in enumerate(d.judged):
            db.table("storm_judgements").insert(
                {
                    "session_id": d.session_id,
                    "judge": "gpt-4o",
                    "pair": pair,
                    "clarity_change": label,
                    "satisfaction_change": "not change",
                    "explanation": "",
                    "created_at": AT,
                }
            )
