"""The session's condition as the seats change: which turn-taking policies took part.

The report and the rating plans group sessions by condition, so a session where a reactive agent
joined an Inner Thoughts room at step 3 must read ``mixed``. Before the first message the seats
are still being set (a room is seated one agent at a time), so only the seats when the
conversation begins count; from then on, every policy that has held a seat counts, and a
departure does not undo it: the conversation was a mixed one up to then.
"""

from __future__ import annotations

from collections.abc import Iterable

from playground import domain


class SessionCondition:
    """A session's condition, following its seats.

    Args:
        condition: the condition the session was opened with (its planned seats').
    """

    def __init__(self, condition: domain.Condition = "inner-thoughts") -> None:
        self.current: domain.Condition = condition
        self._in_play: set[domain.Policy] = set()

    def follow(
        self, seated: Iterable[domain.Policy], *, begun: bool
    ) -> tuple[domain.Condition, domain.Condition] | None:
        """Take the seated agents' policies; the change they make as ``(old, new)``, or None.

        Args:
            seated: the policies of the AI participants seated now.
            begun: whether the conversation has begun (a message was posted); before it,
                nothing changes (the seats are still being set).
        """
        if not begun:
            return None
        self._in_play |= set(seated)
        new = domain.condition_of(self._in_play)
        if new == self.current:
            return None
        old, self.current = self.current, new
        return old, new
