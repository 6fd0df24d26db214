"""SessionRecorder: an event subscriber that writes each event's rows as it happens.

Each event is one short transaction, so a killed process loses at most the step in flight. The
recorder is a *required* subscriber: when a write fails (a read-only file, a full disk, a lock held
past the busy timeout), the failure is raised as :class:`playground.errors.RecordingError` to
whoever published the event, and the run stops instead of going on unsaved.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
from contextlib import AbstractContextManager
from typing import Any

import sqlite_utils

from playground import errors, events
from playground.storage.database import database_file
from playground.storage.writes import immediate

log = logging.getLogger(__name__)


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


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

    def handle(self, event: Any) -> None:
        """Write one event's rows in one transaction.

        Raises:
            RecordingError: the database could not be written. After a first failure nothing more
                is written (a record with holes would pass for a whole one): every later event
                with rows raises it again, and the session's end is saved as ``failed`` if the
                database still takes that one write.
        """
        if self.failure is not None:
            if event.kind == "session_finished":
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
                self._x(
                    "UPDATE sessions SET status = 'failed', end_reason = ?, finished_at = ?, updated_at = ? WHERE id = ?",
                    [str(self.failure), e.at, e.at, e.session_id],
                )
        except sqlite3.Error:
            self.failure.marked_failed = False
        else:
            self.failure.marked_failed = True

    def _transaction(self) -> AbstractContextManager[None]:
        """One write transaction that takes the write lock at once, nested in a transaction the
        caller already holds (a batch opening a session and its run row together); counted at
        the fault-injection point of :mod:`playground.storage.writes`."""
        return immediate(self.db)

    def _write(self, event: Any) -> None:
        handler = getattr(self, f"_on_{event.kind}", None)
        with self._transaction():
            if handler is not None:
                handler(event)
            if (
                self.keep_event_log
                and event.kind not in ("participant_state_changed", "message_embedded")
                and self.session_id
            ):
                self.db.execute(
                    "INSERT OR REPLACE INTO events (session_id, seq, kind, step, at, data) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        event.session_id,
                        event.seq,
                        event.kind,
                        event.step,
                        event.at,
                        event.model_dump_json(),
                    ],
                )

    def _x(self, sql: str, params: list[Any]) -> None:
        self.db.execute(sql, params)

    def _touch(self, e: Any) -> None:
        self._x("UPDATE sessions SET updated_at = ? WHERE id = ?", [e.at, e.session_id])

    def _on_session_started(self, e: events.SessionStarted) -> None:
        self.session_id = e.session_id
        self._x(
            "INSERT INTO sessions (id, created_at, updated_at, status, engine, model, seed, condition, preset, logprobs_supported, config, pid, host, experiment_id, draw)"
            " VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                e.at,
                e.at,
                e.engine,
                e.model,
                e.seed,
                e.condition,
                e.settings.get("preset"),
                None if e.logprobs_supported is None else int(e.logprobs_supported),
                _j(e.settings),
                os.getpid(),
                socket.gethostname(),
                e.experiment_id,
                e.draw,
            ],
        )

    def _on_participant_joined(self, e: events.ParticipantJoined) -> None:
        self._x(
            "INSERT OR REPLACE INTO participants (session_id, name, kind, persona_id, persona, proactivity, color_index, joined_at, policy, profile)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                e.name,
                e.participant_kind,
                e.persona.id if e.persona else None,
                e.persona.model_dump_json() if e.persona else None,
                _j(e.proactivity),
                e.color_index,
                e.at,
                e.policy,
                e.profile.model_dump_json() if e.profile else None,
            ],
        )

    def _on_hidden_state_recorded(self, e: events.HiddenStateRecorded) -> None:
        h = e.state
        self._x(
            "INSERT OR REPLACE INTO hidden_states (session_id, message_id, participant, turn, step, inner_thoughts,"
            " satisfaction, satisfaction_explanation, satisfaction_missing, clarity, clarity_explanation,"
            " emotion, intent, emotion_source, intent_source, format, origin, recorded_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                e.message_id,
                e.participant,
                e.turn,
                e.step,
                h.inner_thoughts,
                h.satisfaction,
                h.satisfaction_explanation,
                int(h.satisfaction_missing),
                h.clarity,
                h.clarity_explanation,
                h.emotion,
                h.intent,
                h.emotion_source,
                h.intent_source,
                h.format,
                e.origin,
                e.at,
            ],
        )

    def _on_participant_left(self, e: events.ParticipantLeft) -> None:
        self._x(
            "UPDATE participants SET left_at = ? WHERE session_id = ? AND name = ?",
            [e.at, e.session_id, e.name],
        )

    def _on_memory_changed(self, e: events.MemoryChanged) -> None:
        m = e.memory
        self._x(
            "INSERT OR REPLACE INTO memories (session_id, id, agent, kind, text, weight, created_step, last_access, deleted, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                m.id,
                e.agent,
                m.kind,
                m.text,
                m.weight,
                m.created_step,
                m.last_access,
                int(e.change == "deleted"),
                e.at,
            ],
        )

    def _on_memories_retrieved(self, e: events.MemoriesRetrieved) -> None:
        ids = [int(s.ref.split(":")[1]) for s in e.stimuli if s.ref.startswith("memory:")]
        for mid in ids:
            self._x(
                "UPDATE memories SET last_access = ? WHERE session_id = ? AND id = ?",
                [e.step, e.session_id, mid],
            )

    def _on_message_embedded(self, e: events.MessageEmbedded) -> None:
        """The vector the room computed, cached for ``playground features`` (keyed by the hash
        of the text it was computed from, so an edited text is embedded again)."""
        from playground.geometry.store import text_hash

        row = self.db.execute(
            "SELECT text FROM messages WHERE session_id = ? AND id = ?",
            [e.session_id, e.message_id],
        ).fetchone()
        if row is None:
            return
        self._x(
            "INSERT OR REPLACE INTO message_embeddings (session_id, message_id, model, text_hash, dim, vector)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [e.session_id, e.message_id, e.model, text_hash(row[0]), e.dim, e.vector],
        )

    def _on_message_posted(self, e: events.MessagePosted) -> None:
        m = e.message
        self._x(
            "INSERT INTO messages (session_id, id, step, speaker, speaker_kind, text, thought_id, system, interruption, origin, posted_at, forced)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                m.id,
                m.step,
                m.speaker,
                m.kind,
                m.text,
                m.thought_id,
                m.system,
                int(m.interruption),
                m.origin,
                m.at,
                int(m.forced),
            ],
        )
        self._touch(e)

    def _on_message_interpreted(self, e: events.MessageInterpreted) -> None:
        i = e.interpretation
        self._x(
            "UPDATE messages SET interpretation = ? WHERE session_id = ? AND id = ?",
            [i.text, e.session_id, i.message_id],
        )

    def _on_turn_type_predicted(self, e: events.TurnTypePredicted) -> None:
        t = e.turn_type
        self._x(
            "UPDATE messages SET turn_type = ?, addressee = ? WHERE session_id = ? AND id = ?",
            [t.kind, t.addressee, e.session_id, t.message_id],
        )

    def _on_thought_formed(self, e: events.ThoughtFormed) -> None:
        t = e.thought
        self._x(
            "INSERT INTO thoughts (session_id, id, agent, text, system, stimuli, saliency, created_step, origin, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                t.id,
                t.agent,
                t.text,
                t.system,
                _j(t.stimuli),
                t.saliency,
                t.created_step,
                t.origin,
                e.at,
            ],
        )

    def _on_thought_evaluated(self, e: events.ThoughtEvaluated) -> None:
        v = e.evaluation
        dist = _j({str(k): p for k, p in v.distribution.items()})
        self._x(
            "INSERT INTO evaluations (session_id, thought_id, step, rating, distribution, expected, silence_factor, score, method, retained,"
            " reasons_for, reasons_against, heuristics, evaluated_at, samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                v.thought_id,
                v.step,
                v.rating,
                dist,
                v.expected,
                v.silence_factor,
                v.score,
                v.method,
                int(e.retained),
                _j(v.reasons_for),
                _j(v.reasons_against),
                _j(v.heuristics),
                e.at,
                v.samples,
            ],
        )
        self._x(
            "UPDATE thoughts SET score = ?, rating = ?, distribution = ?, reasons_for = ?, reasons_against = ?, heuristics = ?, method = ?,"
            " samples = ?, evaluated_step = ?, saliency = COALESCE(?, saliency) WHERE session_id = ? AND id = ?",
            [
                v.score,
                v.rating,
                dist,
                _j(v.reasons_for),
                _j(v.reasons_against),
                _j(v.heuristics),
                v.method,
                v.samples,
                v.step,
                e.saliency,
                e.session_id,
                v.thought_id,
            ],
        )

    def _on_thought_expressed(self, e: events.ThoughtExpressed) -> None:
        self._x(
            "UPDATE thoughts SET expressed_in = ? WHERE session_id = ? AND id = ?",
            [e.message_id, e.session_id, e.thought_id],
        )

    def _on_thought_deleted(self, e: events.ThoughtDeleted) -> None:
        self._x(
            "UPDATE thoughts SET deleted = 1 WHERE session_id = ? AND id = ?",
            [e.session_id, e.thought_id],
        )

    def _on_thought_restored(self, e: events.ThoughtRestored) -> None:
        self._x(
            "UPDATE thoughts SET deleted = 0 WHERE session_id = ? AND id = ?",
            [e.session_id, e.thought.id],
        )

    def _on_decision_made(self, e: events.DecisionMade) -> None:
        d = e.decision
        self._x(
            "INSERT INTO decisions (session_id, step, trigger, agent, action, thought_id, score, threshold, turn_type, reason, decided_at, policy, probability, best_score)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                d.step,
                d.trigger,
                d.agent,
                d.action,
                d.thought_id,
                d.score,
                d.threshold,
                d.turn_type,
                d.reason,
                e.at,
                d.policy,
                d.probability,
                d.best_score,
            ],
        )

    def _on_usage_recorded(self, e: events.UsageRecorded) -> None:
        u = e.usage
        self._x(
            "UPDATE sessions SET calls = ?, prompt_tokens = ?, completion_tokens = ?, embedding_calls = ?,"
            " retries = ?, rate_limit_waits = ?, rate_limit_seconds = ?, dropped = ?, cut = ?,"
            " server_profile = COALESCE(?, server_profile) WHERE id = ?",
            [
                u.calls,
                u.prompt_tokens,
                u.completion_tokens,
                u.embedding_calls,
                u.retries,
                u.rate_limit_waits,
                u.rate_limit_seconds,
                u.dropped,
                u.cut,
                u.server_profile or None,
                e.session_id,
            ],
        )

    def _on_annotation_added(self, e: events.AnnotationAdded) -> None:
        self._x(
            "INSERT INTO annotations (session_id, message_id, author, kind, text, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [e.session_id, e.message_id, e.author, e.note_kind, e.text, e.at],
        )

    def _on_label_recorded(self, e: events.LabelRecorded) -> None:
        self._x(
            "INSERT INTO labels (session_id, message_id, author, question, answer, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [e.session_id, e.message_id, e.author, e.question, e.answer, e.at],
        )

    def _on_proactivity_changed(self, e: events.ProactivityChanged) -> None:
        self._x(
            "UPDATE participants SET proactivity = ? WHERE session_id = ? AND name = ?",
            [_j(e.proactivity), e.session_id, e.name],
        )

    def _on_next_speaker_predicted(self, e: events.NextSpeakerPredicted) -> None:
        p = e.prediction
        self._x(
            "INSERT OR REPLACE INTO predictions (session_id, message_id, step, predicted, chosen, rule, probabilities, method, origin, predicted_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                e.session_id,
                p.message_id,
                e.step,
                p.predicted,
                e.chosen,
                e.rule,
                _j(p.probabilities),
                p.method,
                p.origin,
                e.at,
            ],
        )

    def _on_policy_changed(self, e: events.PolicyChanged) -> None:
        self._x(
            "UPDATE participants SET policy = ? WHERE session_id = ? AND name = ?",
            [e.policy, e.session_id, e.name],
        )

    def _on_session_finished(self, e: events.SessionFinished) -> None:
        self._x(
            "UPDATE sessions SET status = ?, end_reason = ?, finished_at = ?, updated_at = ? WHERE id = ?",
            [e.status, e.reason, e.at, e.at, e.session_id],
        )
