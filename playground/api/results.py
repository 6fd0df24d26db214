"""What a run from Python returns: typed records read back from the database, the same figures
as ``playground show --json`` and ``playground experiments ID --runs`` show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from playground import domain, runs
from playground.storage.database import open_for_reading

if TYPE_CHECKING:
    import sqlite_utils

#: A session's state: running until it ends ``finished`` (its stopping rule), ``interrupted``
#: (stopped, cancelled, or its process died) or ``failed`` (a server or database error).
SessionStatus = Literal["running", "finished", "interrupted", "failed"]


class SessionResult(BaseModel):
    """One saved conversation, as ``playground show --json`` reports it.

    Attributes:
        session_id: the session's id (``playground show ID``).
        status: how it ended (``running`` only while it still runs elsewhere).
        end_reason: why, in words (``reached max turns 10: …``).
        condition: the turn-taking condition (``inner-thoughts``, ``next-speaker``...).
        messages: messages posted, the icebreaker included.
        participants: the participants' names, in seat order.
        usage: the model calls, tokens, retries, dropped and cut answers (all 0 offline).
    """

    model_config = ConfigDict(frozen=True)

    session_id: str
    status: SessionStatus
    end_reason: str | None
    condition: str
    messages: int
    participants: tuple[str, ...]
    usage: domain.Usage


class BatchRun(BaseModel):
    """One run of a batch: a (draw, condition) pair and the session it made, if any.

    Attributes:
        draw: the draw's index (the same participants and seed in every condition).
        condition: the condition (an experiment's policy; a STORM cell such as ``u40-off``).
        status: the run's state; a failed run keeps its ``error``.
        session: its session (None when it never started one).
    """

    model_config = ConfigDict(frozen=True)

    draw: int
    condition: str
    status: SessionStatus
    error: str | None
    session: SessionResult | None


class BatchResult(BaseModel):
    """An experiment or a STORM batch after a run (or a resumed run).

    Attributes:
        kind: ``experiment`` or ``storm``.
        batch_id: the batch's id (``playground experiments ID``, ``playground report --storm``).
        runs: every run of this shard, draw by draw.
        skipped: runs an earlier run had finished (resumed, not run again).
        usage: the usage summed over the runs' sessions.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["experiment", "storm"]
    batch_id: str
    runs: tuple[BatchRun, ...]
    skipped: int
    usage: domain.Usage

    @property
    def sessions(self) -> tuple[SessionResult, ...]:
        """The sessions of the runs that have one."""
        return tuple(r.session for r in self.runs if r.session is not None)

    @property
    def failed(self) -> int:
        """Runs that failed (their errors are in :attr:`runs`)."""
        return sum(r.status == "failed" for r in self.runs)

    def messages_by_condition(self) -> dict[str, list[int]]:
        """Each condition's message counts, one per finished conversation, draw by draw."""
        out: dict[str, list[int]] = {}
        for r in self.runs:
            if r.session is not None and r.session.status == "finished":
                out.setdefault(r.condition, []).append(r.session.messages)
        return out


_USAGE_COUNTS = [n for n in domain.Usage.model_fields if n != "server_profile"]


def _usage_of(row: Mapping[str, Any]) -> domain.Usage:
    """A session row's usage columns as a record (a column a database predates counts as 0)."""
    return domain.Usage(**{k: row[k] for k in _USAGE_COUNTS if row.get(k) is not None})


def _total(usages: Sequence[domain.Usage]) -> domain.Usage:
    return domain.Usage(**{k: sum(getattr(u, k) for u in usages) for k in _USAGE_COUNTS})


def session_result(db: sqlite_utils.Database, session_id: str) -> SessionResult:
    """A saved session's result, read as ``playground show --json`` reads it.

    Raises:
        SessionNotFound: no such session.
    """
    from playground.storage import SessionReader

    data = SessionReader(db).load(session_id)
    s = data["session"]
    return SessionResult(
        session_id=s["id"],
        status=s["status"],
        end_reason=s["end_reason"],
        condition=s["condition"],
        messages=len(data["messages"]),
        participants=tuple(p["name"] for p in data["participants"]),
        usage=_usage_of(s),
    )


def batch_result(
    kind: Literal["experiment", "storm"], db_path: runs.DbPath, end: runs.BatchEnd
) -> BatchResult:
    """A batch's result after a run: every run of it with its session, read from ``db_path``."""
    from playground.experiments import results

    db = open_for_reading(db_path)
    try:
        runs = tuple(
            BatchRun(
                draw=r["draw"],
                condition=r["condition"],
                status=r["status"],
                error=r["error"],
                session=session_result(db, r["session_id"]) if r["session_id"] else None,
            )
            for r in results.runs(db, end.batch_id)
        )
    finally:
        db.close()
    return BatchResult(
        kind=kind,
        batch_id=end.batch_id,
        runs=runs,
        skipped=sum(c.skipped for c in end.progress.conditions.values()),
        usage=_total([r.session.usage for r in runs if r.session is not None]),
    )
