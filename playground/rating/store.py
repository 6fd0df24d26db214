"""Human evaluation data: Likert ratings, unnatural-turn marks, pairwise preferences and rating plans.

The instruments follow the paper's protocol (docs/spec.md §1.9.3 and §1.9.4): seven
conversation statements rated 1-7 by third-party raters, marks on unnatural turns, a pairwise
choice of the more natural conversation with a reason, and the user study's ten participant
statements. A rater's answers are only ever read back for that rater.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from playground import clock, errors
from playground.rating import plan as rating_plan


@dataclass(frozen=True)
class Item:
    """One Likert statement, rated 1 (strongly disagree) to 7 (strongly agree)."""

    key: str
    label: str
    statement: str


LIKERT_MIN, LIKERT_MAX = 1, 7

CONVERSATION_METRICS: tuple[Item, ...] = (
    Item("anthropomorphism", "Anthropomorphism", "The AI participants came across as human-like."),
    Item("coherence", "Coherence", "The conversation was coherent and easy to follow."),
    Item("engagement", "Engagement", "The conversation was engaging to read."),
    Item("intelligence", "Intelligence", "The AI participants came across as intelligent."),
    Item(
        "turn_appropriateness",
        "Turn appropriateness",
        "Participants spoke at appropriate moments: no odd interruptions or awkward silences.",
    ),
    Item("initiative", "Initiative", "The AI participants took initiative and moved things on."),
    Item(
        "adaptability",
        "Adaptability",
        "The AI participants adapted to what others said as the conversation went on.",
    ),
)

PARTICIPANT_ITEMS: tuple[Item, ...] = (
    Item("anthropomorphism", "Anthropomorphism", "The AI felt like talking with a person."),
    Item("likeability", "Likeability", "I liked the AI."),
    Item("initiative", "Initiative", "The AI took initiative in the conversation."),
    Item("social_presence", "Social presence", "I felt the AI was present with me."),
    Item("engagement", "Engagement", "The conversation held my interest."),
    Item("perceived_listener", "Perceived listener", "The AI listened to what I said."),
    Item("contribution", "Contribution", "The AI contributed useful things to the conversation."),
    Item("response_timing", "Response timing", "The AI spoke at the right moments."),
    Item("future_use", "Future use", "I would like to talk with this AI again."),
    Item("extroversion", "Extroversion", "The AI was outgoing and talkative."),
)

# Re-exported: the plan records belong to this module's public API.
Plan = rating_plan.Plan
Assignment = rating_plan.Assignment
PlanKind = rating_plan.PlanKind
_CLOCK = clock.SystemClock()


def _validate(values: dict[str, int], items: tuple[Item, ...], what: str) -> None:
    if not values:
        raise errors.PlaygroundError(f"no {what} values given")
    keys = [i.key for i in items]
    for key, value in values.items():
        if key not in keys:
            raise errors.PlaygroundError(
                f"unknown {what} metric {key!r} (expected one of: {', '.join(keys)})"
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise errors.PlaygroundError(f"{key}: {value!r} is not a whole number from 1 to 7")
        if not LIKERT_MIN <= value <= LIKERT_MAX:
            raise errors.PlaygroundError(f"{key}: {value} is outside the scale 1 to 7")


class RatingStore(rating_plan.PlanStore):
    """Reads and writes ratings, marks, preferences and plans in a session database.

    Args:
        db: an open database (see :func:`playground.storage.open_database`), schema version >= 3.
    """

    # -- Likert instruments --------------------------------------------------------------------
    def _upsert(
        self,
        session_id: str,
        rater: str,
        instrument: str,
        values: dict[str, int],
        assignment_id: int | None,
    ) -> None:
        now = _CLOCK.now_iso()
        with self.db.atomic():
            for metric, value in values.items():
                self.db.execute(
                    "INSERT INTO ratings (session_id, rater, instrument, metric, value, assignment_id,"
                    " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (session_id, rater, instrument, metric) DO UPDATE SET"
                    " value = excluded.value, updated_at = excluded.updated_at,"
                    " assignment_id = COALESCE(excluded.assignment_id, ratings.assignment_id)",
                    [session_id, rater, instrument, metric, value, assignment_id, now, now],
                )
            if assignment_id is not None:
                self._complete(assignment_id, now)

    def _read(self, session_id: str, rater: str, instrument: str) -> dict[str, int]:
        sid = self.resolve_session(session_id)
        rows = self.db.execute(
            "SELECT metric, value FROM ratings WHERE session_id = ? AND rater = ? AND instrument = ?",
            [sid, rater.strip(), instrument],
        ).fetchall()
        got = {m: int(v) for m, v in rows}
        order = [i.key for i in (*CONVERSATION_METRICS, *PARTICIPANT_ITEMS)]
        return {m: got[m] for m in sorted(got, key=order.index)}

    def rate_conversation(
        self,
        session_id: str,
        rater: str,
        values: dict[str, int],
        *,
        assignment_id: int | None = None,
    ) -> None:
        """Save (or replace) a rater's conversation ratings; marks the assignment done if given.

        Raises:
            PlaygroundError: a key is not one of CONVERSATION_METRICS, a value is not 1..7, or the
                assignment is someone else's or about another session.
            SessionNotFound: no such session.
        """
        _validate(values, CONVERSATION_METRICS, "conversation")
        sid = self.resolve_session(session_id)
        rid = self.ensure_rater(rater)
        if assignment_id is not None:
            self._check_assignment(assignment_id, rid, {sid})
        self._upsert(sid, rid, "conversation", values, assignment_id)

    def conversation_ratings(self, session_id: str, rater: str) -> dict[str, int]:
        """This rater's conversation ratings of a session (metric → value); others' stay hidden."""
        return self._read(session_id, rater, "conversation")

    def answer_questionnaire(
        self, session_id: str, respondent: str, values: dict[str, int]
    ) -> None:
        """Save (or replace) a participant's questionnaire answers (PARTICIPANT_ITEMS keys, 1..7).

        Raises:
            PlaygroundError: unknown item or a value outside 1..7.
            SessionNotFound: no such session.
        """
        _validate(values, PARTICIPANT_ITEMS, "participant")
        sid = self.resolve_session(session_id)
        rid = self.ensure_rater(respondent)
        self._upsert(sid, rid, "participant", values, None)

    def questionnaire(self, session_id: str, respondent: str) -> dict[str, int]:
        """This respondent's questionnaire answers for a session (item → value)."""
        return self._read(session_id, respondent, "participant")

    # -- unnatural-turn marks ------------------------------------------------------------------
    def mark_turn(self, session_id: str, message_id: int, rater: str, comment: str = "") -> None:
        """Mark a message as an unnatural turn (again: the comment is replaced).

        Raises:
            PlaygroundError: the session has no such message.
            SessionNotFound: no such session.
        """
        sid = self.resolve_session(session_id)
        if not self.db.execute(
            "SELECT 1 FROM messages WHERE session_id = ? AND id = ?", [sid, message_id]
        ).fetchone():
            raise errors.PlaygroundError(f"session {sid} has no message {message_id}")
        rid = self.ensure_rater(rater)
        with self.db.atomic():
            self.db.execute(
                "INSERT INTO turn_marks (session_id, message_id, rater, comment, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, message_id, rater)"
                " DO UPDATE SET comment = excluded.comment",
                [sid, message_id, rid, comment or "", _CLOCK.now_iso()],
            )

    def unmark_turn(self, session_id: str, message_id: int, rater: str) -> None:
        """Remove a rater's mark from a message (nothing happens if it was not marked)."""
        sid = self.resolve_session(session_id)
        with self.db.atomic():
            self.db.execute(
                "DELETE FROM turn_marks WHERE session_id = ? AND message_id = ? AND rater = ?",
                [sid, message_id, rater.strip()],
            )

    def turn_marks(self, session_id: str, rater: str | None = None) -> list[dict[str, Any]]:
        """Marks on a session's messages, by message: ``{message_id, rater, comment, created_at}``.

        Args:
            session_id: the session (id or unique prefix).
            rater: only this rater's marks (what a rating UI must pass); None for all (analysis).
        """
        sid = self.resolve_session(session_id)
        sql = "SELECT message_id, rater, comment, created_at FROM turn_marks WHERE session_id = ?"
        params: list[Any] = [sid]
        if rater is not None:
            sql += " AND rater = ?"
            params.append(rater.strip())
        return self._rows(sql + " ORDER BY message_id, rater", params)

    # -- pairwise preferences ------------------------------------------------------------------
    def record_preference(
        self,
        rater: str,
        first_id: str,
        second_id: str,
        chosen_id: str,
        reason: str,
        *,
        assignment_id: int | None = None,
    ) -> int:
        """Save which of two conversations a rater found more natural, and why.

        A rater's earlier choice on the same two sessions is replaced.

        Returns:
            The id of the preference row.

        Raises:
            PlaygroundError: the two sessions are the same, or chosen is neither of them.
            SessionNotFound: a session does not exist.
        """
        first, second = self.resolve_session(first_id), self.resolve_session(second_id)
        if first == second:
            raise errors.PlaygroundError(f"a preference needs two different sessions ({first})")
        chosen = self.resolve_session(chosen_id)
        if chosen not in (first, second):
            raise errors.PlaygroundError(
                f"the chosen session {chosen} is neither {first} nor {second}"
            )
        rid = self.ensure_rater(rater)
        if assignment_id is not None:
            self._check_assignment(assignment_id, rid, {first, second})
        now = _CLOCK.now_iso()
        with self.db.atomic():
            self.db.execute(
                "DELETE FROM preferences WHERE rater = ? AND ((first_id = ? AND second_id = ?)"
                " OR (first_id = ? AND second_id = ?))",
                [rid, first, second, second, first],
            )
            cur = self.db.execute(
                "INSERT INTO preferences (rater, first_id, second_id, chosen_id, reason,"
                " assignment_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [rid, first, second, chosen, reason or "", assignment_id, now],
            )
            if assignment_id is not None:
                self._complete(assignment_id, now)
        return int(cur.lastrowid or 0)

    def rating_counts(self, session_ids: Iterable[str] | None = None) -> dict[str, int]:
        """Rating records per session (every session when None; zeros included).

        A record is one rater's conversation ratings, one participant questionnaire, or one
        preference involving the session.
        """
        rows = self.db.execute(
            "SELECT s.id,"
            " (SELECT COUNT(DISTINCT rater) FROM ratings r WHERE r.session_id = s.id"
            "   AND r.instrument = 'conversation')"
            " + (SELECT COUNT(DISTINCT rater) FROM ratings r WHERE r.session_id = s.id"
            "   AND r.instrument = 'participant')"
            " + (SELECT COUNT(*) FROM preferences p WHERE p.first_id = s.id OR p.second_id = s.id)"
            " FROM sessions s ORDER BY s.id"
        ).fetchall()
        counts = {str(sid): int(n) for sid, n in rows}
        if session_ids is None:
            return counts
        return {sid: counts.get(sid, 0) for sid in session_ids}
