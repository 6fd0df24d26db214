"""A simulated user's turn taking and speaking in the room: a participant of kind ``simulated``
(docs/spec.md §2), seated as a :class:`~playground.room.participants.SimulatedUser`.

It stands in for a person. Its private profile and its hidden states stay here and in the
events the researcher reads (``ParticipantJoined.profile``, ``HiddenStateRecorded``); no prompt
of any other participant is built from them (the room gives agents messages only).

Turn taking, at every trigger where it is a listener (it did not post the triggering message):

- **addressed**: the latest message hands the turn to it (the turn type allocates it), so it
  answers, like an agent allocated the turn. In a room of exactly two participants every
  message of the other one addresses it (the *dyad rule*; no turn-type call is made);
- **otherwise** it speaks with probability ``speak_probability`` (the room setting
  ``simulated_speak_probability`` unless given), drawn from a generator seeded by session seed,
  step and name, so runs are reproducible.

Its decision competes for the floor with the agents' (:func:`playground.room.floor.arbitrate`):
an addressed simulated user is an allocated-self turn; one that speaks up unaddressed goes after
the addressee and before Inner Thoughts agents on an open turn (an interrupter still beats it).
"""

from __future__ import annotations

import random

from playground import domain, errors, events
from playground.cognition.user import UserView
from playground.inner_thoughts import participation
from playground.room.participants import SimulatedUser
from playground.room.state import RoomState


def is_dyad(participants: list[str], user: str) -> bool:
    """True when ``user`` shares the room with exactly one other participant."""
    return len(participants) == 2 and user in participants


def dyad_turn(message: domain.Message, participants: list[str]) -> domain.TurnType | None:
    """The dyad rule: in a room of two with a simulated user, every message addresses the other
    participant; None when the rule does not apply (the caller then predicts the turn type)."""
    if len(participants) != 2 or message.speaker not in participants:
        return None
    other = next(p for p in participants if p != message.speaker)
    return domain.TurnType(
        message_id=message.id, kind="allocated", addressee=other, origin="dyad rule"
    )


def decide(
    user: SimulatedUser,
    *,
    step: int,
    trigger: domain.TriggerKind,
    turn: domain.TurnType | None,
    speaker: str,
    rng: random.Random,
) -> domain.Decision:
    """Whether a simulated user speaks at this trigger, and why (policy ``simulated``).

    Args:
        user: the simulated user (a listener at this trigger).
        step: the room's step.
        trigger: what fired.
        turn: the turn every participant decides against (see
            :func:`playground.room.floor.floor_turn`).
        speaker: who posted the triggering message ("" for a pause).
        rng: seeded by the room; drawn only when the user is not addressed.
    """
    rel = participation.relation(turn, user.name)
    base = {
        "agent": user.name,
        "step": step,
        "trigger": trigger,
        "turn_type": rel,
        "policy": "simulated",
    }
    if rel == "allocated-self":
        by = f" by {speaker}" if speaker else ""
        how = " (a dyad: every message of the other participant is to it)" if turn and turn.origin == "dyad rule" else ""  # fmt: skip
        return domain.Decision(
            **base, action="speak", reason=f"simulated user: addressed{by}{how}; answers"
        )
    p = user.speak_probability
    draw = rng.random()
    whose = (
        f"the turn is {turn.addressee}'s"
        if rel == "allocated-other" and turn and turn.addressee
        else "not addressed"
    )
    if draw < p:
        return domain.Decision(
            **base,
            action="speak",
            probability=p,
            reason=f"simulated user: {whose}; spoke with probability {p:g} (drew {draw:.2f})",
        )
    return domain.Decision(
        **base,
        action="silent",
        probability=p,
        reason=f"simulated user: {whose}; silent (drew {draw:.2f} ≥ probability {p:g})",
    )


def view_of(user: SimulatedUser, messages: list[domain.Message], addressed_by: str | None) -> UserView:  # fmt: skip
    """What the user sees: every visible message, its own earlier states, who addressed it."""
    return UserView(
        me=user.name,
        messages=[(m.speaker, m.text) for m in messages],
        previous=list(user.states),
        addressed_by=addressed_by,
    )


async def speak(
    room: RoomState, user: SimulatedUser, *, addressed_by: str | None, generation: int | None = None
) -> domain.Message | None:
    """The user's simulator words a turn; the room posts the message (kind ``simulated``) and
    emits its :class:`~playground.events.HiddenStateRecorded` right after.

    Args:
        room: the room it sits in.
        user: the simulated user.
        addressed_by: who handed it the turn, if anyone.
        generation: the room's generation when the turn was decided; the answer is dropped when
            a newer trigger arrived meanwhile (None: never stale, e.g. an opening message).

    Returns:
        The posted message, or None when it was stale.

    Raises:
        SessionEnded: the session ended meanwhile.
        LLMError: the simulator's model could not be used, or gave no usable message.
    """
    turn = await user.simulator.turn(user.profile, view_of(user, room.messages, addressed_by))
    if generation is not None and generation != room.generation:
        return None
    origin = user.simulator.origin
    msg = await room.post(user.name, turn.text, origin=origin, notify=False)
    user.states.append(turn.state)
    room.emit(
        events.HiddenStateRecorded(
            participant=user.name,
            message_id=msg.id,
            turn=len(user.states) - 1,
            state=turn.state,
            origin=origin,
        )
    )
    return msg


def report_failure(room: RoomState, user: SimulatedUser, exc: errors.PlaygroundError) -> None:
    """A simulated user whose mind failed sits this trigger out; the error is shown."""
    room.emit(events.ErrorOccurred(where=user.name, message=str(exc), error_type=type(exc).__name__))  # fmt: skip
