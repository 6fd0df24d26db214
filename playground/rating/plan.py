"""Who rates what: balanced, seeded assignment of sessions (or pairs of sessions) to raters.

The builders are pure functions; :class:`PlanStore` (the base of ``ratings.RatingStore``) stores
their result and hands out assignments. Every rater draws from their own ``random.Random(f"{seed}:{kind}:{rater}")`` (string seeds are
hashed with SHA-512, so this does not depend on ``PYTHONHASHSEED``), which makes a plan
reproducible from its seed and independent of the order raters are listed in.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import sqlite_utils

from playground import clock, errors
from playground.storage.reader import SessionReader

PlanKind = Literal["conversation", "pairwise"]
_CLOCK = clock.SystemClock()


@dataclass(frozen=True)
class Plan:
    """A rating plan: who rates what, in which order."""

    id: int
    name: str
    kind: PlanKind
    seed: int
    per_rater: int
    raters: list[str]
    source: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class Assignment:
    """One task of a plan. Pairwise: ``session_a`` is shown first, ``session_b`` second."""

    id: int
    plan_id: int
    rater: str
    position: int
    session_a: str
    session_b: str | None
    completed_at: str | None


Task = tuple[str, str | None]


def _cond(condition: str | None) -> str:
    return condition if condition is not None else "(no condition)"


def _round_robin(groups: dict[str, list[Task]], order: list[str], n: int) -> list[Task]:
    picked: list[Task] = []
    while len(picked) < n:
        for key in order:
            if groups[key] and len(picked) < n:
                picked.append(groups[key].pop(0))
    return picked


def conversations(
    pool: Mapping[str, str | None], rater: str, per_rater: int, seed: int
) -> list[Task]:
    """``per_rater`` distinct sessions for one rater, round-robin over conditions, order shuffled.

    Raises:
        PlaygroundError: fewer sessions than ``per_rater``.
    """
    if per_rater > len(pool):
        raise errors.PlaygroundError(
            f"the plan asks for {per_rater} sessions per rater but only {len(pool)} "
            f"session{'s' if len(pool) != 1 else ''} {'are' if len(pool) != 1 else 'is'} available"
        )
    rng = random.Random(f"{seed}:conversation:{rater}")
    groups: dict[str, list[Task]] = {}
    for sid in sorted(pool):
        groups.setdefault(_cond(pool[sid]), []).append((sid, None))
    for key in sorted(groups):
        rng.shuffle(groups[key])
    order = sorted(groups)
    rng.shuffle(order)
    picked = _round_robin(groups, order, per_rater)
    rng.shuffle(picked)
    return picked


def eligible_pairs(
    pool: Mapping[str, str | None], draws: Mapping[str, int | None] | None = None
) -> list[tuple[str, str]]:
    """Every unordered pair of sessions from different conditions, sorted. With ``draws`` (an
    experiment's paired design: session → draw), only the pairs of the same draw: the same
    participants, initiator and icebreaker under two conditions."""
    return [
        (a, b)
        for a, b in itertools.combinations(sorted(pool), 2)
        if _cond(pool[a]) != _cond(pool[b])
        and (draws is None or (draws.get(a) is not None and draws.get(a) == draws.get(b)))
    ]


def pairs(
    pool: Mapping[str, str | None],
    rater: str,
    per_rater: int,
    seed: int,
    draws: Mapping[str, int | None] | None = None,
) -> list[Task]:
    """``per_rater`` pairs for one rater: balanced over condition pairs, sessions used evenly,
    which one is shown first decided by a coin flip, order shuffled.

    Raises:
        PlaygroundError: fewer eligible pairs than ``per_rater``.
    """
    every = eligible_pairs(pool, draws)
    if per_rater > len(every):
        conditions = sorted({_cond(c) for c in pool.values()})
        raise errors.PlaygroundError(
            f"the plan asks for {per_rater} pairs per rater but only {len(every)} pairs of "
            f"sessions from different conditions exist ({len(pool)} sessions; conditions: "
            f"{', '.join(conditions) or 'none'})"
        )
    rng = random.Random(f"{seed}:pairwise:{rater}")
    groups: dict[str, list[tuple[str, str]]] = {}
    for a, b in every:
        key = " vs ".join(sorted((_cond(pool[a]), _cond(pool[b]))))
        groups.setdefault(key, []).append((a, b))
    for key in sorted(groups):
        rng.shuffle(groups[key])
    order = sorted(groups)
    rng.shuffle(order)
    used: dict[str, int] = dict.fromkeys(pool, 0)
    picked: list[Task] = []
    while len(picked) < per_rater:
        for key in order:
            if not groups[key] or len(picked) >= per_rater:
                continue
            # The least-used sessions first, so one rater does not see the same session repeatedly.
            best = min(groups[key], key=lambda p: used[p[0]] + used[p[1]])
            groups[key].remove(best)
            used[best[0]] += 1
            used[best[1]] += 1
            a, b = best if rng.random() < 0.5 else (best[1], best[0])
            picked.append((a, b))
    rng.shuffle(picked)
    return picked


def build(
    kind: str,
    pool: Mapping[str, str | None],
    raters: list[str],
    per_rater: int,
    seed: int,
    draws: Mapping[str, int | None] | None = None,
) -> dict[str, list[Task]]:
    """Assignments for every rater: ``{rater: [(session_a, session_b or None), ...]}``; pairwise
    plans with ``draws`` use matched pairs only (see :func:`eligible_pairs`)."""
    if kind == "conversation":
        return {rater: conversations(pool, rater, per_rater, seed) for rater in raters}
    return {rater: pairs(pool, rater, per_rater, seed, draws) for rater in raters}


class PlanStore:
    """Raters and rating plans in a session database (the base of ``ratings.RatingStore``).

    Args:
        db: an open database (see :func:`playground.storage.open_database`), schema version >= 3.
    """

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    # -- helpers -------------------------------------------------------------------------------
    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def resolve_session(self, session_id: str) -> str:
        """The full id of a session given its id or a unique prefix.

        Raises:
            SessionNotFound: no such session, or an ambiguous prefix.
        """
        return SessionReader(self.db).resolve(session_id)

    def _assignment_row(self, assignment_id: int) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM assignments WHERE id = ?", [assignment_id])
        if not rows:
            raise errors.PlaygroundError(f"no assignment {assignment_id} in this database")
        return rows[0]

    def _check_assignment(self, assignment_id: int, rater: str, sessions: set[str]) -> None:
        row = self._assignment_row(assignment_id)
        if row["rater"] != rater:
            raise errors.PlaygroundError(
                f"assignment {assignment_id} belongs to rater {row['rater']!r}, not {rater!r}"
            )
        if {row["session_a"], row["session_b"]} - {None} != sessions:
            raise errors.PlaygroundError(
                f"assignment {assignment_id} is about other sessions than {sorted(sessions)}"
            )

    # -- raters --------------------------------------------------------------------------------
    def ensure_rater(self, rater: str) -> str:
        """Register a rater (or respondent) if new.

        Returns:
            The rater id: the name with surrounding blanks removed.

        Raises:
            PlaygroundError: the name is empty.
        """
        rid = (rater or "").strip()
        if not rid:
            raise errors.PlaygroundError("a rater needs a name (it was empty)")
        with self.db.atomic():
            self.db.execute(
                "INSERT OR IGNORE INTO raters (id, created_at) VALUES (?, ?)",
                [rid, _CLOCK.now_iso()],
            )
        return rid

    def raters(self) -> list[str]:
        """All rater ids, sorted."""
        return [r[0] for r in self.db.execute("SELECT id FROM raters ORDER BY id").fetchall()]

    # -- plans ---------------------------------------------------------------------------------
    def create_plan(
        self,
        name: str,
        kind: PlanKind,
        raters: list[str],
        per_rater: int,
        *,
        sessions: list[str] | None = None,
        experiment: str | None = None,
        seed: int = 0,
    ) -> Plan:
        """Create a plan of assignments, reproducible from its seed (see the functions above).

        Args:
            name: a name for people.
            kind: ``conversation`` (rate one session) or ``pairwise`` (choose between two).
            raters: rater names.
            per_rater: how many sessions (or pairs) each rater gets.
            sessions: session ids or unique prefixes; or
            experiment: every session of this experiment.
            seed: same seed and same sessions give the same plan.

        Raises:
            PlaygroundError: bad arguments, an unknown experiment, or fewer eligible sessions or
                pairs than asked (the message says how many exist).
        """
        if kind not in ("conversation", "pairwise"):
            raise errors.PlaygroundError(f"unknown plan kind {kind!r} (conversation or pairwise)")
        if not (name or "").strip():
            raise errors.PlaygroundError("a rating plan needs a name")
        if per_rater < 1:
            raise errors.PlaygroundError(f"per_rater must be at least 1 (got {per_rater})")
        ids = list(dict.fromkeys(self.ensure_rater(r) for r in raters))
        if not ids:
            raise errors.PlaygroundError("a rating plan needs at least one rater")
        pool = self._plan_sessions(sessions, experiment)
        # An experiment run as a paired design compares like with like: the same draw's sessions.
        draws = self._draws(experiment) if experiment is not None else None
        if draws is not None and not any(d is not None for d in draws.values()):
            draws = None  # an experiment without draws (made by hand): any pair of conditions
        tasks = build(kind, pool, ids, per_rater, seed, draws)
        source = {"sessions": sorted(pool), "experiment": experiment, "matched": draws is not None}
        now = _CLOCK.now_iso()
        with self.db.atomic():
            cur = self.db.execute(
                "INSERT INTO rating_plans (name, kind, seed, per_rater, raters, source, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [name.strip(), kind, seed, per_rater, json.dumps(ids), json.dumps(source), now],
            )
            plan_id = int(cur.lastrowid or 0)
            for rater, items in tasks.items():
                for position, (a, b) in enumerate(items, start=1):
                    self.db.execute(
                        "INSERT INTO assignments (plan_id, rater, position, session_a, session_b)"
                        " VALUES (?, ?, ?, ?, ?)",
                        [plan_id, rater, position, a, b],
                    )
        return self.plan(plan_id)

    def _draws(self, experiment: str) -> dict[str, int | None]:
        rows = self.db.execute(
            "SELECT id, draw FROM sessions WHERE experiment_id = ?", [experiment]
        ).fetchall()
        return {str(sid): draw for sid, draw in rows}

    def _plan_sessions(
        self, sessions: list[str] | None, experiment: str | None
    ) -> dict[str, str | None]:
        if (sessions is None) == (experiment is None):
            raise errors.PlaygroundError("give either a list of sessions or an experiment")
        if experiment is not None:
            if not self.db.execute(
                "SELECT 1 FROM experiments WHERE id = ?", [experiment]
            ).fetchone():
                raise errors.PlaygroundError(f"no experiment {experiment!r} in this database")
            # Only finished conversations are rated: a failed or interrupted run is not a sample.
            rows = self.db.execute(
                "SELECT id, condition FROM sessions WHERE experiment_id = ? AND status = 'finished'",
                [experiment],
            ).fetchall()
            return {str(sid): cond for sid, cond in rows}
        pool: dict[str, str | None] = {}
        for given in sessions or []:
            sid = self.resolve_session(given)
            pool[sid] = self.db.execute(
                "SELECT condition FROM sessions WHERE id = ?", [sid]
            ).fetchone()[0]
        return pool

    def _plan(self, row: dict[str, Any]) -> Plan:
        return Plan(
            id=row["id"],
            name=row["name"],
            kind=row["kind"],
            seed=row["seed"],
            per_rater=row["per_rater"],
            raters=json.loads(row["raters"]),
            source=json.loads(row["source"]),
            created_at=row["created_at"],
        )

    def plans(self) -> list[Plan]:
        """Every rating plan, oldest first."""
        return [self._plan(r) for r in self._rows("SELECT * FROM rating_plans ORDER BY id")]

    def plan(self, plan_id: int) -> Plan:
        """One plan.

        Raises:
            PlaygroundError: no such plan.
        """
        rows = self._rows("SELECT * FROM rating_plans WHERE id = ?", [plan_id])
        if not rows:
            raise errors.PlaygroundError(f"no rating plan {plan_id} in this database")
        return self._plan(rows[0])

    def assignments(self, plan_id: int, rater: str | None = None) -> list[Assignment]:
        """A plan's assignments (one rater's, or all), rater by rater in plan order, by position."""
        self.plan(plan_id)
        sql = "SELECT * FROM assignments WHERE plan_id = ?"
        params: list[Any] = [plan_id]
        if rater is not None:
            sql += " AND rater = ?"
            params.append(rater.strip())
        return [Assignment(**r) for r in self._rows(sql + " ORDER BY id", params)]

    def next_assignment(self, plan_id: int, rater: str) -> Assignment | None:
        """The rater's first unfinished assignment by position; None when all are done.

        Raises:
            PlaygroundError: no such plan, or the rater is not in it.
        """
        plan = self.plan(plan_id)
        rid = rater.strip()
        if rid not in plan.raters:
            raise errors.PlaygroundError(f"rater {rid!r} is not in rating plan {plan_id}")
        rows = self._rows(
            "SELECT * FROM assignments WHERE plan_id = ? AND rater = ? AND completed_at IS NULL"
            " ORDER BY position LIMIT 1",
            [plan_id, rid],
        )
        return Assignment(**rows[0]) if rows else None

    def _complete(self, assignment_id: int, now: str) -> None:
        self.db.execute(
            "UPDATE assignments SET completed_at = ? WHERE id = ? AND completed_at IS NULL",
            [now, assignment_id],
        )

    def complete(self, assignment_id: int) -> None:
        """Mark an assignment done (it keeps its first completion time).

        Raises:
            PlaygroundError: no such assignment.
        """
        self._assignment_row(assignment_id)
        with self.db.atomic():
            self._complete(assignment_id, _CLOCK.now_iso())

    def rater_progress(self, plan_id: int, rater: str) -> tuple[int, int]:
        """One rater's (assignments done, assignments in total) in a plan (0, 0 if none)."""
        done, total = self.db.execute(
            "SELECT COUNT(completed_at), COUNT(*) FROM assignments WHERE plan_id = ? AND rater = ?",
            [plan_id, rater.strip()],
        ).fetchone()
        return int(done), int(total)

    def progress(self, plan_id: int) -> dict[str, tuple[int, int]]:
        """Per rater of the plan: (assignments done, assignments in total)."""
        plan = self.plan(plan_id)
        rows = self.db.execute(
            "SELECT rater, COUNT(completed_at), COUNT(*) FROM assignments WHERE plan_id = ?"
            " GROUP BY rater",
            [plan_id],
        ).fetchall()
        got = {r: (int(done), int(total)) for r, done, total in rows}
        return {r: got.get(r, (0, 0)) for r in plan.raters}
