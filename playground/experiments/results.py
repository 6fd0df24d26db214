"""Reading experiments back: the list, each conversation's run, the progress stored so far and
the per-condition summary.

The summary is computed from the database alone, so it is the same after a resume, a merge of
shard databases, or on another machine. Per condition, over its finished conversations:

- **turns per agent**: messages per agent per conversation (the icebreaker counts: it is its
  initiator's turn);
- **Gini**: the Gini coefficient of the participants' shares of a conversation's messages
  (0 = everyone spoke equally, towards 1 = one participant spoke), averaged over conversations;
- **silent steps**: steps at which nobody spoke (triggers fired minus messages posted by a step);
- **interruptions**: messages that took a turn allocated to someone else;
- **System-1 replies**: messages expressing a System-1 thought (Inner Thoughts only);
- **motivation**: mean motivation score of the thoughts that were expressed (Inner Thoughts
  only; baselines have no thoughts);
- **calls / tokens per message**: LLM chat calls and tokens over all messages;
- **ratings by method**: evaluations per rating method (``logprobs``, ``sampled``, ``parsed``,
  ``offline-heuristic``) and their mean score, so conditions or runs whose servers allowed
  different methods are not compared blindly;
- **failures**: conversations that failed (their error is in ``experiment_runs.error``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from playground import errors
from playground.experiments.progress import ConditionProgress, Progress


class ConditionSummary(BaseModel):
    condition: str
    conversations: int
    failed: int
    unfinished: int
    messages: float | None
    turns_per_agent: float | None
    gini: float | None
    silent_steps: float | None
    interruptions: float | None
    system1_replies: float | None
    motivation: float | None
    calls_per_message: float | None
    tokens_per_message: float | None
    #: Finished conversations without an AI agent: turns per agent and Gini are undefined there,
    #: so they are left out of those two means (not counted as 0).
    no_agents: int = 0
    #: Evaluations per rating method, and the mean score of each method's evaluations.
    methods: dict[str, int] = {}
    method_scores: dict[str, float] = {}


def _rows(db: sqlite_utils.Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = db.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def resolve(db: sqlite_utils.Database, text: str) -> str:
    """An experiment id from its id, a unique id prefix, or its unique name.

    Raises:
        PlaygroundError: no such experiment, or an ambiguous prefix or name.
    """
    for sql in (
        "SELECT id FROM experiments WHERE id = ?",
        "SELECT id FROM experiments WHERE name = ?",
        "SELECT id FROM experiments WHERE id LIKE ? || '%'",
    ):
        found = [r[0] for r in db.execute(sql, [text]).fetchall()]
        if len(found) == 1:
            return str(found[0])
        if len(found) > 1:
            raise errors.PlaygroundError(
                f"{text!r} matches several experiments ({', '.join(found)}); use the full id"
            )
    raise errors.PlaygroundError(f"no experiment {text!r} in this database")


def list_experiments(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Every experiment with its protocol and how many of its runs are in each state."""
    out = []
    for e in _rows(
        db, "SELECT id, name, created_at, config FROM experiments ORDER BY created_at", []
    ):
        config = json.loads(e["config"] or "{}")
        protocol = config.get("protocol", {})
        counts = dict(
            db.execute(
                "SELECT status, COUNT(*) FROM experiment_runs WHERE experiment_id = ? GROUP BY status",
                [e["id"]],
            ).fetchall()
        )
        conditions = protocol.get("conditions") or []
        planned = len(conditions) * int(protocol.get("conversations") or 0)
        out.append(
            {
                "id": e["id"],
                "name": e["name"],
                "created_at": e["created_at"],
                "conditions": conditions,
                "conversations": protocol.get("conversations"),
                "agents": protocol.get("agents"),
                "turns": protocol.get("turns"),
                "seed": protocol.get("seed"),
                "engine": protocol.get("engine"),
                "model": protocol.get("model"),
                "planned": planned,
                "finished": counts.get("finished", 0),
                "failed": counts.get("failed", 0),
                "interrupted": counts.get("interrupted", 0),
                "running": counts.get("running", 0),
            }
        )
    return out


def experiment_names(db: sqlite_utils.Database) -> list[tuple[str, str | None]]:
    """Every experiment as ``(id, name)``, newest first (for a picker)."""
    rows = db.execute("SELECT id, name FROM experiments ORDER BY created_at DESC").fetchall()
    return [(r[0], r[1]) for r in rows]


def stored_config(db: sqlite_utils.Database, experiment_id: str) -> str | None:
    """The JSON text of the config an experiment (exact id) was stored with; ``""`` when it has
    none, ``None`` when there is no such experiment."""
    row = db.execute("SELECT config FROM experiments WHERE id = ?", [experiment_id]).fetchone()
    return None if row is None else (row[0] or "")


