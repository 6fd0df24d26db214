"""STORM dialogues read back from the session database, for the judge, the metrics and the report.

A dialogue is one simulated user's turns in one session: each turn is the user's message with its
hidden state (table ``hidden_states``) and the other participants' messages that followed it
before the user's next message (the assistant's reply). The design of a dyadic run (model,
uncertainty, profile access...) is its ``storm_dialogues`` row; the profile is the snapshot in
``participants.profile``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils
from pydantic import ValidationError

from playground import errors
from playground.domain.simulated_user import HiddenState, TurnJudgement, UserProfile

_STATE_FIELDS = (
    "inner_thoughts", "satisfaction", "satisfaction_explanation", "satisfaction_missing",
    "clarity", "clarity_explanation", "emotion", "intent", "emotion_source", "intent_source",
    "format",
)  # fmt: skip
DESIGN_FIELDS = (
    "experiment_id", "user_name", "profile_id", "category", "task", "difficulty", "uncertainty",
    "profile_access", "assistant", "assistant_model", "user_model",
)  # fmt: skip


@dataclass(frozen=True)
class DialogueTurn:
    """One turn of the simulated user: its message, hidden state and the replies that followed."""

    turn: int
    message_id: int
    message: str
    state: HiddenState
    #: What the other participants said after this message and before the user's next one.
    replies: tuple[str, ...] = ()


@dataclass(frozen=True)
class StormDialogue:
    """A simulated user's dialogue in one session."""

    session_id: str
    user: str
    turns: tuple[DialogueTurn, ...]
    #: The other participants' messages before the user's first message.
    opening: tuple[str, ...] = ()
    #: The ``storm_dialogues`` row of a dyadic run (None for a simulated user in a room).
    design: dict[str, Any] | None = None
    profile: UserProfile | None = None
    #: The user's hidden states that could not be read back (skipped, with the reason).
    problems: tuple[str, ...] = field(default=())

    @property
    def states(self) -> list[HiddenState]:
        return [t.state for t in self.turns]


