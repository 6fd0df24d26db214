"""``pg.open(path)``: a read-only view of a session database, with typed sessions, experiments,
user studies and rating plans, and their tidy tables (:mod:`playground.api.frames`).

The file is opened read-only (``file:…?mode=ro``): nothing is migrated, marked or written, so a
database another process is recording into, or a copy on a read-only disk, can be read safely.
The objects reuse the export format's typed rows (:mod:`playground.transfer.model`), so a field
means what it means in ``docs/export-format.md`` and ``docs/schema.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import sqlite_utils
from pydantic import BaseModel, ConfigDict, JsonValue, PrivateAttr, ValidationError

from playground.errors import PlaygroundError
from playground.rating import plan as rating_plan
from playground.storage import study_rows
from playground.storage.database import open_for_reading, snapshot
from playground.storage.reader import SessionReader
from playground.study.lock import StepPhase
from playground.transfer import export
from playground.transfer import model as export_model

if TYPE_CHECKING:
    from playground.api.frames import Frames

#: A rating plan: who rates what, in which order (``rating_plans`` in docs/schema.md).
RatingPlan = rating_plan.Plan
#: Everything about one session, typed: one line of ``playground export`` (docs/export-format.md).
ExportRecord = export_model.ExportRecord


def _typed(kind: type[export_model.Row], values: dict[str, Any], what: str) -> Any:
    try:
        return kind.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(the row)"
        raise PlaygroundError(f"{what}: {where}: {first['msg']}") from exc


def _json_cell(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # damaged: refused by the row's type, with the field named


#: Fields left out of a typed object's repr: whole settings snapshots, pages long in a notebook.
_LONG_FIELDS = frozenset({"config", "settings"})


class _Brief(BaseModel):
    """A repr without the settings snapshots (the fields are all still there)."""

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        return [(k, v) for k, v in super().__repr_args__() if k not in _LONG_FIELDS]


class Session(export_model.SessionRow, _Brief):
    """A saved conversation: its ``sessions`` row (fields as in docs/export-format.md#sessions).

    Read it whole with :meth:`record`, or as tables with :meth:`to_pandas`.
    """

    model_config = ConfigDict(frozen=True)
    _view: Database = PrivateAttr()

    def record(self) -> ExportRecord:
        """Everything about the session, typed: the export format's record (one line of
        ``playground export``), read in one snapshot.

        Raises:
            PlaygroundError: a row cannot be read as the export format says.
        """
        record: ExportRecord = _typed(
            ExportRecord,
            export.export_record(self._view.handle, self.id),
            f"session {self.id}",
        )
        return record

    def to_pandas(self) -> Frames:
        """This session's tidy tables (see :class:`playground.Frames`). Needs pandas."""
        return self._view.frames([self.id])


class Experiment(export_model.ExperimentRow, _Brief):
    """A named group of sessions (``experiments`` row: docs/export-format.md#experiments), with
    the ids of its sessions, oldest first."""

    model_config = ConfigDict(frozen=True)
    session_ids: tuple[str, ...] = ()
    _view: Database = PrivateAttr()

    @property
    def sessions(self) -> list[Session]:
        """The experiment's sessions, oldest first."""
        return [self._view.session(sid) for sid in self.session_ids]

    def to_pandas(self) -> Frames:
        """The tidy tables of the experiment's sessions (see :class:`playground.Frames`);
        ``condition`` tells the conditions apart. Needs pandas."""
        return self._view.frames(list(self.session_ids))


class StudyPlanStep(export_model.StudyStep):
    """One conversation of a user study plan (``plan_steps`` in docs/schema.md)."""

    model_config = ConfigDict(frozen=True)
    #: The name the agent was shown under (its persona's unless that clashed with a person's).
    agent: str
    #: The session run for it (the latest, when run again); None before it starts.
    session_id: str | None = None
    status: StepPhase


class Study(export_model.Row, _Brief):
    """A user study plan: several conversations for the same group of people (``study_plans``
    and ``plan_steps`` in docs/schema.md)."""

    model_config = ConfigDict(frozen=True)
    id: str
    created_at: str
    #: How many people take part.
    humans: int
    #: The group's number: picks the order of the conditions.
    grp: int
    seed: int
    #: The length of each conversation.
    minutes: float
    show_thoughts: bool
    #: The settings the conversations run with.
    settings: dict[str, JsonValue]
    status: Literal["running", "done"]
    steps: tuple[StudyPlanStep, ...] = ()


