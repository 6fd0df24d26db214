"""Every simulated user's hidden states, folded from the events that record them.

A simulated user (docs/spec.md §2.5) records a hidden state with each of its messages
(``hidden_state_recorded``); the window shows them, newest turn first, instead of thoughts. This
is that fold, Qt-free: the hidden-state pane applies each event to a :class:`HiddenStateLedger`
and renders what it holds, live and in a replay alike.
"""

from __future__ import annotations

from collections.abc import Iterable

from playground import events


class HiddenStateLedger:
    """Who is a simulated user, and each one's recorded states by the message they came with."""

    def __init__(self) -> None:
        self.simulated: set[str] = set()
        self.states: dict[str, dict[int, events.HiddenStateRecorded]] = {}

    def apply(self, folded: Iterable[events.Event]) -> None:
        """Fold events, in order; the kinds that record no hidden state are passed over. A
        participant seated again as anything else is no longer a simulated user."""
        for e in folded:
            match e:
                case events.ParticipantJoined():
                    if e.participant_kind == "simulated":
                        self.simulated.add(e.name)
                    else:
                        self.simulated.discard(e.name)
                case events.HiddenStateRecorded():
                    self.simulated.add(e.participant)
                    self.states.setdefault(e.participant, {})[e.message_id] = e
                case _:
                    pass  # not about a hidden state

    def turns(self, name: str) -> int:
        """How many hidden states ``name`` has recorded."""
        return len(self.states.get(name, {}))

    def history(self, name: str) -> list[events.HiddenStateRecorded]:
        """``name``'s hidden states in the order of its turns (oldest first)."""
        return sorted(self.states.get(name, {}).values(), key=lambda e: (e.turn, e.seq))
