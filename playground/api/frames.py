"""Tidy tables (pandas DataFrames) of saved sessions: one row per thing, columns named as the
export format names them (``docs/export-format.md``, ``docs/schema.md``).

The rows come from the export's own reader (:func:`playground.transfer.export.export_record`) and
the stored geometry features (:func:`playground.geometry.store.features_table`); the columns and
their types from the export's typed rows (:mod:`playground.transfer.model`). pandas is imported
only here, and only when a table is asked for.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlite_utils

from playground import domain
from playground.cognition import scoring
from playground.errors import PlaygroundError
from playground.storage.reader import SessionReader
from playground.transfer import export
from playground.transfer import model as export_model

if TYPE_CHECKING:
    import pandas as pd

#: Columns every per-session table starts with, so that tables group by condition.
GROUP_COLUMNS = ("session_id", "experiment_id", "condition")
#: JSON objects of known keys, spread over one column each (``distribution.1``, ``heuristics.
#: relevance``), as ``pandas.json_normalize`` names them.
SPREAD: dict[str, tuple[str, ...]] = {
    "distribution": tuple(str(r) for r in scoring.RATINGS),
    "heuristics": domain.HEURISTICS,
}
#: The pandas dtype of a column by the Python type of its field: integers keep missing values
#: (``Int64``), numbers are floats (NaN when missing), text is pandas' string type.
_DTYPES = {int: "Int64", float: "float64", str: "str"}
_GEOMETRY_COLUMNS: tuple[tuple[str, str | None], ...] = (
    ("model", "str"),
    ("version", "Int64"),
    ("computed_at", "str"),
    ("message_count", "Int64"),
    ("goal", "str"),
)

Columns = tuple[tuple[str, str | None], ...]


def _scalar_types(annotation: Any) -> set[type]:
    """The Python types a field's values can have (None left out)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _scalar_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: set[type] = set()
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                out |= _scalar_types(arg)
        return out
    if origin is typing.Literal:
        return {type(v) for v in typing.get_args(annotation)}
    if isinstance(annotation, type) and origin is None:
        return {annotation}
    return {object}  # lists, objects, JSON values


def _dtype(annotation: Any) -> str | None:
    kinds = _scalar_types(annotation)
    if kinds == {int, float}:
        return "float64"
    if len(kinds) == 1:
        return _DTYPES.get(next(iter(kinds)))
    return None


def _columns(kind: type[export_model.Row], *, drop: Iterable[str] = ()) -> Columns:
    """A table's columns and dtypes from its export row, the JSON objects of :data:`SPREAD`
    spread over one column per key."""
    left_out = set(drop) | export_model.NOT_COLUMNS.get(_table_of(kind), frozenset())
    out: list[tuple[str, str | None]] = []
    for name, field in kind.model_fields.items():
        if name in left_out:
            continue
        if name in SPREAD:
            out += [(f"{name}.{key}", "float64") for key in SPREAD[name]]
        else:
            out.append((name, _dtype(field.annotation)))
    return tuple(out)


def _table_of(kind: type[export_model.Row]) -> str:
    return next((t for t, m in export_model.TABLE_MODELS.items() if m is kind), "")


_GROUP: Columns = tuple((c, "str") for c in GROUP_COLUMNS)
SESSIONS = _GROUP + _columns(export_model.SessionRow, drop={"id", *GROUP_COLUMNS})
PARTICIPANTS = _GROUP + _columns(export_model.ParticipantRow)
MESSAGES = _GROUP + _columns(export_model.MessageRow)
THOUGHTS = _GROUP + _columns(export_model.ThoughtRow)
EVALUATIONS = (
    *_GROUP,
    ("thought_id", "Int64"),
    ("agent", "str"),
    *_columns(export_model.EvaluationRow),
)
DECISIONS = _GROUP + _columns(export_model.DecisionRow)
RATINGS = _GROUP + _columns(export_model.RatingRow)
PREFERENCES = (
    *_columns(export_model.PreferenceRow, drop={"other_id"}),
    ("first_condition", "str"),
    ("second_condition", "str"),
)
TURN_MARKS = _GROUP + _columns(export_model.TurnMarkRow)
STORM_DIALOGUES = _GROUP + _columns(export_model.StormDialogueRow, drop={"experiment_id"})
STORM_TURNS = _GROUP + _columns(export_model.HiddenStateRow) + (("text", "str"),)


