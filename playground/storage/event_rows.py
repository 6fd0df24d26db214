"""The rows each event writes in the tables of :mod:`playground.storage.schema`.

One function per kind of event that has rows, named after it.
:class:`playground.storage.recorder.SessionRecorder` chooses the function for each event and
decides when to write (one transaction per event) and what a failed write means; nothing here
opens a transaction. Statements bind named parameters (``:name``).
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any, Literal

import sqlite_utils

from playground import domain, events
from playground.domain.refs import ref_id
from playground.storage.vectors import save_vectors, text_hash


def _json(value: Any) -> str:
    """``value`` as the JSON text a column holds (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False)


def _insert(
    db: sqlite_utils.Database, table: str, row: dict[str, Any], *, replace: bool = False
) -> None:
    """Insert one row into ``table`` (``INSERT OR REPLACE`` with ``replace``): its columns are
    ``row``'s keys, each bound by name."""
    columns = ", ".join(row)
    values = ", ".join(f":{column}" for column in row)
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    db.execute(f"{verb} INTO {table} ({columns}) VALUES ({values})", row)


def session_started(db: sqlite_utils.Database, e: events.SessionStarted) -> None:
    logprobs = None if e.logprobs_supported is None else int(e.logprobs_supported)
    _insert(
        db,
        "sessions",
        {
            "id": e.session_id,
            "created_at": e.at,
            "updated_at": e.at,
            "status": "running",
            "engine": e.engine,
            "model": e.model,
            "seed": e.seed,
            "condition": e.condition,
            "preset": e.settings.get("preset"),
            "logprobs_supported": logprobs,
            "config": _json(e.settings),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "experiment_id": e.experiment_id,
            "draw": e.draw,
        },
    )


def session_finished(db: sqlite_utils.Database, e: events.SessionFinished) -> None:
    db.execute(
        "UPDATE sessions SET status = :status, end_reason = :reason, finished_at = :at,"
        " updated_at = :at WHERE id = :session_id",
        {"status": e.status, "reason": e.reason, "at": e.at, "session_id": e.session_id},
    )
    _everyone_left(db, e.session_id, e.at)


def _everyone_left(db: sqlite_utils.Database, session_id: str, at: str) -> None:
    """Everyone still seated leaves when the session ends (who left before keeps their time)."""
    db.execute(
        "UPDATE participants SET left_at = :at WHERE session_id = :session_id AND left_at IS NULL",
        {"at": at, "session_id": session_id},
    )


def condition_changed(db: sqlite_utils.Database, e: events.ConditionChanged) -> None:
    """The session's condition follows its seats (the change itself is in the event log)."""
    db.execute(
        "UPDATE sessions SET condition = :new, updated_at = :at WHERE id = :session_id",
        {"new": e.new, "at": e.at, "session_id": e.session_id},
    )


def session_failed(db: sqlite_utils.Database, event: events.SessionFinished, why: str) -> None:
    """End the session as ``failed`` for ``why``, whatever ending ``event`` announced."""
    db.execute(
        "UPDATE sessions SET status = 'failed', end_reason = :reason, finished_at = :at,"
        " updated_at = :at WHERE id = :session_id",
        {"reason": why, "at": event.at, "session_id": event.session_id},
    )
    _everyone_left(db, event.session_id, event.at)


def usage_recorded(db: sqlite_utils.Database, e: events.UsageRecorded) -> None:
    u = e.usage
    db.execute(
        "UPDATE sessions SET calls = :calls, prompt_tokens = :prompt_tokens,"
        " completion_tokens = :completion_tokens, embedding_calls = :embedding_calls,"
        " retries = :retries, rate_limit_waits = :rate_limit_waits,"
        " rate_limit_seconds = :rate_limit_seconds, dropped = :dropped, cut = :cut,"
        " server_profile = COALESCE(:server_profile, server_profile) WHERE id = :session_id",
        {
            "calls": u.calls,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "embedding_calls": u.embedding_calls,
            "retries": u.retries,
            "rate_limit_waits": u.rate_limit_waits,
            "rate_limit_seconds": u.rate_limit_seconds,
            "dropped": u.dropped,
            "cut": u.cut,
            "server_profile": u.server_profile or None,
            "session_id": e.session_id,
        },
    )


def log_event(db: sqlite_utils.Database, event: events.Event) -> None:
    """Append ``event``'s JSON to the ``events`` table (the log a replay reads)."""
    _insert(
        db,
        "events",
        {
            "session_id": event.session_id,
            "seq": event.seq,
            "kind": event.kind,
            "step": event.step,
            "at": event.at,
            "data": event.model_dump_json(),
        },
        replace=True,
    )