def stored_progress(db: sqlite_utils.Database, experiment_id: str) -> Progress:
    """An experiment's progress as the database holds it (for one that is not running here):
    per condition its planned, finished and failed conversations; LLM calls and tokens of its
    sessions. Retries and errors are only counted while it runs."""
    protocol = json.loads(stored_config(db, experiment_id) or "{}").get("protocol", {})
    total = int(protocol.get("conversations") or 0)
    progress = Progress(experiment_id)
    for cond in protocol.get("conditions") or []:
        progress.conditions[cond] = ConditionProgress(total=total)
    # As the runner counts them: a finished run over a session that is gone (deleted from the
    # library) or did not finish is not done; Resume runs it again.
    for cond, status, n in db.execute(
        "SELECT r.condition, CASE WHEN r.status = 'finished' AND s.status IS NOT 'finished'"
        " THEN 'redo' ELSE r.status END AS st, COUNT(*) FROM experiment_runs r"
        " LEFT JOIN sessions s ON s.id = r.session_id WHERE r.experiment_id = ?"
        " GROUP BY r.condition, st",
        [experiment_id],
    ).fetchall():
        c = progress.conditions.setdefault(cond, ConditionProgress(total=total))
        if status == "finished":
            c.done += n
        elif status == "failed":
            c.failed += n
    calls, tokens = db.execute(
        "SELECT COALESCE(SUM(calls), 0), COALESCE(SUM(prompt_tokens + completion_tokens), 0)"
        " FROM sessions WHERE experiment_id = ?",
        [experiment_id],
    ).fetchone()
    progress.calls, progress.tokens = int(calls), int(tokens)
    return progress


def runs(db: sqlite_utils.Database, experiment: str) -> list[dict[str, Any]]:
    """Each (draw, condition) run: its session, status, attempts, error and message count."""
    return _rows(
        db,
        "SELECT r.draw, r.condition, r.status, r.session_id, r.attempts, r.error, r.updated_at,"
        " d.participants, d.initiator, d.icebreaker,"
        " (SELECT COUNT(*) FROM messages m WHERE m.session_id = r.session_id) AS messages"
        " FROM experiment_runs r LEFT JOIN experiment_draws d"
        " ON d.experiment_id = r.experiment_id AND d.draw = r.draw"
        " WHERE r.experiment_id = ? ORDER BY r.draw, r.condition",
        [experiment],
    )


def gini(counts: list[int]) -> float | None:
    """Gini coefficient of turn shares: ``Σᵢ Σⱼ |xᵢ − xⱼ| / (2 n² x̄)``; 0 when nobody spoke;
    None without anyone to share turns (undefined, not 0)."""
    n = len(counts)
    total = sum(counts)
    if n == 0:
        return None
    if total == 0:
        return 0.0
    diff = sum(abs(a - b) for a in counts for b in counts)
    return diff / (2 * n * n * (total / n))


def _mean(xs: list[float | None]) -> float | None:
    """The mean of the values present (None: undefined for that conversation, left out)."""
    present = [x for x in xs if x is not None]
    return sum(present) / len(present) if present else None


