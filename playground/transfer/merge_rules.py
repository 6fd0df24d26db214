"""The tables a merge knows, and what to do with a row that is in both databases and differs.

:data:`SESSION_ROWS` move with their session; :data:`KEYS` are merged row by row on a natural key;
:data:`PLAN_ROWS` move with their study plan; any table outside :data:`KNOWN_TABLES` stops the
merge. :func:`rule_for` gives the rule that settles a row found in both databases with other
values (the default refuses it).
:mod:`playground.transfer.merge_source` applies them to one source; the rules read the merge in
progress through :class:`MergeSides`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from playground import errors

Row = dict[str, Any]

#: The rows that belong to one session: copied with their session, skipped with it.
SESSION_ROWS = (
    "participants",
    "messages",
    "memories",
    "thoughts",
    "evaluations",
    "decisions",
    "events",
    "predictions",
    "annotations",
    "labels",
    "hidden_states",
    "storm_dialogues",
    "storm_judgements",
    "message_embeddings",
    "session_features",
    "seats",
    "presence",
    "retrospective",
)
#: A user study plan's rows, all keyed by its id (``study_plans.id``, else ``plan_id``): a plan
#: ``OUT`` lacks is copied with all of them; one it has under the same id is left as it is there
#: (not compared) and counted as already there. ``plan_steps.session_id`` is copied as it is: a
#: merge never renames a session, so the id names the same conversation in ``OUT``.
PLAN_ROWS = ("study_plans", "plan_seats", "plan_steps", "plan_answers")
#: Tables merged row by row on a natural key (``None``: the whole row but its surrogate id), in an
#: order that puts every referenced table before the tables that refer to it.
KEYS: dict[str, tuple[str, ...] | None] = {
    "experiments": ("id",),
    "experiment_draws": ("experiment_id", "draw"),
    "raters": ("id",),
    "rating_plans": None,
    "assignments": ("plan_id", "rater", "position"),
    "ratings": ("session_id", "rater", "instrument", "metric"),
    "judge_scores": ("session_id", "rater", "metric"),
    "turn_marks": ("session_id", "message_id", "rater"),
    "preferences": None,
    "rater_links": ("plan_id", "rater"),
    "rating_open_links": ("plan_id",),
    "rater_reads": ("assignment_id", "part"),
    # After the sessions: a run names its session.
    "experiment_runs": ("experiment_id", "draw", "condition"),
}
#: Every table this module knows how to merge; any other table in a source stops the merge.
KNOWN_TABLES = frozenset({"sessions", *SESSION_ROWS, *KEYS, *PLAN_ROWS})


class MergeError(errors.PlaygroundError):
    """The databases cannot be merged (the message names the file, table or row at fault)."""


@dataclass(frozen=True)
class TableShape:
    """A table's shape as ``PRAGMA table_info`` / ``foreign_key_list`` give it."""

    name: str
    columns: tuple[str, ...]
    surrogate: str | None  # an INTEGER PRIMARY KEY (a rowid alias): renumbered in OUT
    references: tuple[tuple[str, str], ...]  # (column, renumbered table it refers to)


class MergeSides(Protocol):
    """What a rule reads of the merge in progress: the two files, to name them in an error, and
    the shapes of the source's tables."""

    @property
    def out_path(self) -> Path: ...

    @property
    def path(self) -> Path: ...

    @property
    def tables(self) -> Mapping[str, TableShape]: ...


# -- what to do when a row is in both databases and differs --------------------------------

#: A rule: given the merge, the table, the row in OUT and the row of the source, the columns to
#: update in OUT (none: keep it as it is); raises MergeError when the two cannot be one row.
Rule = Callable[[MergeSides, str, Row, Row], Row]


def _differences(theirs: Row, ours: Row, skip: tuple[str, ...] = ()) -> list[str]:
    return [c for c in ours if c not in skip and c in theirs and theirs[c] != ours[c]]


