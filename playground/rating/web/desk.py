"""One rater's desk: their current assignment as protocol frames, and their answers stored.

Everything a rater's page receives is built here from the speakers and texts of messages
(``library.message_lines``) and the rater's own answers; session ids stay on the server, in
:class:`OpenTask`. Answers go through :class:`~playground.rating.store.RatingStore`, the store
the window's blind rating uses, into the same ``ratings``, ``turn_marks`` and ``preferences``
rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from playground import errors
from playground.rating import links as rater_links
from playground.rating.store import CONVERSATION_METRICS, Assignment, RatingStore
from playground.rating.web import protocol
from playground.storage import library

Reply = protocol.Outgoing
STATEMENTS = [protocol.Statement(key=i.key, statement=i.statement) for i in CONVERSATION_METRICS]


@dataclass
class OpenTask:
    """The assignment a page shows: its session ids and message ids stay here."""

    assignment: Assignment
    total: int
    sessions: list[str]
    message_ids: list[list[int]]
    frame: protocol.Task


class RaterDesk:
    """A rater of a plan, as their page sees them.

    Args:
        store: the rating store of the plan's database.
        plan_id: the plan.
        rater: the rater (one of the plan's).
        cps: the typing speed the page uses.
    """

    def __init__(self, store: RatingStore, plan_id: int, rater: str, *, cps: int) -> None:
        self.store = store
        self.links = rater_links.LinkStore(store.db)
        self.plan_id = plan_id
        self.rater = rater
        self.cps = cps
        self.task: OpenTask | None = None

    def welcome(self) -> protocol.Welcome:
        return protocol.Welcome(rater=self.rater, statements=STATEMENTS, cps=self.cps)

    def current(self) -> protocol.Task | protocol.Finished:
        """The rater's first unfinished assignment, or their completion code when all are done."""
        progress = self.store.rater_progress(self.plan_id, self.rater)
        a = self.store.next_assignment(self.plan_id, self.rater)
        if a is None:
            self.task = None
            code = self.links.finish(self.plan_id, self.rater)
            return protocol.Finished(code=code, total=progress[1])
        sessions = [a.session_a] if a.session_b is None else [a.session_a, a.session_b]
        labels: list[str] = [""] if a.session_b is None else ["A", "B"]
        conversations: list[protocol.Conversation] = []
        ids: list[list[int]] = []
        for part, sid in enumerate(sessions):
            rows = library.message_lines(self.store.db, sid)
            ids.append([int(r[0]) for r in rows])
            place = {int(r[0]): n for n, r in enumerate(rows, start=1)}
            shown = min(self.links.shown(a.id, part), len(rows))
            marks = [
                protocol.Mark(n=place[m["message_id"]], comment=str(m["comment"]))
                for m in self.store.turn_marks(sid, self.rater)
                # Only on what this task has shown: a mark made elsewhere (rating the session
                # alone, an earlier pair) does not show before its message does.
                if m["message_id"] in place and place[m["message_id"]] <= shown
            ]
            conversations.append(
                protocol.Conversation(
                    label=labels[part],
                    lines=[
                        protocol.Line(n=n, speaker=str(r[1]), text=str(r[2]))
                        for n, r in enumerate(rows, start=1)
                    ],
                    shown=shown,
                    marks=marks,
                )
            )
        ratings = (
            self.store.conversation_ratings(a.session_a, self.rater) if a.session_b is None else {}
        )
        frame = protocol.Task(
            mode="conversation" if a.session_b is None else "pairwise",
            position=a.position,
            total=progress[1],
            conversations=conversations,
            ratings=ratings,
        )
        self.task = OpenTask(a, progress[1], sessions, ids, frame)
        return frame

    def act(
        self,
        frame: protocol.Incoming,
    ) -> list[Reply]:
        """Store one action of the page; the frames to send back (an ack, then the next task
        after an answer), or a refusal saying what was wrong."""
        task = self.task
        if task is None or frame.task != task.assignment.position:
            return [
                protocol.Refused(
                    seq=frame.seq,
                    message="This page shows an assignment that is already done; it reloads.",
                ),
                self.current(),
            ]
        try:
            return self._act(task, frame)
        except errors.PlaygroundError as exc:
            return [protocol.Refused(seq=frame.seq, message=self._blind(task, str(exc)))]

    def _act(
        self,
        task: OpenTask,
        frame: protocol.Incoming,
    ) -> list[Reply]:
        ack = protocol.Ack(seq=frame.seq)
        a = task.assignment
        match frame:
            case protocol.Shown():
                ids = self._ids(task, frame.part)
                self.links.set_shown(a.id, frame.part, min(frame.count, len(ids)))
                return [ack]
            case protocol.MarkTurn():
                mid = self._message(task, frame.part, frame.n)
                self.store.mark_turn(
                    task.sessions[frame.part], mid, self.rater, frame.comment.strip()
                )
                return [ack]
            case protocol.UnmarkTurn():
                mid = self._message(task, frame.part, frame.n)
                self.store.unmark_turn(task.sessions[frame.part], mid, self.rater)
                return [ack]
            case protocol.Rate():
                if a.session_b is not None:
                    raise errors.PlaygroundError("this assignment asks for a choice, not ratings")
                self._require_seen(task)
                missing = [s.key for s in STATEMENTS if s.key not in frame.values]
                if missing:
                    raise errors.PlaygroundError(
                        f"answer every statement first ({len(missing)} still open)"
                    )
                self.store.rate_conversation(
                    a.session_a, self.rater, dict(frame.values), assignment_id=a.id
                )
                return [ack, self.current()]
            case protocol.Prefer():
                if a.session_b is None:
                    raise errors.PlaygroundError("this assignment asks for ratings, not a choice")
                self._require_seen(task)
                reason = frame.reason.strip()
                if not reason:
                    raise errors.PlaygroundError(
                        "please write why you chose it: a reason is required"
                    )
                first, second = task.sessions
                chosen = first if frame.choice == "A" else second
                self.store.record_preference(
                    self.rater, first, second, chosen, reason, assignment_id=a.id
                )
                return [ack, self.current()]
            case _:
                assert_never(frame)

    def _ids(self, task: OpenTask, part: int) -> list[int]:
        if part >= len(task.sessions):
            raise errors.PlaygroundError("this assignment has one conversation only")
        return task.message_ids[part]

    def _message(self, task: OpenTask, part: int, n: int) -> int:
        ids = self._ids(task, part)
        if n > len(ids):
            raise errors.PlaygroundError(f"the conversation has {len(ids)} messages, not {n}")
        if n > self.links.shown(task.assignment.id, part):
            raise errors.PlaygroundError("a message can be marked once it has been shown")
        return ids[n - 1]

    def _require_seen(self, task: OpenTask) -> None:
        for part, ids in enumerate(task.message_ids):
            if self.links.shown(task.assignment.id, part) < len(ids):
                raise errors.PlaygroundError(
                    "watch the whole conversation first (or use “Show all”)"
                    if len(task.message_ids) == 1
                    else "watch both conversations to the end (or use “Show all”) first"
                )

    @staticmethod
    def _blind(task: OpenTask, text: str) -> str:
        """A refusal never names a session: each id becomes "conversation A/B"."""
        for i, sid in enumerate(task.sessions):
            name = f"conversation {task.frame.conversations[i].label}".strip()
            text = text.replace(sid, name)
        return text