def summarise(db: sqlite_utils.Database, experiment: str) -> list[ConditionSummary]:
    """The per-condition summary of an experiment (see the module docstring).

    Raises:
        PlaygroundError: no such experiment.
    """
    experiment = resolve(db, experiment)
    config = json.loads(
        db.execute("SELECT config FROM experiments WHERE id = ?", [experiment]).fetchone()[0]
        or "{}"
    )
    conditions = list(config.get("protocol", {}).get("conditions") or [])
    status: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for cond, st, n in db.execute(
        "SELECT condition, status, COUNT(*) FROM experiment_runs WHERE experiment_id = ?"
        " GROUP BY condition, status",
        [experiment],
    ).fetchall():
        status[cond][st] = n
        if cond not in conditions:
            conditions.append(cond)
    sessions = _rows(
        db,
        "SELECT s.id, s.condition, s.calls, s.prompt_tokens + s.completion_tokens AS tokens"
        " FROM experiment_runs r JOIN sessions s ON s.id = r.session_id"
        " WHERE r.experiment_id = ? AND r.status = 'finished'",
        [experiment],
    )
    # Whole-experiment aggregates, a handful of queries whatever the number of sessions: the
    # Experiments view recomputes the summary each time a conversation starts or ends.
    finished = (
        "SELECT session_id FROM experiment_runs WHERE experiment_id = ? AND status = 'finished'"
    )

    def grouped(sql: str) -> dict[str, tuple[Any, ...]]:
        return {r[0]: tuple(r[1:]) for r in db.execute(sql.format(finished), [experiment])}

    agents: dict[str, list[str]] = defaultdict(list)
    for sid, name in db.execute(
        f"SELECT session_id, name FROM participants WHERE kind = 'ai' AND session_id IN ({finished})",
        [experiment],
    ):
        agents[sid].append(name)
    turns: dict[str, dict[str, int]] = defaultdict(dict)
    for sid, speaker, n in db.execute(
        f"SELECT session_id, speaker, COUNT(*) FROM messages WHERE session_id IN ({finished})"
        " GROUP BY session_id, speaker",
        [experiment],
    ):
        turns[sid][speaker] = n
    triggers = grouped(
        "SELECT session_id, COUNT(*) FROM events WHERE kind = 'trigger_fired'"
        " AND session_id IN ({}) GROUP BY session_id"
    )
    counts = grouped(
        "SELECT session_id, COALESCE(SUM(interruption), 0), COALESCE(SUM(system = 1), 0),"
        " SUM(COALESCE(origin, '') != 'icebreaker') FROM messages WHERE session_id IN ({})"
        " GROUP BY session_id"
    )
    motivation = grouped(
        "SELECT session_id, SUM(score), COUNT(score) FROM thoughts WHERE expressed_in IS NOT NULL"
        " AND score IS NOT NULL AND session_id IN ({}) GROUP BY session_id"
    )
    # Evaluations per rating method and condition: (count, sum of scores).
    by_method: dict[str, dict[str, list[float]]] = defaultdict(dict)
    condition_of = {s["id"]: s["condition"] for s in sessions}
    for sid, method, n, total in db.execute(
        f"SELECT session_id, method, COUNT(*), SUM(score) FROM evaluations"
        f" WHERE session_id IN ({finished}) GROUP BY session_id, method",
        [experiment],
    ):
        cell = by_method[condition_of.get(sid, "")].setdefault(str(method), [0.0, 0.0])
        cell[0] += n
        cell[1] += total or 0.0
    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    # Turns per agent and Gini per conversation: None without an AI agent (undefined).
    shares: dict[str, list[tuple[float | None, float | None]]] = defaultdict(list)
    for s in sessions:
        sid = s["id"]
        people = agents.get(sid, [])
        said = turns.get(sid, {})
        messages = sum(said.values())
        inter, sys1, by_step = counts.get(sid, (0, 0, 0))
        mot_sum, mot_n = motivation.get(sid, (0.0, 0))
        shares[s["condition"]].append(
            (messages / len(people) if people else None, gini([said.get(a, 0) for a in people]))
        )
        per[s["condition"]].append(
            {
                "messages": messages,
                "silent_steps": max(0, triggers.get(sid, (0,))[0] - by_step),
                "interruptions": inter,
                "system1": sys1,
                "motivation_sum": mot_sum,
                "motivation_n": mot_n,
                "calls": s["calls"] or 0,
                "tokens": s["tokens"] or 0,
            }
        )
    out = []
    for cond in conditions:
        rows = per.get(cond, [])
        turn_shares = shares.get(cond, [])
        msgs = sum(r["messages"] for r in rows)
        mot_n = sum(r["motivation_n"] for r in rows)
        st = status.get(cond, {})
        out.append(
            ConditionSummary(
                condition=cond,
                conversations=len(rows),
                failed=st.get("failed", 0),
                unfinished=st.get("interrupted", 0) + st.get("running", 0),
                messages=_mean([r["messages"] for r in rows]),
                turns_per_agent=_mean([t for t, _ in turn_shares]),
                gini=_mean([g for _, g in turn_shares]),
                silent_steps=_mean([r["silent_steps"] for r in rows]),
                interruptions=_mean([r["interruptions"] for r in rows]),
                system1_replies=_mean([r["system1"] for r in rows]),
                motivation=sum(r["motivation_sum"] for r in rows) / mot_n if mot_n else None,
                calls_per_message=sum(r["calls"] for r in rows) / msgs if msgs else None,
                tokens_per_message=sum(r["tokens"] for r in rows) / msgs if msgs else None,
                no_agents=sum(1 for t, _ in turn_shares if t is None),
                methods={m: int(c[0]) for m, c in sorted(by_method.get(cond, {}).items())},
                method_scores={
                    m: round(c[1] / c[0], 4)
                    for m, c in sorted(by_method.get(cond, {}).items())
                    if c[0]
                },
            )
        )
    return out


COLUMNS = [
    ("condition", "condition"),
    ("conversations", "done"),
    ("failed", "failed"),
    ("messages", "msgs/conv"),
    ("turns_per_agent", "turns/agent"),
    ("gini", "Gini"),
    ("silent_steps", "silent steps"),
    ("interruptions", "interrupt."),
    ("system1_replies", "System-1"),
    ("motivation", "motivation"),
    ("calls_per_message", "calls/msg"),
    ("tokens_per_message", "tokens/msg"),
]


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def format_summary(rows: list[ConditionSummary]) -> str:
    """A plain-text table, one row per condition; per-conversation means except where noted,
    and a note per condition whose conversations lacked a value (left out, not counted 0)."""
    table = [[label for _, label in COLUMNS]]
    table += [[_cell(getattr(r, key)) for key, _ in COLUMNS] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = []
    for n, row in enumerate(table):
        cells = [
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        if r.methods:
            parts = ", ".join(
                f"{m} {n} (mean score {r.method_scores.get(m, 0.0):.2f})"
                for m, n in r.methods.items()
            )
            lines.append(f"{r.condition} ratings by method: {parts}")
    for r in rows:
        if r.no_agents:
            lines.append(
                f"{r.condition}: {r.no_agents} of {r.conversations} conversations without an AI"
                " agent, left out of turns/agent and Gini"
            )
    return "\n".join(lines)