def geometry_columns() -> Columns:
    """The ``geometry`` table's columns: the stored row's, then one per TRACE feature."""
    from playground.geometry import features

    return _GROUP + _GEOMETRY_COLUMNS + tuple((name, "float64") for name in features.FEATURE_NAMES)


@dataclass(frozen=True, repr=False)
class Frames:
    """Tidy tables of saved sessions, one pandas DataFrame per kind of thing.

    Every table but ``preferences`` starts with ``session_id``, ``experiment_id`` and
    ``condition``, so ``frames.thoughts.groupby("condition")`` works at once. The other columns
    are named as in docs/export-format.md; ``distribution`` and ``heuristics`` are spread over
    ``distribution.1`` … ``distribution.5`` and ``heuristics.relevance`` … (one column per key).
    Integer columns keep missing values (pandas ``Int64``); timestamps are ISO 8601 text.
    """

    #: One row per session: its ``sessions`` row (``id`` is ``session_id``).
    sessions: pd.DataFrame
    #: One row per participant of a session.
    participants: pd.DataFrame
    #: One row per message (``id`` is the turn number; ``thought_id`` the thought it expressed).
    messages: pd.DataFrame
    #: One row per thought: ``system``, ``stimuli``, ``saliency``, the motivation ``score`` of its
    #: latest evaluation, ``rating``, ``method`` (the rating method) and the rest.
    thoughts: pd.DataFrame
    #: One row per evaluation of a thought (``thought_id``, ``agent``), in the order made: the
    #: rating, its distribution, the eight heuristics (the offline engine's), the score.
    evaluations: pd.DataFrame
    #: One row per trigger and agent: what Algorithm 1 decided, and why.
    decisions: pd.DataFrame
    #: One row per Likert answer: third-party ratings and participant questionnaires.
    ratings: pd.DataFrame
    #: One row per pairwise preference between two sessions, at least one of them read here:
    #: ``first_id``, ``second_id``, ``chosen_id`` and the two sessions' conditions.
    preferences: pd.DataFrame
    #: One row per unnatural-turn mark.
    turn_marks: pd.DataFrame
    #: One row per session with stored TRACE features (``playground features``): the embedding
    #: ``model`` and one column per feature (docs/geometry.md).
    geometry: pd.DataFrame
    #: One row per STORM dialogue: the task, the profile's difficulty and the assistant.
    storm_dialogues: pd.DataFrame
    #: One row per message of a simulated user: its hidden state at that turn (satisfaction,
    #: clarity, emotion, intent, inner thoughts) and the message's ``text``.
    storm_turns: pd.DataFrame

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name} {len(frame)}" for name, frame in self.tables().items())
        return f"<playground.Frames (rows) {sizes}>"

    @staticmethod
    def columns() -> dict[str, list[str]]:
        """The columns of each table, by table name, as ``to_pandas()`` gives them (an empty
        table has them too)."""
        return {name: [c for c, _ in cols] for name, cols in table_columns().items()}

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by its name, in the order above."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_parquet(self, folder: str | Path) -> list[Path]:
        """Write each table to ``folder/<name>.parquet`` (the folder is made when missing).

        Lists and objects (``stimuli``, ``config``, ``persona`` …) are written as JSON text.

        Returns:
            The files written, in table order.

        Raises:
            PlaygroundError: pyarrow is not installed (``pip install pyarrow``), or a file
                cannot be written.
        """
        try:
            import pyarrow  # noqa: F401  (pandas writes Parquet through it)
        except ImportError:
            raise PlaygroundError(
                "to_parquet needs pyarrow, which is not installed: pip install pyarrow"
                " (or write each table with DataFrame.to_csv)"
            ) from None
        target = Path(folder)
        written = []
        try:
            target.mkdir(parents=True, exist_ok=True)
            for name, frame in self.tables().items():
                path = target / f"{name}.parquet"
                _json_text(frame).to_parquet(path, index=False)
                written.append(path)
        except OSError as exc:
            raise PlaygroundError(f"cannot write {target}: {exc.strerror or exc}") from exc
        return written


