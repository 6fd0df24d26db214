"""Links for raters who work from their own browsers: a token per rater of a plan, the plan's
open link (each arrival gets the next free rater), completion codes and reading progress.

Rows of ``rater_links``, ``rating_open_links`` and ``rater_reads`` (migration 13). Rater ids and
codes made here are drawn from :data:`ALPHABET`, which has no characters that look alike (no
0/O, 1/I/L, 2/Z, 5/S or 8/B), so a rater can read theirs out or type it without a mix-up.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

import sqlite_utils

from playground import clock
from playground.storage import writes

#: Upper-case letters and digits without lookalikes.
ALPHABET = "34679ACDEFGHJKMNPQRTUVWXY"
#: Random characters in a made-up rater id (25^6 ≈ 2.4·10^8 ids) and in a completion code.
RATER_ID_LENGTH = 6
CODE_LENGTH = 10
#: Seconds after which a rater the open link handed out, whose page never connected (a link
#: preview, a bot, a browser closed at once), is handed out again.
RELEASE_AFTER = 30 * 60
_CLOCK = clock.SystemClock()


def random_text(n: int) -> str:
    """``n`` characters drawn from :data:`ALPHABET` by the system's secure random source."""
    return "".join(secrets.choice(ALPHABET) for _ in range(n))


def new_rater_ids(n: int, taken: Iterable[str] = ()) -> list[str]:
    """``n`` new random rater ids (``R-7KX3MQ``), none of them in ``taken``."""
    seen = set(taken)
    ids: list[str] = []
    while len(ids) < n:
        rid = f"R-{random_text(RATER_ID_LENGTH)}"
        if rid not in seen:
            seen.add(rid)
            ids.append(rid)
    return ids


def _ago(seconds: float) -> str:
    """The ISO time ``seconds`` ago, as the rows store times."""
    then = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)
    return then.isoformat(timespec="milliseconds")


def new_token() -> str:
    """An unguessable link token (192 random bits, URL-safe)."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class RaterLink:
    """One rater's link of a plan."""

    plan_id: int
    rater: str
    token: str
    claimed: bool
    code: str | None


class LinkStore:
    """The link rows of a session database (schema version >= 13).

    Args:
        db: an open database (see :func:`playground.storage.open_database`).
    """

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def links(self, plan_id: int, raters: list[str]) -> list[RaterLink]:
        """Every rater's link of a plan, in the order of ``raters`` (missing ones are made, in
        that order: the open link hands raters out in it)."""
        have = self.db.execute(
            "SELECT COUNT(*) FROM rater_links WHERE plan_id = ?", [plan_id]
        ).fetchone()[0]
        if have < len(raters):
            now = _CLOCK.now_iso()
            with self.db.atomic():
                for rater in raters:
                    self.db.execute(
                        "INSERT OR IGNORE INTO rater_links (plan_id, rater, token, created_at)"
                        " VALUES (?, ?, ?, ?)",
                        [plan_id, rater, new_token(), now],
                    )
        rows = self.db.execute(
            "SELECT rater, token, claimed_at, code FROM rater_links WHERE plan_id = ?", [plan_id]
        ).fetchall()
        got = {r: RaterLink(plan_id, r, t, c is not None, code) for r, t, c, code in rows}
        return [got[r] for r in raters]

    def open_token(self, plan_id: int) -> str:
        """The plan's open link token (made the first time)."""
        with self.db.atomic():
            self.db.execute(
                "INSERT OR IGNORE INTO rating_open_links (plan_id, token, created_at)"
                " VALUES (?, ?, ?)",
                [plan_id, new_token(), _CLOCK.now_iso()],
            )
        row = self.db.execute(
            "SELECT token FROM rating_open_links WHERE plan_id = ?", [plan_id]
        ).fetchone()
        return str(row[0])

    def rater_for(self, token: str) -> tuple[int, str] | None:
        """The ``(plan id, rater)`` a rater's token opens; None for any other text."""
        row = self.db.execute(
            "SELECT plan_id, rater FROM rater_links WHERE token = ?", [token]
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def plan_for_open(self, token: str) -> int | None:
        """The plan an open link token belongs to; None for any other text."""
        row = self.db.execute(
            "SELECT plan_id FROM rating_open_links WHERE token = ?", [token]
        ).fetchone()
        return int(row[0]) if row else None

    def claim_next(self, plan_id: int, *, release_after: float = RELEASE_AFTER) -> RaterLink | None:
        """Hand the next free rater of a plan to an arrival of its open link: the first (in the
        plan's order) whose page never connected, with no assignment done, and not handed out in
        the last ``release_after`` seconds; None when all are taken.
        """
        order = self.db.execute(
            "SELECT raters FROM rating_plans WHERE id = ?", [plan_id]
        ).fetchone()
        if order is None:
            return None
        self.links(plan_id, json.loads(order[0]))
        # Reads, then writes: the write lock from the start, or another server's claim in
        # between could not be waited for (a deferred transaction fails to upgrade at once).
        with writes.immediate(self.db):
            row = self.db.execute(
                "SELECT l.rater, l.token FROM rater_links l WHERE l.plan_id = ?"
                " AND l.opened_at IS NULL AND (l.claimed_at IS NULL OR l.claimed_at <= ?)"
                " AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.plan_id = l.plan_id"
                " AND a.rater = l.rater AND a.completed_at IS NOT NULL)"
                " ORDER BY l.rowid LIMIT 1",
                [plan_id, _ago(release_after)],
            ).fetchone()
            if row is None:
                return None
            self.db.execute(
                "UPDATE rater_links SET claimed_at = ? WHERE plan_id = ? AND rater = ?",
                [_CLOCK.now_iso(), plan_id, row[0]],
            )
        return RaterLink(plan_id, str(row[0]), str(row[1]), True, None)

    def opened(self, plan_id: int, rater: str) -> None:
        """A rater's page connected: the open link never hands that rater out again."""
        with self.db.atomic():
            self.db.execute(
                "UPDATE rater_links SET opened_at = ? WHERE plan_id = ? AND rater = ?"
                " AND opened_at IS NULL",
                [_CLOCK.now_iso(), plan_id, rater],
            )

    def finish(self, plan_id: int, rater: str) -> str:
        """The rater's completion code, made (and stored) the first time."""
        with self.db.atomic():
            self.db.execute(
                "UPDATE rater_links SET code = ?, finished_at = ? WHERE plan_id = ? AND rater = ?"
                " AND code IS NULL",
                [random_text(CODE_LENGTH), _CLOCK.now_iso(), plan_id, rater],
            )
        row = self.db.execute(
            "SELECT code FROM rater_links WHERE plan_id = ? AND rater = ?", [plan_id, rater]
        ).fetchone()
        return str(row[0])

    def shown(self, assignment_id: int, part: int) -> int:
        """How many messages of one conversation of an assignment the rater has been shown."""
        row = self.db.execute(
            "SELECT shown FROM rater_reads WHERE assignment_id = ? AND part = ?",
            [assignment_id, part],
        ).fetchone()
        return int(row[0]) if row else 0

    def set_shown(self, assignment_id: int, part: int, shown: int) -> None:
        """Record reading progress (it never goes back)."""
        with self.db.atomic():
            self.db.execute(
                "INSERT INTO rater_reads (assignment_id, part, shown) VALUES (?, ?, ?)"
                " ON CONFLICT (assignment_id, part) DO UPDATE SET shown = MAX(shown, excluded.shown)",
                [assignment_id, part, shown],
            )
