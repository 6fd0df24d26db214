"""The invited seats of a session: one token per person, kept in the session's database.

A token admits one seat of one session and nothing else. It is 192 random bits
(:func:`secrets.token_urlsafe`), compared in constant time against every seat, so neither a
guess nor the time a refusal takes tells whether a session or a seat exists.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

import sqlite_utils

from playground.storage import seats as rows
from playground.storage import study_rows

#: Random bytes per token (32 URL-safe characters).
TOKEN_BYTES = 24


@dataclass
class Seat:
    number: int
    token: str
    name: str | None = None
    revoked: bool = False


class SeatBook:
    """The seats of one session, as saved in its database."""

    def __init__(self, db: sqlite_utils.Database, session_id: str) -> None:
        self.db = db
        self.session_id = session_id
        self.seats: list[Seat] = [
            Seat(r["seat"], r["token"], r["name"], r["revoked_at"] is not None)
            for r in rows.seats(db, session_id)
        ]

    def add(self, n: int, at: str) -> list[Seat]:
        """Invite ``n`` more people: a new seat and token each (saved before it is returned)."""
        tokens = [secrets.token_urlsafe(TOKEN_BYTES) for _ in range(n)]
        numbers = rows.add_seats(self.db, self.session_id, tokens, at)
        added = [Seat(number, token) for number, token in zip(numbers, tokens, strict=True)]
        self.seats.extend(added)
        return added

    def admit(self, token: str) -> Seat | None:
        """The seat ``token`` opens, or None (unknown or revoked: the caller cannot tell which)."""
        found = None
        given = token.encode("utf-8", "replace")
        for seat in self.seats:  # every seat is compared: the time does not depend on a match
            if hmac.compare_digest(seat.token.encode(), given) and not seat.revoked:
                found = seat
        return found

    def name(self, seat: Seat, name: str) -> None:
        rows.name_seat(self.db, self.session_id, seat.number, name)
        seat.name = name

    def seat(self, number: int) -> Seat:
        """Seat ``number``.

        Raises:
            KeyError: no such seat.
        """
        for seat in self.seats:
            if seat.number == number:
                return seat
        raise KeyError(number)

    def revoke(self, number: int, at: str) -> Seat:
        """Close a seat for good: its link stops working at once.

        Raises:
            KeyError: no such seat.
        """
        seat = self.seat(number)
        rows.revoke_seat(self.db, self.session_id, number, at)
        seat.revoked = True
        return seat


class PlanSeatBook(SeatBook):
    """The seats of a study plan: one link per person for all of the plan's conversations (each
    conversation's hub admits the plan's seats; the name a person joined with carries over)."""

    def __init__(self, db: sqlite_utils.Database, plan_id: str) -> None:
        self.db = db
        self.session_id = ""  # no session of its own: see the plan's steps
        self.plan_id = plan_id
        self.seats = [
            Seat(r["seat"], r["token"], r["name"], r["revoked_at"] is not None)
            for r in study_rows.plan_seats(db, plan_id)
        ]

    @staticmethod
    def new_tokens(n: int) -> list[str]:
        return [secrets.token_urlsafe(TOKEN_BYTES) for _ in range(n)]

    def add(self, n: int, at: str) -> list[Seat]:
        raise NotImplementedError("a study plan's seats are made with the plan")

    def name(self, seat: Seat, name: str) -> None:
        study_rows.name_plan_seat(self.db, self.plan_id, seat.number, name)
        seat.name = name

    def revoke(self, number: int, at: str) -> Seat:
        seat = self.seat(number)
        study_rows.revoke_plan_seat(self.db, self.plan_id, number, at)
        seat.revoked = True
        return seat
