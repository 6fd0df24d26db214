"""Between one room and the browsers of its invited people.

What a participant receives is decided here, event kind by event kind (an exhaustive match: a
new kind of event is private until someone decides otherwise): the conversation, who joined or
left, who is typing and who is connected, and their *own* private notes and answers. Never an
agent's thoughts, memories, scores or decisions, a simulated user's profile or hidden state,
another person's notes, or anything of another session.

What a participant does goes to the room's own calls (``add_human``, ``post_human_message``,
``annotate``, ``record_label``), which record it exactly as the window's human is recorded. The
recorder is the bus's required subscriber and runs before this hub, so every message is saved
before any browser is told of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, assert_never

from playground import domain, errors, events
from playground.room.room import Room
from playground.storage import seats as seat_rows
from playground.study import names
from playground.study.review import MAX_TEXT, PlanStep, Review, StudyError
from playground.study.seats import Seat, SeatBook

log = logging.getLogger(__name__)

#: The longest display name.
MAX_NAME = 40
#: Messages a participant may send per minute, and actions of any kind per 10 seconds.
MESSAGES_PER_MINUTE = 20
ACTIONS_PER_10_SECONDS = 30
#: Updates queued for one browser before it is disconnected as too slow (it reconnects and
#: catches up from its last message).
QUEUE_LIMIT = 1000
#: Why a page's connection closes when a study plan moves on to its next conversation.
NEXT_CONVERSATION = "the next conversation begins"

Payload = dict[str, Any]


@dataclass(eq=False)
class Connection:
    """One open browser tab of a seat: what is to be sent to it, in order."""

    seat: Seat
    queue: asyncio.Queue[Payload | None] = field(
        default_factory=lambda: asyncio.Queue(maxsize=QUEUE_LIMIT)
    )
    #: Why the server closes it (revoked, too slow, the study ended), once it must.
    closing: str | None = None

    def push(self, payload: Payload) -> None:
        if self.closing is not None:
            return
        try:
            self.queue.put_nowait(payload)
        except asyncio.QueueFull:
            self.close("too slow to follow the conversation")

    def close(self, why: str) -> None:
        if self.closing is None:
            self.closing = why
            while True:  # room for the end marker: what is unsent is caught up on reconnect
                try:
                    self.queue.put_nowait(None)
                    break
                except asyncio.QueueFull:
                    self.queue.get_nowait()


class _Rate:
    """At most ``n`` uses in a sliding window of ``seconds``."""

    def __init__(self, n: int, seconds: float) -> None:
        self.n, self.seconds = n, seconds
        self.times: deque[float] = deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self.times and now - self.times[0] > self.seconds:
            self.times.popleft()
        if len(self.times) >= self.n:
            return False
        self.times.append(now)
        return True


def public_message(m: domain.Message) -> Payload:
    return {"id": m.id, "speaker": m.speaker, "text": m.text, "at": m.at, "kind": m.kind}


def check_name(name: object, taken: list[str]) -> str:
    """A display name a person typed, cleaned; why not, when it cannot be used.

    Raises:
        StudyError: empty, too long, control characters, or already someone's.
    """
    try:
        return names.person_name(name, taken, MAX_NAME)
    except names.TextRefused as exc:
        raise StudyError(str(exc)) from None


def _text(value: object, what: str) -> str:
    try:
        return names.text(value, what, MAX_TEXT)
    except names.TextRefused as exc:
        raise StudyError(str(exc)) from None


class StudyHub:
    """The browsers of one room's invited people."""

    def __init__(self, room: Room, book: SeatBook, plan: PlanStep | None = None) -> None:
        self.room = room
        self.book = book
        self.review = Review(book.db, room, plan)
        self.connections: set[Connection] = set()
        self.closed_reason: str | None = None
        self._rates: dict[int, tuple[_Rate, _Rate]] = {}
        #: Who the browsers are told is typing, and when each person's typing was last passed on.
        self._typists: set[str] = set()
        self._typing_at: dict[str, float] = {}
        #: Messages known to be saved: those before the hub, then each one the bus delivers
        #: while the recorder is well (it runs first).
        self._saved = len(room.messages)
        self._unsubscribe: Callable[[], None] = room.bus.subscribe(self._on_event)

    # -- connections -------------------------------------------------------------------------------

    def open(self, seat: Seat, after: int) -> Connection:
        """A browser of ``seat`` (re)connects having seen messages up to ``after``: its catch-up
        is the first thing queued, and from then on it follows the room (no gap, no repeat)."""
        conn = Connection(seat)
        conn.push(self.snapshot(seat, after))
        if self.closed_reason is not None:
            conn.close(self.closed_reason)
            return conn
        first = not any(c.seat is seat for c in self.connections)
        self.connections.add(conn)
        if first and seat.name is not None:
            self._presence(seat.name, online=True)
        return conn

    def close_connection(self, conn: Connection) -> None:
        """A browser went away (closed, dropped, or closed by the server)."""
        if conn not in self.connections:
            return
        self.connections.discard(conn)
        if conn.seat.name is not None and not any(c.seat is conn.seat for c in self.connections):
            self._presence(conn.seat.name, online=False)
            self._typing_off(conn.seat.name)

    def revoke(self, number: int) -> Seat:
        """Close seat ``number`` for good: its browsers are told and disconnected.

        Raises:
            KeyError: no such seat.
        """
        seat = self.book.revoke(number, self.room.clock.now_iso())
        for conn in [c for c in self.connections if c.seat is seat]:
            conn.push({"type": "revoked"})
            conn.close("the researcher closed this seat")
        return seat

    def close(self, reason: str) -> None:
        """The study ends (the window closed, the server stopped): every browser is told."""
        if self.closed_reason is not None:
            return
        self.closed_reason = reason
        self._unsubscribe()
        for conn in list(self.connections):
            conn.push({"type": "ended", "status": self.room.status, "reason": reason})
            conn.close(reason)

    def move_on(self) -> None:
        """A study plan's next conversation begins on another hub: this one stops following its
        room, and its pages are closed so that they reconnect there."""
        if self.closed_reason is not None:
            return
        self.closed_reason = NEXT_CONVERSATION
        self._unsubscribe()
        for conn in list(self.connections):
            conn.close(NEXT_CONVERSATION)

    def online(self, seat: Seat) -> bool:
        return any(c.seat is seat for c in self.connections)

    # -- what a browser is sent ---------------------------------------------------------------------

    def snapshot(self, seat: Seat, after: int) -> Payload:
        """Everything a (re)connecting browser needs: the people, the messages after ``after``
        (all of them for a new page), and this seat's own notes."""
        room = self.room
        people = [
            self._person(name, p.kind) for name, p in room.participants.items() if p is not None
        ]
        own = (
            seat_rows.private_notes(self.book.db, room.session_id, seat.name)
            if seat.name is not None
            else {"notes": [], "labels": []}
        )
        return {
            "type": "hello",
            "you": seat.name,
            "status": "open" if not room.ended and self.closed_reason is None else "ended",
            "participants": people,
            "messages": [public_message(m) for m in room.messages[max(0, after) : self._saved]],
            "notes": own["notes"],
            "labels": own["labels"],
            "question": domain.MOMENT_QUESTION,
            "answers": list(domain.MOMENT_ANSWERS),
            "limits": {"text": MAX_TEXT, "name": MAX_NAME},
            **self.review.hello(seat.name),
        }

    def _person(self, name: str, kind: str) -> Payload:
        remote = [s for s in self.book.seats if s.name == name]
        return {
            "name": name,
            "kind": kind,
            "remote": bool(remote),
            "online": bool(remote) and self.online(remote[0]),
        }

    def _to_all(self, payload: Payload, *, but: Seat | None = None) -> None:
        for conn in list(self.connections):
            if conn.seat is not but:
                conn.push(payload)

    def _to_author(self, author: str, payload: Payload) -> None:
        for conn in list(self.connections):
            if conn.seat.name == author:
                conn.push(payload)

    def _on_event(self, e: events.Event) -> None:
        if self.room.bus.failure is not None:
            return  # the recorder failed: nothing unsaved is shown
        match e:
            case events.MessagePosted():
                self._saved = max(self._saved, e.message.id)
                self._typing_off(e.message.speaker)
                self._to_all({"type": "message", "message": public_message(e.message)})
            case events.ParticipantJoined():
                # A remote person joins from a connected browser: online from the start.
                person = {"name": e.name, "kind": e.participant_kind, "remote": e.remote}
                self._to_all({"type": "joined", "person": {**person, "online": e.remote}})
            case events.ParticipantLeft():
                self._to_all({"type": "left", "name": e.name})
            case events.ParticipantStateChanged():
                # Only "speaking" shows: an agent writing its message. Thinking is covert.
                if e.state == "speaking":
                    self._typing_on(e.name)
                else:
                    self._typing_off(e.name)
            case events.PresenceChanged():
                self._to_all({"type": "presence", "name": e.name, "online": e.online})
            case events.AnnotationAdded():
                note = {"message_id": e.message_id, "kind": e.note_kind, "text": e.text}
                self._to_author(e.author, {"type": "note", "note": note})
            case events.LabelRecorded():
                label = {"message_id": e.message_id, "answer": e.answer}
                self._to_author(e.author, {"type": "label", "label": label})
            case events.SessionFinished():
                self._to_all({"type": "ended", "status": e.status, "reason": e.reason})
                for conn in list(self.connections):
                    self._phase(conn.seat)
            case events.ThoughtFormed() if self.room.settings.room.show_thoughts:
                t = e.thought
                formed = {"name": t.agent, "id": t.id, "text": t.text, "motivation": None}
                self._to_all({"type": "thought", **formed})
            case events.ThoughtEvaluated() if self.room.settings.room.show_thoughts:
                rated = self._thought(e.agent, e.evaluation.thought_id)
                if rated is not None:
                    motivation = round(e.evaluation.expected, 2)
                    self._to_all({"type": "thought", **rated, "motivation": motivation})
            case (
                events.SessionStarted()
                | events.MemoryChanged()
                | events.TriggerFired()
                | events.MessageInterpreted()
                | events.TurnTypePredicted()
                | events.NextSpeakerPredicted()
                | events.PolicyChanged()
                | events.MemoriesRetrieved()
                | events.ThoughtFormed()
                | events.ThoughtRefused()
                | events.ThoughtEvaluated()
                | events.ThoughtExpressed()
                | events.ThoughtDeleted()
                | events.ThoughtRestored()
                | events.DecisionMade()
                | events.UsageRecorded()
                | events.ErrorOccurred()
                | events.ProactivityChanged()
                | events.HiddenStateRecorded()
                | events.MessageEmbedded()
                | events.TriggerTimed()  # research data: never sent, even when thoughts are shown
            ):
                pass  # private to the researcher
            case _:
                assert_never(e)

    def _typing_on(self, name: str, *, but: Seat | None = None) -> None:
        self._typists.add(name)
        self._to_all({"type": "typing", "name": name, "on": True}, but=but)

    def _typing_off(self, name: str) -> None:
        if name in self._typists:
            self._typists.discard(name)
            self._to_all({"type": "typing", "name": name, "on": False})

    def _presence(self, name: str, *, online: bool) -> None:
        try:
            self.room.set_presence(name, online=online)
        except errors.PlaygroundError:
            log.warning("presence of %s not recorded", name, exc_info=True)

    # -- what a browser does ------------------------------------------------------------------------

    async def act(self, conn: Connection, data: object) -> None:
        """Carry out one action a browser sent.

        Raises:
            StudyError: the action cannot be taken (the message says why, for the person).
            PlaygroundError: the room refused it (the session ended, no such message).
        """
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            raise StudyError("The page sent something this server does not understand.")
        seat = conn.seat
        messages, actions = self._rates.setdefault(
            seat.number, (_Rate(MESSAGES_PER_MINUTE, 60), _Rate(ACTIONS_PER_10_SECONDS, 10))
        )
        if not actions.allow():
            raise StudyError("Too many actions at once: please wait a few seconds.")
        kind = data["type"]
        if kind == "join":
            self._join(seat, data.get("name"))
            return
        name = seat.name
        if name is None:
            raise StudyError("Join the conversation with a name first.")
        if kind == "say":
            text = _text(data.get("text"), "message")
            if not messages.allow():
                raise StudyError(
                    f"You can send at most {MESSAGES_PER_MINUTE} messages a minute: please wait."
                )
            await self.room.post_human_message(name, text)
        elif kind == "note":
            self.room.annotate(name, _message_id(data), _text(data.get("text"), "note"))
        elif kind == "label":
            self._label(name, _message_id(data), data.get("answer"))
        elif kind == "typing":
            self._typing(seat, name)
        elif kind == "retro":
            entry = self.review.retro(name, data)
            self._to_author(name, {"type": "retro", "entry": entry})
        elif kind == "questionnaire":
            answers = self.review.questionnaire(name, data)
            self._to_author(name, {"type": "answered", "what": "questionnaire", "answers": answers})
            self._phase(seat)
        elif kind == "final":
            final = self.review.final(name, data)
            self._to_author(name, {"type": "answered", "what": "final", "answers": final})
            self._phase(seat)
        else:
            raise StudyError("The page sent something this server does not understand.")

    def _join(self, seat: Seat, typed: object) -> None:
        if seat.name is not None:
            raise StudyError(f"You already joined as {seat.name}.")
        plan = self.review.plan
        taken = [*self.room.participants, *(plan.agents if plan is not None else ())]
        taken += [s.name for s in self.book.seats if s.name is not None]  # a plan's other people
        name = check_name(typed, taken)
        self.room.add_human(name, remote=True)
        self.book.name(seat, name)
        for conn in self.connections:
            if conn.seat is seat:
                conn.push({"type": "you", "name": name})
        self._presence(name, online=True)

    def _label(self, name: str, message_id: int, answer: object) -> None:
        answers = {a.casefold(): a for a in domain.MOMENT_ANSWERS}
        if not isinstance(answer, str) or answer.casefold() not in answers:
            raise StudyError("That is not one of the answers.")
        if not 1 <= message_id <= len(self.room.messages):
            raise StudyError(f"There is no message #{message_id}.")
        speaker = self.room.messages[message_id - 1].speaker
        question = domain.MOMENT_QUESTION.format(speaker=speaker)
        self.room.record_label(name, message_id, question, answers[answer.casefold()].lower())

    def _phase(self, seat: Seat) -> None:
        """Tell ``seat``'s pages where its person is now (the conversation ended, they rated it)."""
        phase = self.review.phase(seat.name)
        payload: Payload = {"type": "phase", "phase": phase}
        if phase == "final":
            payload["final"] = self.review.final_payload(seat.name)
        for conn in list(self.connections):
            if conn.seat is seat:
                conn.push(payload)

    def _thought(self, agent: str, thought_id: int) -> Payload | None:
        found = next((a for a in self.room.agents if a.name == agent), None)
        if found is None or thought_id not in found.reservoir:
            return None
        t = found.reservoir.get(thought_id)
        return {"name": agent, "id": t.id, "text": t.text}

    def _typing(self, seat: Seat, name: str) -> None:
        now = time.monotonic()
        if now - self._typing_at.get(name, 0.0) >= 1.0:  # at most once a second per person
            self._typing_at[name] = now
            self._typing_on(name, but=seat)


def _message_id(data: dict[str, Any]) -> int:
    value = data.get("message_id")
    if not isinstance(value, int) or isinstance(value, bool):
        raise StudyError("Which message? The page sent no message number.")
    return value
