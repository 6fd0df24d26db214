"""SessionRecorder: an event subscriber that writes each event's rows as it happens.

Each event is one short transaction, so a killed process loses at most the step in flight. The
recorder is a *required* subscriber: when a write fails (a read-only file, a full disk, a lock held
past the busy timeout), the failure is raised as :class:`playground.errors.RecordingError` to
whoever published the event, and the run stops instead of going on unsaved. What each kind of
event writes is in :mod:`playground.storage.event_rows`.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import AbstractContextManager
from typing import Any, assert_never

import sqlite_utils

# The module, not the package: the package's __init__ imports this module.
import playground.storage.event_rows as event_rows
import playground.storage.seats as seat_rows
from playground import errors, events
from playground.storage.database import database_file
from playground.storage.writes import immediate

log = logging.getLogger(__name__)


class SessionRecorder:
    """Writes a session's events into the database.

    Once a write has failed, the recorder writes nothing more except, when the session ends, a
    last attempt to mark it ``failed`` (so the rows it holds are never taken for a whole run); each
    later event raises the failure again.

    Args:
        db: an open database (see :func:`open_database`).
        keep_event_log: also append every event's JSON to the ``events`` table (for replay).

    Attributes:
        path: the database file, as the user would name it.
        failure: the write failure that stopped the run, or None.
        saved_messages: messages written so far.
    """

    def __init__(self, db: sqlite_utils.Database, *, keep_event_log: bool = True) -> None:
        self.db = db
        self.path = database_file(db)  # named in the error if a write ever fails
        self.keep_event_log = keep_event_log
        self.session_id: str | None = None
        self.failure: errors.RecordingError | None = None
        self.saved_messages = 0
        self._session_saved = False
        self._unsubscribe: Any = None

    def attach(self, bus: events.EventBus) -> None:
        """Record ``bus``'s events; the run depends on it (a required subscriber)."""
        self._unsubscribe = bus.subscribe(self.handle, required=True)

    def detach(self) -> None:
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None

    def handle(self, event: events.Event) -> None:
        """Write one event's rows in one transaction.

        Raises:
            RecordingError: the database could not be written. After a first failure nothing more
                is written (a record with holes would pass for a whole one): every later event
                with rows raises it again, and the session's end is saved as ``failed`` if the
                database still takes that one write.
        """
        if self.failure is not None:
            if isinstance(event, events.SessionFinished):
                self._mark_failed(event)
            elif event.kind != "participant_state_changed":  # the only kind with no rows
                raise self.failure
            return
        try:
            self._write(event)
        except sqlite3.Error as exc:
            self.failure = errors.RecordingError(
                self.path,
                str(exc),
                session_id=self.session_id if self._session_saved and self.session_id else "",
                saved_messages=self.saved_messages,
            )
            raise self.failure from exc
        if event.kind == "session_started":
            self._session_saved = True
        elif event.kind == "message_posted":
            self.saved_messages += 1

    def _mark_failed(self, e: events.SessionFinished) -> None:
        """After a failed write, try once to mark the session failed, whatever ending the run
        announced: the write failure is why it ended, and its rows are not the whole run."""
        assert self.failure is not None
        if not self._session_saved:
            return
        try:
            with self._transaction():
                event_rows.session_failed(self.db, e, str(self.failure))
        except sqlite3.Error:
            self.failure.marked_failed = False
        else:
            self.failure.marked_failed = True

    def _transaction(self) -> AbstractContextManager[None]:
        """One write transaction that takes the write lock at once, nested in a transaction the
        caller already holds (a batch opening a session and its run row together); counted at
        the fault-injection point of :mod:`playground.storage.writes`."""
        return immediate(self.db)

    def _write(self, event: events.Event) -> None:
        with self._transaction():
            self._write_rows(event)
            if (
                self.keep_event_log
                and event.kind not in ("participant_state_changed", "message_embedded")
                and self.session_id
            ):
                event_rows.log_event(self.db, event)

    def _write_rows(self, event: events.Event) -> None:
        """The rows of ``event``'s kind. Every kind has a case: one added to the events without
        a case here is a type error (``assert_never``), not an event silently left unsaved."""
        db = self.db
        match event:
            case events.SessionStarted():
                self.session_id = event.session_id
                event_rows.session_started(db, event)
            case events.SessionFinished():
                event_rows.session_finished(db, event)
            case events.UsageRecorded():
                event_rows.usage_recorded(db, event)
            case events.ParticipantJoined():
                event_rows.participant_joined(db, event)
            case events.ParticipantLeft():
                event_rows.participant_left(db, event)
            case events.PresenceChanged():
                seat_rows.presence_changed(db, event)
            case events.ProactivityChanged():
                event_rows.proactivity_changed(db, event)
            case events.PolicyChanged():
                event_rows.policy_changed(db, event)
            case events.ConditionChanged():
                event_rows.condition_changed(db, event)
            case events.HiddenStateRecorded():
                event_rows.hidden_state_recorded(db, event)
            case events.MessagePosted():
                event_rows.message_posted(db, event)
            case events.MessageInterpreted():
                event_rows.message_interpreted(db, event)
            case events.TurnTypePredicted():
                event_rows.turn_type_predicted(db, event)
            case events.NextSpeakerPredicted():
                event_rows.next_speaker_predicted(db, event)
            case events.MessageEmbedded():
                event_rows.message_embedded(db, event)
            case events.AnnotationAdded():
                event_rows.annotation_added(db, event)
            case events.LabelRecorded():
                event_rows.label_recorded(db, event)
            case events.MemoryChanged():
                event_rows.memory_changed(db, event)
            case events.MemoriesRetrieved():
                event_rows.memories_retrieved(db, event)
            case events.ThoughtFormed():
                event_rows.thought_formed(db, event)
            case events.ThoughtEvaluated():
                event_rows.thought_evaluated(db, event)
            case events.ThoughtExpressed():
                event_rows.thought_expressed(db, event)
            case events.ThoughtDeleted():
                event_rows.thought_deleted(db, event)
            case events.ThoughtRestored():
                event_rows.thought_restored(db, event)
            case events.DecisionMade():
                event_rows.decision_made(db, event)
            case (
                events.TriggerFired()
                | events.ThoughtRefused()
                | events.ErrorOccurred()
                | events.TriggerTimed()  # read back from the log: SessionReader.trigger_timings
            ):
                pass  # no table of their own: only the event log keeps them
            case events.ParticipantStateChanged():
                pass  # a passing display state (thinking, speaking...): saved nowhere
            case _:
                assert_never(event)