def participant_joined(db: sqlite_utils.Database, e: events.ParticipantJoined) -> None:
    _insert(
        db,
        "participants",
        {
            "session_id": e.session_id,
            "name": e.name,
            "kind": e.participant_kind,
            "persona_id": e.persona.id if e.persona else None,
            "persona": e.persona.model_dump_json() if e.persona else None,
            "proactivity": _json(e.proactivity),
            "color_index": e.color_index,
            "joined_at": e.at,
            "policy": domain.seat_policy(e.participant_kind, e.policy),
            "profile": e.profile.model_dump_json() if e.profile else None,
            "remote": int(e.remote),
        },
        replace=True,
    )


def participant_left(db: sqlite_utils.Database, e: events.ParticipantLeft) -> None:
    db.execute(
        "UPDATE participants SET left_at = :at WHERE session_id = :session_id AND name = :name",
        {"at": e.at, "session_id": e.session_id, "name": e.name},
    )


def proactivity_changed(db: sqlite_utils.Database, e: events.ProactivityChanged) -> None:
    _set_participant(db, e, "proactivity", _json(e.proactivity))


def policy_changed(db: sqlite_utils.Database, e: events.PolicyChanged) -> None:
    _set_participant(db, e, "policy", e.policy)


def _set_participant(
    db: sqlite_utils.Database,
    e: events.ProactivityChanged | events.PolicyChanged,
    column: Literal["proactivity", "policy"],
    value: str,
) -> None:
    """A participant's proactivity or policy, changed during the session."""
    db.execute(
        f"UPDATE participants SET {column} = :value WHERE session_id = :session_id AND name = :name",
        {"value": value, "session_id": e.session_id, "name": e.name},
    )


def hidden_state_recorded(db: sqlite_utils.Database, e: events.HiddenStateRecorded) -> None:
    h = e.state
    _insert(
        db,
        "hidden_states",
        {
            "session_id": e.session_id,
            "message_id": e.message_id,
            "participant": e.participant,
            "turn": e.turn,
            "step": e.step,
            "inner_thoughts": h.inner_thoughts,
            "satisfaction": h.satisfaction,
            "satisfaction_explanation": h.satisfaction_explanation,
            "satisfaction_missing": int(h.satisfaction_missing),
            "clarity": h.clarity,
            "clarity_explanation": h.clarity_explanation,
            "emotion": h.emotion,
            "intent": h.intent,
            "emotion_source": h.emotion_source,
            "intent_source": h.intent_source,
            "format": h.format,
            "origin": e.origin,
            "recorded_at": e.at,
        },
        replace=True,
    )


def message_posted(db: sqlite_utils.Database, e: events.MessagePosted) -> None:
    m = e.message
    _insert(
        db,
        "messages",
        {
            "session_id": e.session_id,
            "id": m.id,
            "step": m.step,
            "speaker": m.speaker,
            "speaker_kind": m.kind,
            "text": m.text,
            "thought_id": m.thought_id,
            "system": m.system,
            "interruption": int(m.interruption),
            "origin": m.origin,
            "posted_at": m.at,
            "forced": int(m.forced),
        },
    )
    db.execute(
        "UPDATE sessions SET updated_at = :at WHERE id = :session_id",
        {"at": e.at, "session_id": e.session_id},
    )


def message_interpreted(db: sqlite_utils.Database, e: events.MessageInterpreted) -> None:
    i = e.interpretation
    db.execute(
        "UPDATE messages SET interpretation = :text WHERE session_id = :session_id AND id = :id",
        {"text": i.text, "session_id": e.session_id, "id": i.message_id},
    )


def turn_type_predicted(db: sqlite_utils.Database, e: events.TurnTypePredicted) -> None:
    t = e.turn_type
    db.execute(
        "UPDATE messages SET turn_type = :kind, addressee = :addressee"
        " WHERE session_id = :session_id AND id = :id",
        {"kind": t.kind, "addressee": t.addressee, "session_id": e.session_id, "id": t.message_id},
    )


def next_speaker_predicted(db: sqlite_utils.Database, e: events.NextSpeakerPredicted) -> None:
    p = e.prediction
    _insert(
        db,
        "predictions",
        {
            "session_id": e.session_id,
            "message_id": p.message_id,
            "step": e.step,
            "predicted": p.predicted,
            "chosen": e.chosen,
            "rule": e.rule,
            "probabilities": _json(p.probabilities),
            "method": p.method,
            "origin": p.origin,
            "predicted_at": e.at,
        },
        replace=True,
    )


def message_embedded(db: sqlite_utils.Database, e: events.MessageEmbedded) -> None:
    """The vector the room computed, cached for ``playground features`` (keyed by the hash
    of the text it was computed from, so an edited text is embedded again)."""
    row = db.execute(
        "SELECT text FROM messages WHERE session_id = :session_id AND id = :id",
        {"session_id": e.session_id, "id": e.message_id},
    ).fetchone()
    if row is None:
        return
    save_vectors(db, [(e.session_id, e.message_id, e.model, text_hash(row[0]), e.dim, e.vector)])


