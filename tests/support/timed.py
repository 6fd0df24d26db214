"""A short recorded session whose triggers were timed, written event by event as the room writes
it (no engine runs): the readers of ``trigger_timed`` events read it back.

Step 1 answers the icebreaker: Ana speaks (message #2) after her System-2 thoughts waited 0.21 s
for the room's agent limit; step 2 is a pause where everyone stays silent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playground import domain, events
from tests.ui.recorded import SessionWriter

SID = "20260101-000000-time"
AGENTS = ["Ana", "Bo"]
#: A thought's text, the detail of Ana's evaluation at step 1 (longer than the table shows).
THOUGHT = "I could share that I grow leeks in my garden every single spring"


def _stage(stage: str, agent: str, ready: float, started: float, took: float, **kw: Any) -> Any:
    return events.StageTiming(
        stage=stage,
        agent=agent,
        ready=ready,
        started=started,
        took=took,
        **kw,
    )


STEP_1 = events.TriggerTimed(
    trigger="new_message",
    message_id=1,
    posted=2,
    total=1.83,
    stages=[
        _stage("interpretation", "", 0.0, 0.0, 0.41, in_calls=0.4, calls=1, critical=True),
        _stage("System-2 thoughts", "Bo", 0.41, 0.41, 0.3, in_calls=0.29, calls=1),
        _stage("System-2 thoughts", "Ana", 0.41, 0.62, 0.4, in_calls=0.39, calls=1, critical=True),
        _stage(
            "evaluation",
            "Ana",
            1.02,
            1.02,
            0.41,
            in_calls=0.4,
            calls=1,
            critical=True,
            detail=THOUGHT,
        ),
        _stage("floor", "", 1.43, 1.43, 0.0, critical=True),
        _stage("articulation", "Ana", 1.43, 1.43, 0.4, in_calls=0.38, calls=1, critical=True),
    ],
)
STEP_2 = events.TriggerTimed(
    trigger="pause",
    message_id=2,
    total=0.52,
    stages=[
        _stage("turn type", "", 0.0, 0.0, 0.12, critical=True),
        _stage("decision", "Bo", 0.12, 0.12, 0.4, critical=True),
    ],
)


def _decision(agent: str, step: int, action: str) -> events.DecisionMade:
    d = domain.Decision(
        agent=agent,
        step=step,
        trigger="new_message" if step == 1 else "pause",
        action=action,
        reason="test",
    )
    return events.DecisionMade(decision=d)


def _message(mid: int, speaker: str, text: str, step: int) -> events.MessagePosted:
    at = "2026-01-01T00:00:00+00:00"
    return events.MessagePosted(
        message=domain.Message(id=mid, speaker=speaker, text=text, step=step, at=at)
    )


def write_timed_session(path: Path) -> str:
    """Write the session (see the module docstring) into the database at ``path``; its id."""
    w = SessionWriter(path, SID, AGENTS)
    w.emit(_message(1, "Bo", "Hi!", 0), 0)
    w.emit(events.TriggerFired(trigger="new_message", message_id=1, generation=1), 1)
    w.emit(_decision("Ana", 1, "speak"), 1)
    w.emit(_decision("Bo", 1, "silent"), 1)
    w.emit(_message(2, "Ana", "Leeks!", 1), 1)
    w.emit(STEP_1, 1)
    w.emit(events.TriggerFired(trigger="pause", message_id=2, generation=2), 2)
    w.emit(_decision("Ana", 2, "silent"), 2)
    w.emit(_decision("Bo", 2, "silent"), 2)
    w.emit(STEP_2, 2)
    w.emit(events.SessionFinished(status="finished", reason="test"), 2)
    w.db.close()
    return SID