def _refuse(m: MergeSides, name: str, theirs: Row, ours: Row) -> Row:
    """The default: a row that differs between two databases is a conflict."""
    surrogate = m.tables[name].surrogate
    cols = _differences(theirs, ours, skip=(surrogate,) if surrogate else ())
    what = ", ".join(f"{c} {ours[c]!r}" for c in KEYS[name] or ())
    detail = "; ".join(f"{c} {theirs[c]!r} in {m.out_path}, {ours[c]!r} in {m.path}" for c in cols)
    raise MergeError(f"{name} {what} differs between the databases ({detail}); nothing was merged")


def _experiment(m: MergeSides, name: str, theirs: Row, ours: Row) -> Row:
    """One experiment from several shards: the same protocol, else refused. The row keeps the
    earliest creation time and a name when either has one.

    An experiment run by ``playground experiment`` stores its protocol (which its id is a hash of)
    next to operational settings (timeouts, retries, call concurrency) that shards on different
    machines may well set differently: only the protocol must agree. Any other config is
    compared whole."""
    a, b = _protocol(_config(theirs["config"])), _protocol(_config(ours["config"]))
    if a != b:
        paths = _json_differences(a, b)
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        raise MergeError(
            f"experiment {ours['id']}: its config in {m.out_path} differs from the one in "
            f"{m.path} ({shown}): they are not the same experiment; nothing was merged"
        )
    changes: Row = {}
    if ours["created_at"] < theirs["created_at"]:
        changes["created_at"] = ours["created_at"]
    if theirs["name"] is None and ours["name"] is not None:
        changes["name"] = ours["name"]
    return changes


def _protocol(config: Any) -> Any:
    if isinstance(config, dict) and isinstance(config.get("protocol"), dict):
        return {"protocol": config["protocol"]}
    return config


def _config(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return text


def _json_differences(a: Any, b: Any, at: str = "") -> list[str]:
    """The dotted paths at which two JSON values differ (``llm.concurrency: 32 ≠ 8``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            where = f"{at}.{k}" if at else str(k)
            if k not in a or k not in b:
                out.append(f"{where}: in one of them only")
            else:
                out += _json_differences(a[k], b[k], where)
        return out
    if a == b:
        return []
    return [f"{at or 'config'}: {json.dumps(a)} ≠ {json.dumps(b)}"]


def _run(m: MergeSides, name: str, theirs: Row, ours: Row) -> Row:
    """The same conversation of an experiment in two databases: a finished one wins over any
    other; two finished ones must be the same session; otherwise the later update wins."""
    where = f"experiment {ours['experiment_id']} draw {ours['draw']} {ours['condition']}"
    if theirs["status"] == "finished" and ours["status"] == "finished":
        if theirs["session_id"] != ours["session_id"]:
            raise MergeError(
                f"{where} finished twice: session {theirs['session_id']} in {m.out_path}, "
                f"session {ours['session_id']} in {m.path}; nothing was merged"
            )
        return {}
    if theirs["status"] == "finished":
        return {}
    if ours["status"] == "finished" or ours["updated_at"] > theirs["updated_at"]:
        return {c: v for c, v in ours.items() if c not in (KEYS[name] or ())}
    return {}


def _rater(m: MergeSides, name: str, theirs: Row, ours: Row) -> Row:
    """The same rater in two databases: one rater, known since the earlier date."""
    return {"created_at": ours["created_at"]} if ours["created_at"] < theirs["created_at"] else {}


def _assignment(m: MergeSides, name: str, theirs: Row, ours: Row) -> Row:
    """The same assignment in two copies of a plan: completed in one of them is completed."""
    if _differences(theirs, ours, skip=("id", "completed_at")) or (
        theirs["completed_at"] is not None and ours["completed_at"] is not None
    ):
        return _refuse(m, name, theirs, ours)
    return {"completed_at": ours["completed_at"]} if theirs["completed_at"] is None else {}


_RULES: dict[str, Rule] = {
    "experiments": _experiment,
    "experiment_runs": _run,
    "raters": _rater,
    "assignments": _assignment,
}


def rule_for(table: str) -> Rule:
    """What settles a row of ``table`` that is in both databases with other values."""
    return _RULES.get(table, _refuse)