def annotation_added(db: sqlite_utils.Database, e: events.AnnotationAdded) -> None:
    _insert(
        db,
        "annotations",
        {
            "session_id": e.session_id,
            "message_id": e.message_id,
            "author": e.author,
            "kind": e.note_kind,
            "text": e.text,
            "created_at": e.at,
        },
    )


def label_recorded(db: sqlite_utils.Database, e: events.LabelRecorded) -> None:
    _insert(
        db,
        "labels",
        {
            "session_id": e.session_id,
            "message_id": e.message_id,
            "author": e.author,
            "question": e.question,
            "answer": e.answer,
            "created_at": e.at,
        },
    )


def memory_changed(db: sqlite_utils.Database, e: events.MemoryChanged) -> None:
    m = e.memory
    _insert(
        db,
        "memories",
        {
            "session_id": e.session_id,
            "id": m.id,
            "agent": e.agent,
            "kind": m.kind,
            "text": m.text,
            "weight": m.weight,
            "created_step": m.created_step,
            "last_access": m.last_access,
            "deleted": int(e.change == "deleted"),
            "updated_at": e.at,
        },
        replace=True,
    )


def memories_retrieved(db: sqlite_utils.Database, e: events.MemoriesRetrieved) -> None:
    ids = [n for n in (ref_id(s.ref, "memory") for s in e.stimuli) if n is not None]
    for mid in ids:
        db.execute(
            "UPDATE memories SET last_access = :step WHERE session_id = :session_id AND id = :id",
            {"step": e.step, "session_id": e.session_id, "id": mid},
        )


def thought_formed(db: sqlite_utils.Database, e: events.ThoughtFormed) -> None:
    t = e.thought
    _insert(
        db,
        "thoughts",
        {
            "session_id": e.session_id,
            "id": t.id,
            "agent": t.agent,
            "text": t.text,
            "system": t.system,
            "stimuli": _json(t.stimuli),
            "saliency": t.saliency,
            "created_step": t.created_step,
            "origin": t.origin,
            "created_at": e.at,
        },
    )


def thought_evaluated(db: sqlite_utils.Database, e: events.ThoughtEvaluated) -> None:
    v = e.evaluation
    scored = {
        "rating": v.rating,
        "distribution": _json({str(k): p for k, p in v.distribution.items()}),
        "score": v.score,
        "method": v.method,
        "reasons_for": _json(v.reasons_for),
        "reasons_against": _json(v.reasons_against),
        "heuristics": _json(v.heuristics),
        "samples": v.samples,
    }
    _insert(
        db,
        "evaluations",
        {
            "session_id": e.session_id,
            "thought_id": v.thought_id,
            "step": v.step,
            "expected": v.expected,
            "silence_factor": v.silence_factor,
            "retained": int(e.retained),
            "evaluated_at": e.at,
            **scored,
        },
    )
    db.execute(
        "UPDATE thoughts SET score = :score, rating = :rating, distribution = :distribution,"
        " reasons_for = :reasons_for, reasons_against = :reasons_against,"
        " heuristics = :heuristics, method = :method, samples = :samples,"
        " evaluated_step = :step, saliency = COALESCE(:saliency, saliency)"
        " WHERE session_id = :session_id AND id = :thought_id",
        {
            **scored,
            "step": v.step,
            "saliency": e.saliency,
            "session_id": e.session_id,
            "thought_id": v.thought_id,
        },
    )


def thought_expressed(db: sqlite_utils.Database, e: events.ThoughtExpressed) -> None:
    db.execute(
        "UPDATE thoughts SET expressed_in = :message_id WHERE session_id = :session_id AND id = :id",
        {"message_id": e.message_id, "session_id": e.session_id, "id": e.thought_id},
    )


def thought_deleted(db: sqlite_utils.Database, e: events.ThoughtDeleted) -> None:
    _set_thought_deleted(db, e.session_id, e.thought_id, deleted=True)


def thought_restored(db: sqlite_utils.Database, e: events.ThoughtRestored) -> None:
    _set_thought_deleted(db, e.session_id, e.thought.id, deleted=False)


def _set_thought_deleted(
    db: sqlite_utils.Database, session_id: str, thought_id: int, *, deleted: bool
) -> None:
    """A thought deleted, or back after an undone deletion."""
    db.execute(
        "UPDATE thoughts SET deleted = :deleted WHERE session_id = :session_id AND id = :id",
        {"deleted": int(deleted), "session_id": session_id, "id": thought_id},
    )


def decision_made(db: sqlite_utils.Database, e: events.DecisionMade) -> None:
    d = e.decision
    _insert(
        db,
        "decisions",
        {
            "session_id": e.session_id,
            "step": d.step,
            "trigger": d.trigger,
            "agent": d.agent,
            "action": d.action,
            "thought_id": d.thought_id,
            "score": d.score,
            "threshold": d.threshold,
            "turn_type": d.turn_type,
            "reason": d.reason,
            "decided_at": e.at,
            "policy": d.policy,
            "probability": d.probability,
            "best_score": d.best_score,
        },
    )
