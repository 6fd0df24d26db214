"""The rows an export record becomes, table by table, and what makes two records the same
conversation.

:func:`stored_rows` is what the importer writes; :func:`content` is what it compares, to skip a
conversation already in the database (ids that an import may rewrite taken out).
"""

from __future__ import annotations

from typing import Any

from playground import domain
from playground.storage.schema import legacy_best_score
from playground.transfer.model import ExportRecord

#: Where the rows of a conversation go, in an order that puts every referenced row first.
TABLE_ORDER = (
    "participants",
    "memories",
    "messages",
    "annotations",
    "labels",
    "thoughts",
    "evaluations",
    "decisions",
    "predictions",
    "hidden_states",
    "storm_dialogues",
    "storm_judgements",
    "events",
    "ratings",
    "judge_scores",
    "turn_marks",
    "retrospective",
)
#: Lists ordered by a key of their own in ``export``: compared in that order, whatever the file's.
_NATURAL_ORDER: dict[str, tuple[str, ...]] = {
    "participants": ("joined_at",),
    "memories": ("id",),
    "messages": ("id",),
    "thoughts": ("id",),
    "predictions": ("message_id", "step"),
    "hidden_states": ("message_id",),
    "storm_judgements": ("judge", "pair"),
    "judge_scores": ("rater", "metric"),
    "turn_marks": ("message_id",),
    "retrospective": ("author", "message_id"),
    "events": ("seq",),
}
_THIS = "<this session>"
_PARENT = "<its parent>"


def _participant(row: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
    """A participants row as migration 15 leaves older ones: a person's policy is ``human`` (a
    simulated user's ``simulated``), and whoever was seated when the session ended left then."""
    row["policy"] = domain.seat_policy(row["kind"], row["policy"])
    if row["left_at"] is None and session["status"] != "running" and session["finished_at"]:
        row["left_at"] = session["finished_at"]
    return row


def stored_rows(record: ExportRecord) -> dict[str, list[dict[str, Any]]]:
    """The rows a record becomes, table by table (``sessions`` first, then :data:`TABLE_ORDER`),
    before its session id is mapped: what the import writes and what "the same content" compares.

    A session exported while ``running`` is ``interrupted`` (the process that ran it is on another
    machine or gone: it can never continue); ratings lose their assignment (plans belong to the
    database they were made in); a decision exported before ``best_score`` was kept gets it as
    migration 10 gives it to older databases. Preferences involve another session: see
    :meth:`playground.transfer.importer.Importer._import_preferences`. ``study`` is not a row
    here: study plans stay in the database they ran in.
    """
    session = record.session.model_dump()
    if session["status"] == "running":
        session["status"] = "interrupted"
        session["end_reason"] = session["end_reason"] or "imported while still running"
    tables: dict[str, list[dict[str, Any]]] = {"sessions": [session]}
    tables["participants"] = [_participant(p.model_dump(), session) for p in record.participants]
    tables["memories"] = [m.model_dump() for m in record.memories]
    nested = {"thought", "annotations", "labels"}
    tables["messages"] = [m.model_dump(exclude=nested) for m in record.messages]
    for key in ("annotations", "labels"):
        tables[key] = [
            {**note.model_dump(), "message_id": m.id}
            for m in record.messages
            for note in getattr(m, key)
        ]
    tables["thoughts"] = [t.model_dump(exclude={"evaluations"}) for t in record.thoughts]
    tables["evaluations"] = [
        {**ev.model_dump(), "thought_id": t.id} for t in record.thoughts for ev in t.evaluations
    ]
    decisions = []
    for d in record.decisions:
        row = d.model_dump()
        if "best_score" not in d.model_fields_set:  # exported before it was kept
            row["best_score"] = legacy_best_score(d.score, d.reason, d.policy)
        decisions.append(row)
    tables["decisions"] = decisions
    for key in ("predictions", "hidden_states", "storm_dialogues", "storm_judgements"):
        tables[key] = [row.model_dump() for row in getattr(record, key)]
    tables["events"] = [e.model_dump() for e in record.events]
    tables["ratings"] = [{**r.model_dump(), "assignment_id": None} for r in record.ratings]
    tables["judge_scores"] = [s.model_dump() for s in record.judge_scores]
    tables["turn_marks"] = [t.model_dump() for t in record.turn_marks]
    tables["retrospective"] = [r.model_dump() for r in record.retrospective]
    return tables


def content(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """What makes two records the same conversation: every row :func:`stored_rows` gives, with
    the session's own id and its parent's (which an import may rewrite) taken out, and lists in
    the order ``export`` writes them."""
    session = dict(tables["sessions"][0])
    own, parent = session.pop("id"), session.pop("parent_id")
    names = {own: _THIS} | ({parent: _PARENT} if parent else {})
    out: dict[str, Any] = {"session": session}
    for table in TABLE_ORDER:
        rows = tables[table]
        key = _NATURAL_ORDER.get(table)
        if key:
            rows = sorted(rows, key=lambda r, k=key: tuple(r[c] for c in k))  # type: ignore[misc]
        if table == "events":
            rows = [{**r, "data": rename_sessions(r["data"], names)} for r in rows]
        out[table] = rows
    return out


def rename_sessions(value: Any, renames: dict[str, str]) -> Any:
    """Every string equal to a renamed session id, anywhere in an event's data, gets the new id."""
    if isinstance(value, str):
        return renames.get(value, value)
    if isinstance(value, list):
        return [rename_sessions(v, renames) for v in value]
    if isinstance(value, dict):
        return {k: rename_sessions(v, renames) for k, v in value.items()}
    return value