def _rows(db: sqlite_utils.Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = db.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def storm_sessions(db: sqlite_utils.Database, experiment: str | None = None) -> list[str]:
    """The sessions of dyadic STORM runs (``storm_dialogues``), oldest first.

    Args:
        db: an open session database.
        experiment: only those of this experiment (an id, a unique prefix or its name).

    Raises:
        PlaygroundError: unknown or ambiguous experiment.
    """
    sql = (
        "SELECT d.session_id FROM storm_dialogues d JOIN sessions s ON s.id = d.session_id"
        " {where} ORDER BY s.created_at, d.session_id"
    )
    if experiment is None:
        return [r[0] for r in db.execute(sql.format(where=""))]
    from playground.experiments.results import resolve

    exp = resolve(db, experiment)
    where = "WHERE COALESCE(d.experiment_id, s.experiment_id) = ?"
    return [r[0] for r in db.execute(sql.format(where=where), [exp])]


def simulated_users(db: sqlite_utils.Database, session_id: str) -> list[str]:
    """The participants of a session that have hidden states, by first message."""
    return [
        r[0]
        for r in db.execute(
            "SELECT participant FROM hidden_states WHERE session_id = ?"
            " GROUP BY participant ORDER BY MIN(message_id)",
            [session_id],
        )
    ]


def load_dialogue(
    db: sqlite_utils.Database, session_id: str, *, user: str | None = None
) -> StormDialogue:
    """Read a simulated user's dialogue back.

    Args:
        db: an open session database.
        session_id: the full session id.
        user: the simulated user; default: the dyadic run's user, else the session's only one.

    Raises:
        SessionNotFound: no such session.
        PlaygroundError: the session has no simulated user, or several and none was named.
    """
    if not db.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id]).fetchone():
        raise errors.SessionNotFound(f"no session {session_id!r} in this database")
    found = _rows(
        db,
        f"SELECT {', '.join(DESIGN_FIELDS)} FROM storm_dialogues WHERE session_id = ?",
        [session_id],
    )
    design = found[0] if found else None
    if design is not None:
        design["profile_access"] = bool(design["profile_access"])
    if user is None:
        if design is not None:
            user = str(design["user_name"])
        else:
            users = simulated_users(db, session_id)
            if not users:
                raise errors.PlaygroundError(f"session {session_id} has no simulated user")
            if len(users) > 1:
                raise errors.PlaygroundError(
                    f"session {session_id} has {len(users)} simulated users"
                    f" ({', '.join(users)}): name the one to use"
                )
            user = users[0]
    profile, problems = _profile(db, session_id, user)
    states = {
        r["message_id"]: r
        for r in _rows(
            db,
            f"SELECT message_id, turn, {', '.join(_STATE_FIELDS)} FROM hidden_states"
            " WHERE session_id = ? AND participant = ?",
            [session_id, user],
        )
    }
    turns: list[DialogueTurn] = []
    opening: list[str] = []
    replies: list[str] = []
    current: tuple[int, str, HiddenState] | None = None
    for m in _rows(
        db,
        "SELECT id, speaker, text FROM messages WHERE session_id = ? ORDER BY id",
        [session_id],
    ):
        if m["speaker"] != user:
            (replies if current is not None else opening).append(str(m["text"]))
            continue
        row = states.get(m["id"])
        if row is None:  # a message of the user without a hidden state: not a turn
            problems.append(f"message {m['id']} of {user} has no hidden state")
            continue
        try:
            state = HiddenState(**{k: row[k] for k in _STATE_FIELDS})
        except ValidationError as exc:
            problems.append(f"hidden state of message {m['id']}: {str(exc).splitlines()[0]}")
            continue
        if current is not None:
            turns.append(
                DialogueTurn(len(turns), current[0], current[1], current[2], tuple(replies))
            )
        current, replies = (int(m["id"]), str(m["text"]), state), []
    if current is not None:
        turns.append(DialogueTurn(len(turns), current[0], current[1], current[2], tuple(replies)))
    return StormDialogue(
        session_id=session_id, user=user, turns=tuple(turns), opening=tuple(opening),
        design=design, profile=profile, problems=tuple(problems),
    )  # fmt: skip


def _profile(
    db: sqlite_utils.Database, session_id: str, user: str
) -> tuple[UserProfile | None, list[str]]:
    row = db.execute(
        "SELECT profile FROM participants WHERE session_id = ? AND name = ?", [session_id, user]
    ).fetchone()
    if row is None or not row[0]:
        return None, []
    try:
        return UserProfile.model_validate(json.loads(row[0])), []
    except (ValueError, ValidationError) as exc:
        return None, [f"profile of {user}: {str(exc).splitlines()[0]}"]


def judges(db: sqlite_utils.Database, session_ids: list[str]) -> dict[str, int]:
    """Each judge of ``storm_judgements`` and how many of these sessions it judged."""
    out: dict[str, int] = {}
    wanted = set(session_ids)
    for judge, sid in db.execute("SELECT DISTINCT judge, session_id FROM storm_judgements"):
        if sid in wanted:
            out[judge] = out.get(judge, 0) + 1
    return out


def load_judgements(db: sqlite_utils.Database, session_id: str, judge: str) -> list[TurnJudgement]:
    """A judge's stored analyses of a session's turn pairs, by pair."""
    return [
        TurnJudgement(
            pair=r["pair"],
            clarity_change=r["clarity_change"],
            satisfaction_change=r["satisfaction_change"],
            explanation=r["explanation"],
        )
        for r in _rows(
            db,
            "SELECT pair, clarity_change, satisfaction_change, explanation FROM storm_judgements"
            " WHERE session_id = ? AND judge = ? ORDER BY pair",
            [session_id, judge],
        )
    ]
