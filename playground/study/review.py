"""What a person does once a conversation is over: review it, rate its agent, answer the end.

They review it message by message, rate its agent (in a study plan), and at the end of a plan
say which agent had which style and which one they liked best.

Where a person is (their *phase*) follows from the room and from what they have saved, so a page
that reconnects, or a plan that resumes, lands where the person left off:

- ``talk``: the conversation is live;
- ``review``: it is over; the person can note, message by message, what they were thinking
  (and, in a study plan, still has to rate the agent);
- ``wait``: they rated it; the next conversation has not started yet;
- ``final``: the plan's last conversation is rated; the end-of-study questions are open;
- ``done``: nothing more to do.

The review stays open in every phase after ``talk``. Everything saved here is private to its
author: it is sent to their own pages only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlite_utils

from playground import errors
from playground.rating.user_study import STYLES, TIMINGS, USER_STUDY_METRICS, WANTED
from playground.room.room import Room
from playground.storage import study_rows
from playground.study import protocol

#: The longest note field, in characters (as a message).
MAX_TEXT = 2000

Payload = dict[str, Any]


class StudyError(errors.PlaygroundError):
    """An action a participant cannot take; the message is shown to them as it is."""


@dataclass(frozen=True)
class PlanStep:
    """The study plan a conversation belongs to, as its people see it."""

    plan_id: str
    position: int
    of: int
    topic: str
    agent: str
    #: The plan's agents, in order, when this is its last conversation: the end-of-study
    #: questions follow it. None for the other conversations.
    final_agents: tuple[str, ...] | None = None
    #: Every agent of the plan: a person cannot take one of their names, as they would meet
    #: that agent in a later conversation.
    agents: tuple[str, ...] = ()

    def public(self) -> Payload:
        return {"position": self.position, "of": self.of, "topic": self.topic, "agent": self.agent}


def _optional_text(value: object, what: str) -> str:
    from playground.study import names  # names imports nothing of the study's

    try:
        return names.optional_text(value, what, MAX_TEXT)
    except names.TextRefused as exc:
        raise StudyError(str(exc)) from None


def _choice(value: object, allowed: dict[str, str], what: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value not in allowed:
        raise StudyError(f"That is not one of the answers to “{what}”.")
    return value


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Review:
    """The after-conversation questions of one room's people."""

    def __init__(self, db: sqlite_utils.Database, room: Room, plan: PlanStep | None) -> None:
        self.db = db
        self.room = room
        self.plan = plan

    # -- where a person is ---------------------------------------------------------------------

    def rated(self, name: str) -> bool:
        """``name`` answered every statement about this conversation's agent."""
        have = study_rows.questionnaire(self.db, self.room.session_id, name)
        return len(have) >= len(USER_STUDY_METRICS)

    def answered_final(self, name: str) -> bool:
        if self.plan is None:
            return False
        items = {r["item"] for r in study_rows.plan_answers(self.db, self.plan.plan_id, name)}
        return "favourite" in items

    def phase(self, name: str | None) -> protocol.Phase:
        if not self.room.ended:
            return "talk"
        if self.plan is None or name is None:
            return "review"
        if not self.rated(name):
            return "review"
        if self.plan.final_agents is None:
            return "wait"
        return "done" if self.answered_final(name) else "final"

    def finished(self, name: str) -> bool:
        """``name`` has nothing left to answer about this conversation (or the plan)."""
        return self.phase(name) in ("wait", "done")

    # -- what a page is told --------------------------------------------------------------------

    def final_payload(self, name: str | None) -> Payload | None:
        if self.plan is None or self.plan.final_agents is None:
            return None
        saved = (
            {
                r["item"]: r["value"]
                for r in study_rows.plan_answers(self.db, self.plan.plan_id, name)
            }
            if name is not None
            else {}
        )
        return {
            "agents": list(self.plan.final_agents),
            "styles": [
                {"key": s.key, "label": s.label, "description": s.description} for s in STYLES
            ],
            "answers": saved,
        }

    def hello(self, name: str | None) -> Payload:
        """The keys a page's ``hello`` carries about the review and the study."""
        sid = self.room.session_id
        own = study_rows.retrospective(self.db, sid, name) if name is not None else []
        questionnaire = None
        if self.plan is not None:
            saved = study_rows.questionnaire(self.db, sid, name) if name is not None else []
            questionnaire = {
                "agent": self.plan.agent,
                "statements": [
                    {"key": i.key, "label": i.label, "statement": i.statement}
                    for i in USER_STUDY_METRICS
                ],
                "answers": {r["item"]: r["value"] for r in saved},
            }
        return {
            "phase": self.phase(name),
            "study": self.plan.public() if self.plan is not None else None,
            "retrospective": [_entry(r) for r in own],
            "review": {"wanted": dict(WANTED), "timings": dict(TIMINGS)},
            "questionnaire": questionnaire,
            "final": self.final_payload(name),
            "thoughts_shown": self.room.settings.room.show_thoughts,
        }

    # -- what a person saves ------------------------------------------------------------------

    def _require_over(self) -> None:
        if not self.room.ended:
            raise StudyError("The review opens when the conversation is over.")

    def retro(self, name: str, data: dict[str, Any]) -> Payload:
        """Save ``name``'s review of one message; the saved entry.

        Raises:
            StudyError: the conversation is still on, no such message, or an invalid answer.
        """
        self._require_over()
        message_id = _int(data.get("message_id"))
        count = len(self.room.messages)
        if message_id is None or not 1 <= message_id <= count:
            raise StudyError("Which message? There is no such message in this conversation.")
        entry: Payload = {
            "message_id": message_id,
            "thinking": _optional_text(data.get("thinking"), "note on what you were thinking"),
            "wanted": _choice(data.get("wanted"), WANTED, "Did you want to say it?"),
            "why": _optional_text(data.get("why"), "note on why"),
            "timing": _choice(data.get("timing"), TIMINGS, "When would you have spoken?"),
            "after_message_id": None,
        }
        if entry["timing"] == "after":
            after = _int(data.get("after_message_id"))
            if after is None or not message_id < after <= count:
                raise StudyError("After which message would you have spoken? Pick a later one.")
            entry["after_message_id"] = after
        if not (entry["thinking"] or entry["why"] or entry["wanted"] or entry["timing"]):
            raise StudyError("Nothing to save: answer at least one question.")
        self._save(study_rows.save_retrospective, self.room.session_id, name, entry)
        return entry

    def questionnaire(self, name: str, data: dict[str, Any]) -> dict[str, int]:
        """Save ``name``'s ratings of this conversation's agent (every statement, 1–7).

        Raises:
            StudyError: not a study conversation, still on, or answers missing or out of range.
        """
        if self.plan is None:
            raise StudyError("This conversation has no questionnaire.")
        self._require_over()
        given = data.get("answers")
        if not isinstance(given, dict):
            raise StudyError("The page sent no answers.")
        answers: dict[str, int] = {}
        missing = []
        for item in USER_STUDY_METRICS:
            value = _int(given.get(item.key))
            if value is None or not 1 <= value <= 7:
                missing.append(item.label)
            else:
                answers[item.key] = value
        if missing:
            raise StudyError("Please answer every statement: missing " + ", ".join(missing) + ".")
        self._save(study_rows.save_questionnaire, self.room.session_id, name, answers)
        return answers

    def final(self, name: str, data: dict[str, Any]) -> dict[str, str]:
        """Save ``name``'s end-of-study answers: each agent's style and the favourite agent.

        Raises:
            StudyError: the final questions are not open for them, or an answer is missing.
        """
        final = self.plan.final_agents if self.plan is not None else None
        if self.plan is None or final is None or self.phase(name) not in ("final", "done"):
            raise StudyError("The final questions open after the last conversation is rated.")
        given = data.get("answers")
        if not isinstance(given, dict):
            raise StudyError("The page sent no answers.")
        styles = {s.key for s in STYLES}
        answers: dict[str, str] = {}
        for agent in final:
            value = given.get(f"match:{agent}")
            if value not in styles:
                raise StudyError(f"Please pick a style for {agent}.")
            answers[f"match:{agent}"] = str(value)
        favourite = given.get("favourite")
        if favourite not in final:
            raise StudyError("Please pick your favourite AI.")
        answers["favourite"] = str(favourite)
        self._save(study_rows.save_plan_answers, self.plan.plan_id, name, answers)
        return answers

    def _save(self, write: Any, key: str, name: str, value: Any) -> None:
        try:
            write(self.db, key, name, value, self.room.clock.now_iso())
        except Exception as exc:  # sqlite3 errors: the person is told it was not saved
            raise StudyError(
                f"Your answers could not be saved ({type(exc).__name__}: {exc}). Please try again"
                " or tell the researcher."
            ) from exc


def _entry(row: dict[str, Any]) -> Payload:
    return {k: row[k] for k in study_rows.RETRO_COLUMNS}
