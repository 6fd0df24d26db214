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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import assert_never

import pydantic

from playground import domain, errors, events
from playground.room.room import Room
from playground.storage import seats as seat_rows
from playground.study import names, protocol
from playground.study.protocol import CloseCode
from playground.study.review import MAX_TEXT, PlanStep, Review, StudyError
from playground.study.seats import Seat, SeatBook
from playground.web import RateLimit

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
#: What a page shows while its study is paused.
PAUSED = "The study is paused; this page will continue by itself."


@dataclass(eq=False)
class Connection:
    """One open browser tab of a seat: what is to be sent to it, in order."""

    seat: Seat
    queue: asyncio.Queue[protocol.ServerFrame | None] = field(
        default_factory=lambda: asyncio.Queue(maxsize=QUEUE_LIMIT)
    )
    #: Why the server closes it (revoked, too slow, the study ended), once it must.
    closing: str | None = None
    #: The close code its socket gets (what the page does next).
    code: CloseCode = CloseCode.DROPPED

    def push(self, frame: protocol.ServerFrame) -> None:
        if self.closing is not None:
            return
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.close("too slow to follow the conversation", CloseCode.TOO_SLOW)

    def close(self, why: str, code: CloseCode = CloseCode.DROPPED) -> None:
        if self.closing is None:
            self.closing = why
            self.code = code
            while True:  # room for the end marker: what is unsent is caught up on reconnect
                try:
                    self.queue.put_nowait(None)
                    break
                except asyncio.QueueFull:
                    self.queue.get_nowait()



