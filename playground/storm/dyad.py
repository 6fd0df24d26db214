"""The room side of a dyadic STORM run: seating the simulated user and running the dialogue.

**A turn** is one message of the user and the assistant's answer to it (the paper's turn pair
analysis reads turns the same way): ``--turns 10`` is 10 user messages, each followed by the
assistant's reply, so a plain assistant's dialogue has 20 messages and ends with a reply that no
later hidden state rates. The user opens the dialogue. **An Inner Thoughts assistant may stay
silent**: the step passes silently, and at the next step (a pause) the user, who speaks with
probability 1 in a dyadic run, writes again; that message is its next turn. So its dialogue has
``--turns`` user messages and at most as many replies. A dialogue also ends after
``max_silent_steps`` silent steps in a row (4 by default), and it ends once the user has had its
last turn and the assistant has answered it or stayed silent once.
"""

from __future__ import annotations

import asyncio

from playground import errors, events
from playground.cognition.user import UserSimulator
from playground.domain.simulated_user import UserProfile
from playground.room import loops
from playground.room.room import Room
from playground.storm.assistant import ASSISTANT_NAME
from playground.storm.protocol import USER_SPEAK_PROBABILITY


def seat_user(
    room: Room,
    profile: UserProfile,
    simulator: UserSimulator,
    *,
    speak_probability: float = USER_SPEAK_PROBABILITY,
) -> None:
    """Seat the simulated user. It answers every reply (the dyad rule addresses it); after a
    silent step it writes again with ``speak_probability`` (1 by default).

    Raises:
        PlaygroundError: the profile's name is the assistant's, or already taken.
    """
    if profile.name == ASSISTANT_NAME:
        raise errors.ProfileError(
            profile.id, "name", f"{profile.name!r} is the assistant's name in a dyadic run"
        )
    room.add_simulated_user(profile, simulator, speak_probability=speak_probability)


async def run_dialogue(room: Room, *, user: str, turns: int) -> str:
    """The user opens, then user and assistant alternate until the user has had ``turns`` turns
    and the assistant has answered the last one (or stayed silent once); see the module's notes.

    Returns the session's final status.

    Raises:
        LLMError: the server could not be used; the session is marked failed first.
        RecordingError: the database cannot be written.
    """
    s = room.settings.room
    try:
        await open_dialogue(room, user)
        silent = 0
        while True:
            loops.check_recording(room)
            said = sum(1 for m in room.messages if m.speaker == user)
            last = room.messages[-1] if room.messages else None
            if said >= turns and (silent or (last is not None and last.speaker != user)):
                await room.keep_last_vectors()
                replies = len(room.messages) - said
                room.finish(
                    "finished",
                    f"{turns} user turn{'' if turns == 1 else 's'}: {user}'s {said}"
                    f" message{'' if said == 1 else 's'} and {replies}"
                    f" repl{'y' if replies == 1 else 'ies'} (a turn is one message of the"
                    " simulated user and the reply to it)",
                )
                break
            if silent >= s.max_silent_steps:
                await room.keep_last_vectors()
                room.finish("finished", room.silence.explain(silent))
                break
            if room.stop_requested:
                room.finish("interrupted", "stopped")
                break
            msg = await room.step_once(silent_steps=silent)
            silent = 0 if msg else silent + 1
    except asyncio.CancelledError:
        room.finish("interrupted", "cancelled")
        raise
    except errors.RecordingError as exc:
        loops.fail_unrecorded(room, exc)
        raise
    except errors.PlaygroundError as exc:
        room.emit(
            events.ErrorOccurred(where="dialogue", message=str(exc), error_type=type(exc).__name__)
        )
        room.finish("failed", str(exc))
        raise
    return room.status


async def open_dialogue(room: Room, user: str) -> None:
    """The simulated user's first message (its turn 0), from its profile and task.

    Raises:
        PlaygroundError: ``user`` is not a simulated user of the room.
        LLMError: the user's model could not be used.
    """
    await room.simulated_turn(user)