class Database:
    """A read-only view of a session database; made by :func:`playground.open`.

    Every property reads the file again, so it shows what another process has recorded since.
    Use it as a context manager, or call :meth:`close`, to release the file.

    Attributes:
        path: the database file (``~`` expanded).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._db: sqlite_utils.Database | None = open_for_reading(self.path)

    @property
    def handle(self) -> sqlite_utils.Database:
        """The read-only sqlite-utils connection: for the engine's readers, or SQL of your own
        (``db.handle.execute("SELECT ...")``); a write through it fails.

        Raises:
            PlaygroundError: the view was closed.
        """
        if self._db is None:
            raise PlaygroundError(f"{self.path}: this database view was closed")
        return self._db

    def close(self) -> None:
        """Release the file. Further reads raise :class:`playground.PlaygroundError`."""
        if self._db is not None:
            self._db.conn.close()
            self._db = None

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._db is None else "read-only"
        return f"<playground.Database {str(self.path)!r} ({state})>"

    def _session_ids(self) -> list[str]:
        rows = self.handle.execute("SELECT id FROM sessions ORDER BY created_at, id").fetchall()
        return [str(r[0]) for r in rows]

    def _session(self, reader: SessionReader, session_id: str) -> Session:
        row = reader.session_row(session_id)
        found: Session = _typed(Session, row, f"session {row['id']}")
        found._view = self
        return found

    @property
    def sessions(self) -> list[Session]:
        """Every session, oldest first (a run whose process is gone reads as ``interrupted``)."""
        reader = SessionReader(self.handle)
        with snapshot(self.handle):
            return [self._session(reader, sid) for sid in self._session_ids()]

    def session(self, session_id: str) -> Session:
        """One session, by its id or a unique prefix of it.

        Raises:
            SessionNotFound: no such session, or a prefix several ids share.
        """
        return self._session(SessionReader(self.handle), session_id)

    def _experiments(self) -> Iterator[Experiment]:
        db = self.handle
        owners: dict[str, list[str]] = {}
        for sid, eid in db.execute(
            "SELECT id, experiment_id FROM sessions WHERE experiment_id IS NOT NULL"
            " ORDER BY created_at, id"
        ).fetchall():
            owners.setdefault(eid, []).append(sid)
        cur = db.execute("SELECT * FROM experiments ORDER BY created_at, id")
        names = [d[0] for d in cur.description]
        for values in cur.fetchall():
            row = dict(zip(names, values, strict=True))
            eid = row["id"]
            if isinstance(row["config"], str):
                row["config"] = _json_cell(row["config"])
            found: Experiment = _typed(
                Experiment, {**row, "session_ids": tuple(owners.get(eid, []))}, f"experiment {eid}"
            )
            found._view = self
            yield found

    @property
    def experiments(self) -> list[Experiment]:
        """Every experiment, oldest first."""
        with snapshot(self.handle):
            return list(self._experiments())

    def experiment(self, name_or_id: str) -> Experiment:
        """One experiment, by its id or its unique name.

        Raises:
            PlaygroundError: no such experiment, or a name several experiments share.
        """
        found = self.experiments
        for e in found:
            if e.id == name_or_id:
                return e
        named = [e for e in found if e.name == name_or_id]
        if len(named) > 1:
            raise PlaygroundError(f"experiment name {name_or_id!r} is ambiguous; use its id")
        if not named:
            raise PlaygroundError(f"no experiment {name_or_id!r} in {self.path}")
        return named[0]

    @property
    def studies(self) -> list[Study]:
        """Every user study plan, oldest first, with its steps."""
        db = self.handle
        out = []
        with snapshot(db):
            for listed in study_rows.plans(db):
                row = study_rows.plan(db, listed["id"])
                if row is None:
                    continue
                steps = tuple(
                    _typed(StudyPlanStep, {**s, "plan_id": row["id"]}, f"study {row['id']}")
                    for s in study_rows.plan_steps(db, row["id"])
                )
                out.append(_typed(Study, {**row, "steps": steps}, f"study {row['id']}"))
        return out

    @property
    def rating_plans(self) -> list[RatingPlan]:
        """Every rating plan (who rates what), oldest first."""
        return rating_plan.PlanStore(self.handle).plans()

    def frames(self, session_ids: list[str]) -> Frames:
        """The tidy tables of these sessions (full ids), read in one snapshot. Needs pandas."""
        from playground.api import frames

        db = self.handle
        with snapshot(db):
            return frames.build(db, session_ids)

    def to_pandas(self) -> Frames:
        """Every session's tidy tables (see :class:`playground.Frames`). Needs pandas."""
        with snapshot(self.handle):
            return self.frames(self._session_ids())


def open(path: str | os.PathLike[str]) -> Database:
    """Open a session database to read it: nothing in the file is ever changed.

    Args:
        path: the SQLite file that ``playground simulate``, ``experiment``, ``storm`` or the window
            saved into (``sessions/playground.db`` by default); ``~`` is expanded.

    Returns:
        A read-only :class:`playground.Database`.

    Raises:
        PlaygroundError: no file at ``path``, a file that is not a Thought Playground database, or
            one of a newer schema than this version reads (the message names the path).
    """
    return Database(path)