def _json_text(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == object:
            out[name] = [
                json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v
                for v in out[name]
            ]
    return out


def _frame(rows: Sequence[dict[str, Any]], columns: Columns) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        {
            name: pd.Series([r.get(name) for r in rows], dtype=dtype or object)
            for name, dtype in columns
        }
    )


def _spread(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for name, keys in SPREAD.items():
        if name in out:
            values = out.pop(name) or {}
            for key in keys:
                out[f"{name}.{key}"] = values.get(key) if isinstance(values, dict) else None
    return out


def _per_session(records: list[dict[str, Any]], key: str) -> Iterator[dict[str, Any]]:
    for record in records:
        group = _group(record)
        for row in record[key]:
            yield {**group, **_spread(row)}


def _group(record: dict[str, Any]) -> dict[str, Any]:
    session = record["session"]
    return {
        "session_id": session["id"],
        "experiment_id": session.get("experiment_id"),
        "condition": session.get("condition"),
    }


def _evaluations(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for record in records:
        group = _group(record)
        for thought in record["thoughts"]:
            for ev in thought["evaluations"]:
                yield {
                    **group,
                    "thought_id": thought["id"],
                    "agent": thought["agent"],
                    **_spread(ev),
                }


def _storm_turns(records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for record in records:
        group = _group(record)
        texts = {m["id"]: m["text"] for m in record["messages"]}
        for row in record["hidden_states"]:
            yield {**group, **row, "text": texts.get(row["message_id"])}


def _preferences(db: sqlite_utils.Database, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each preference once (the export lists it in both sessions' records), with the
    conditions of its two sessions."""
    conditions = {r["session"]["id"]: r["session"].get("condition") for r in records}
    reader = SessionReader(db)

    def condition(session_id: str) -> Any:
        if session_id not in conditions:
            try:
                conditions[session_id] = reader.session_row(session_id).get("condition")
            except PlaygroundError:  # the other session was deleted since
                conditions[session_id] = None
        return conditions[session_id]

    seen: dict[str, dict[str, Any]] = {}
    for record in records:
        for pref in record["preferences"]:
            row = {k: v for k, v in pref.items() if k != "other_id"}
            key = json.dumps(row, sort_keys=True, default=str)
            if key not in seen:
                seen[key] = {
                    **row,
                    "first_condition": condition(row["first_id"]),
                    "second_condition": condition(row["second_id"]),
                }
    return list(seen.values())


def _geometry(db: sqlite_utils.Database, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from playground.geometry import store

    groups = {r["session"]["id"]: _group(r) for r in records}
    return [
        {
            **groups[f.session_id],
            "model": f.model,
            "version": f.version,
            "computed_at": f.computed_at,
            "message_count": f.message_count,
            "goal": f.goal,
            **f.features,
        }
        for f in store.features_table(db, list(groups))
    ]


def table_columns() -> dict[str, Columns]:
    """Each table's columns and pandas dtypes, in :class:`Frames` order."""
    return {
        "sessions": SESSIONS,
        "participants": PARTICIPANTS,
        "messages": MESSAGES,
        "thoughts": THOUGHTS,
        "evaluations": EVALUATIONS,
        "decisions": DECISIONS,
        "ratings": RATINGS,
        "preferences": PREFERENCES,
        "turn_marks": TURN_MARKS,
        "geometry": geometry_columns(),
        "storm_dialogues": STORM_DIALOGUES,
        "storm_turns": STORM_TURNS,
    }


def build(db: sqlite_utils.Database, session_ids: Sequence[str]) -> Frames:
    """The tidy tables of these sessions (full ids), in the order given.

    Raises:
        SessionNotFound: an id names no session.
    """
    records = [export.export_record(db, sid) for sid in dict.fromkeys(session_ids)]
    sessions = [
        {**_group(r), **{k: v for k, v in r["session"].items() if k != "id"}} for r in records
    ]
    rows: dict[str, list[dict[str, Any]]] = {
        "sessions": sessions,
        "evaluations": list(_evaluations(records)),
        "preferences": _preferences(db, records),
        "geometry": _geometry(db, records),
        "storm_turns": list(_storm_turns(records)),
    }
    columns = table_columns()
    for name in columns:
        if name not in rows:  # the tables that are one of the record's lists
            rows[name] = list(_per_session(records, name))
    return Frames(**{name: _frame(rows[name], cols) for name, cols in columns.items()})