def public_message(m: domain.Message) -> protocol.PublicMessage:
    return protocol.PublicMessage(id=m.id, speaker=m.speaker, text=m.text, at=m.at, kind=m.kind)


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
        #: The close code of pages that open once it is closed (what they do next).
        self.closed_code = CloseCode.FOR_GOOD
        self._rates: dict[int, tuple[RateLimit, RateLimit]] = {}
        #: Who the browsers are told is typing, and when each person's typing was last passed on.
        self._typists: set[str] = set()
        self._typing_at: dict[str, float] = {}
        #: Messages known to be saved: those before the hub, then each one the bus delivers
        #: while the recorder is well (it runs first).
        self._saved = len(room.messages)
        self._unsubscribe: Callable[[], None] = room.bus.subscribe(self._on_event)
        #: Called when the number of pages open on a seat changes (the window's seat list).
        self.on_pages: Callable[[], None] | None = None

    # -- connections -------------------------------------------------------------------------------

    def open(self, seat: Seat, after: int, session: str | None = None) -> Connection:
        """A browser of ``seat`` (re)connects having seen messages up to ``after`` of the
        conversation ``session``: its catch-up is the first thing queued, and from then on it
        follows the room (no gap, no repeat). A page that showed another conversation (a plan
        resumed after a crash runs it again as a new session), or does not say which, gets all of
        this one's messages: ``after`` counts in its own conversation only."""
        if session != self.room.session_id:
            after = 0
        conn = Connection(seat)
        others = [c for c in self.connections if c.seat is seat]
        conn.push(self.snapshot(seat, after, pages=len(others) + 1))
        if self.closed_reason is not None:
            conn.close(self.closed_reason, self.closed_code)
            return conn
        self.connections.add(conn)
        if not others and seat.name is not None:
            self._presence(seat.name, online=True)
        for other in others:  # the link was opened again: its earlier pages are told
            other.push(protocol.Pages(count=len(others) + 1))
        self._pages_changed()
        return conn

    def close_connection(self, conn: Connection) -> None:
        """A browser went away (closed, dropped, or closed by the server)."""
        if conn not in self.connections:
            return
        self.connections.discard(conn)
        rest = [c for c in self.connections if c.seat is conn.seat]
        for other in rest:
            other.push(protocol.Pages(count=len(rest)))
        if conn.seat.name is not None and not rest:
            self._presence(conn.seat.name, online=False)
            self._typing_off(conn.seat.name)
        self._pages_changed()

    def _pages_changed(self) -> None:
        if self.on_pages is not None:
            self.on_pages()

    def revoke(self, number: int) -> Seat:
        """Close seat ``number`` for good: its browsers are told and disconnected.

        Raises:
            KeyError: no such seat.
        """
        seat = self.book.revoke(number, self.room.clock.now_iso())
        for conn in [c for c in self.connections if c.seat is seat]:
            conn.push(protocol.Revoked())
            conn.close("the researcher closed this seat", CloseCode.FOR_GOOD)
        return seat

    def close(self, reason: str) -> None:
        """The study ends (the window closed, the server stopped): every browser is told."""
        if self.closed_reason is not None:
            return
        self.closed_reason = reason
        self._unsubscribe()
        status = self.room.status if self.room.status != "running" else "interrupted"
        for conn in list(self.connections):
            conn.push(protocol.Ended(status=status, reason=reason))
            conn.close(reason, CloseCode.FOR_GOOD)

    def pause(self) -> None:
        """The study pauses (its runner stopped; it resumes later with the same links): every
        browser is told so, and keeps trying to come back."""
        if self.closed_reason is not None:
            return
        self.closed_reason, self.closed_code = PAUSED, CloseCode.PAUSED
        self._unsubscribe()
        for conn in list(self.connections):
            conn.push(protocol.Paused(reason=PAUSED))
            conn.close(PAUSED, CloseCode.PAUSED)

    def move_on(self) -> None:
        """A study plan's next conversation begins on another hub: this one stops following its
        room, and its pages are closed so that they reconnect there."""
        if self.closed_reason is not None:
            return
        self.closed_reason, self.closed_code = NEXT_CONVERSATION, CloseCode.NEXT
        self._unsubscribe()
        for conn in list(self.connections):
            conn.close(NEXT_CONVERSATION, CloseCode.NEXT)

    def online(self, seat: Seat) -> bool:
        return any(c.seat is seat for c in self.connections)

    def pages(self, seat: Seat) -> int:
        """How many pages are open on ``seat``'s link (more than one: it was opened twice)."""
        return sum(c.seat is seat for c in self.connections)

    # -- what a browser is sent ---------------------------------------------------------------------

    def snapshot(self, seat: Seat, after: int, *, pages: int = 1) -> protocol.Hello:
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
        return protocol.Hello.model_validate(
            {
                "session": room.session_id,
                "you": seat.name,
                "status": "open" if not room.ended and self.closed_reason is None else "ended",
                "pages": pages,
                "participants": people,
                "messages": [public_message(m) for m in room.messages[max(0, after) : self._saved]],
                "notes": own["notes"],
                "labels": own["labels"],
                "question": domain.MOMENT_QUESTION,
                "answers": list(domain.MOMENT_ANSWERS),
                "limits": {"text": MAX_TEXT, "name": MAX_NAME},
                **self.review.hello(seat.name),
            }
        )

    def _person(self, name: str, kind: domain.ParticipantKind) -> protocol.Person:
        remote = [s for s in self.book.seats if s.name == name]
        return protocol.Person(
            name=name,
            kind=kind,
            remote=bool(remote),
            online=bool(remote) and self.online(remote[0]),
        )

    def _to_all(self, frame: protocol.ServerFrame, *, but: Seat | None = None) -> None:
        for conn in list(self.connections):
            if conn.seat is not but:
                conn.push(frame)

    def _to_author(self, author: str, frame: protocol.ServerFrame) -> None:
        for conn in list(self.connections):
            if conn.seat.name == author:
                conn.push(frame)

    def _on_event(self, e: events.Event) -> None:
        if self.room.bus.failure is not None:
            return  # the recorder failed: nothing unsaved is shown
        match e:
            case events.MessagePosted():
                self._saved = max(self._saved, e.message.id)
                self._typing_off(e.message.speaker)
                self._to_all(protocol.MessageFrame(message=public_message(e.message)))
            case events.ParticipantJoined():
                # A remote person joins from a connected browser: online from the start.
                person = protocol.Person(
                    name=e.name, kind=e.participant_kind, remote=e.remote, online=e.remote
                )
                self._to_all(protocol.Joined(person=person))
            case events.ParticipantLeft():
                self._to_all(protocol.Left(name=e.name))
            case events.ParticipantStateChanged():
                # Only "speaking" shows: an agent writing its message. Thinking is covert.
                if e.state == "speaking":
                    self._typing_on(e.name)
                else:
                    self._typing_off(e.name)
            case events.PresenceChanged():
                self._to_all(protocol.Presence(name=e.name, online=e.online))
            case events.AnnotationAdded():
                note = protocol.Note(message_id=e.message_id, kind=e.note_kind, text=e.text)
                self._to_author(e.author, protocol.NoteFrame(note=note))
            case events.LabelRecorded():
                label = protocol.Label(message_id=e.message_id, answer=e.answer)
                self._to_author(e.author, protocol.LabelFrame(label=label))
            case events.SessionFinished():
                self._to_all(protocol.Ended(status=e.status, reason=e.reason))
                for conn in list(self.connections):
                    self._phase(conn.seat)
            case events.ThoughtFormed() if self.room.settings.room.show_thoughts:
                t = e.thought
                self._to_all(protocol.Thought(name=t.agent, id=t.id, text=t.text, motivation=None))
            case events.ThoughtEvaluated() if self.room.settings.room.show_thoughts:
                rated = self._thought(e.agent, e.evaluation.thought_id)
                if rated is not None:
                    motivation = round(e.evaluation.expected, 2)
                    self._to_all(rated.model_copy(update={"motivation": motivation}))
            case (
                events.SessionStarted()
                | events.MemoryChanged()
                | events.TriggerFired()
                | events.MessageInterpreted()
                | events.TurnTypePredicted()
                | events.NextSpeakerPredicted()
                | events.PolicyChanged()
                | events.ConditionChanged()
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
        self._to_all(protocol.Typing(name=name, on=True), but=but)

    def _typing_off(self, name: str) -> None:
        if name in self._typists:
            self._typists.discard(name)
            self._to_all(protocol.Typing(name=name, on=False))

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
        frame = parse(data)
        seat = conn.seat
        messages, actions = self._rates.setdefault(
            seat.number, (RateLimit(MESSAGES_PER_MINUTE, 60), RateLimit(ACTIONS_PER_10_SECONDS, 10))
        )
        if not actions.allow():
            raise StudyError("Too many actions at once: please wait a few seconds.")
        if isinstance(frame, protocol.Join):
            self._join(seat, frame.name)
            return
        name = seat.name
        if name is None:
            raise StudyError("Join the conversation with a name first.")
        match frame:
            case protocol.Open():
                raise StudyError("The page opened its connection twice.")
            case protocol.Say():
                text = _text(frame.text, "message")
                if not messages.allow():
                    raise StudyError(
                        f"You can send at most {MESSAGES_PER_MINUTE} messages a minute:"
                        " please wait."
                    )
                await self.room.post_human_message(name, text)
            case protocol.NoteSent():
                self._about(frame, "note")
                self.room.annotate(name, frame.message_id, _text(frame.text, "note"))
            case protocol.LabelSent():
                self._about(frame, "answer")
                self._label(name, frame.message_id, frame.answer)
            case protocol.TypingNow():
                self._typing(seat, name)
            case protocol.RetroSent():
                self._about(frame, "review of a message")
                entry = self.review.retro(name, frame.model_dump())
                self._to_author(name, protocol.Retro(entry=protocol.RetroEntry(**entry)))
            case protocol.QuestionnaireSent():
                self._current(frame.session, "answers")
                answers = self.review.questionnaire(name, frame.model_dump())
                self._to_author(name, protocol.Answered(what="questionnaire", answers=answers))
                self._phase(seat)
            case protocol.FinalSent():
                self._current(frame.session, "answers")
                final = self.review.final(name, frame.model_dump())
                self._to_author(name, protocol.Answered(what="final", answers=final))
                self._phase(seat)
            case protocol.Join():  # handled above: it needs no name
                pass
            case _:
                assert_never(frame)

    def _current(self, session: str, what: str) -> None:
        """Refuse what a page sends about a conversation that is not this one.

        Raises:
            StudyError: ``session`` is another conversation (the page showed an old one).
        """
        if session != self.room.session_id:
            raise StudyError(
                f"Your {what} was about an earlier conversation, so it was not saved. The page"
                " now shows the current conversation: please give it again there."
            )

    def _about(self, frame: protocol.AboutMessage, what: str) -> None:
        """Refuse a note, label or review whose message is not one this conversation's pages
        were shown.

        Raises:
            StudyError: another conversation, or no such message in this one.
        """
        self._current(frame.session, what)
        if not 1 <= frame.message_id <= self._saved:
            raise StudyError(
                f"There is no message #{frame.message_id} (no such message in this conversation)."
            )

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
                conn.push(protocol.You(name=name))
        self._presence(name, online=True)

    def _label(self, name: str, message_id: int, answer: str) -> None:
        answers = {a.casefold(): a for a in domain.MOMENT_ANSWERS}
        if answer.casefold() not in answers:
            raise StudyError("That is not one of the answers.")
        speaker = self.room.messages[message_id - 1].speaker
        question = domain.MOMENT_QUESTION.format(speaker=speaker)
        self.room.record_label(name, message_id, question, answers[answer.casefold()].lower())

    def _phase(self, seat: Seat) -> None:
        """Tell ``seat``'s pages where its person is now (the conversation ended, they rated it)."""
        phase = self.review.phase(seat.name)
        final = self.review.final_payload(seat.name) if phase == "final" else None
        frame = protocol.PhaseFrame(
            phase=phase, final=protocol.Final.model_validate(final) if final else None
        )
        for conn in list(self.connections):
            if conn.seat is seat:
                conn.push(frame)

    def _thought(self, agent: str, thought_id: int) -> protocol.Thought | None:
        found = next((a for a in self.room.agents if a.name == agent), None)
        if found is None or thought_id not in found.reservoir:
            return None
        t = found.reservoir.get(thought_id)
        return protocol.Thought(name=agent, id=t.id, text=t.text, motivation=None)

    def _typing(self, seat: Seat, name: str) -> None:
        now = time.monotonic()
        if now - self._typing_at.get(name, 0.0) >= 1.0:  # at most once a second per person
            self._typing_at[name] = now
            self._typing_on(name, but=seat)


#: What the page may name as the field of a frame that does not fit the protocol.
_FIELDS = {
    "message_id": "Which message? The page sent no message number.",
    "session": "The page did not say which conversation it shows: please reload it.",
}


def parse(data: object) -> protocol.PageFrame:
    """A frame a page sent, checked against the protocol.

    Raises:
        StudyError: not a frame of the protocol (the message names the field that is wrong).
    """
    try:
        return protocol.PAGE_FRAMES.validate_python(data, strict=True)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] in ("union_tag_invalid", "union_tag_not_found", "model_type"):
            raise StudyError("The page sent something this server does not understand.") from None
        field_name = str(first["loc"][1]) if len(first["loc"]) > 1 else ""
        if field_name in _FIELDS and first["type"] in ("missing", "int_type", "string_type"):
            raise StudyError(_FIELDS[field_name]) from None
        kind = first["loc"][0] if first["loc"] else "frame"
        raise StudyError(
            f"The page sent a {kind} frame this server does not understand"
            f" ({field_name or 'frame'}: {first['msg']})."
        ) from None
