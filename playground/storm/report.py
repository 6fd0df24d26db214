"""The STORM report: per-dialogue metrics and the paper's Table 2, from the database (no Qt).

:func:`build_storm_report` reads ``storm_dialogues``, ``hidden_states``, ``storm_judgements``,
``messages`` and the profile snapshots, computes every dialogue's metrics
(:mod:`playground.storm.metrics`) and groups them by assistant model (and assistant kind),
uncertainty and profile access. The window draws its curves from the same object
(:attr:`DialogueRow.satisfaction`, :attr:`DialogueRow.clarity`, :attr:`GroupRow.curves`).
``playground report --storm`` prints it (:mod:`playground.storm.report_format`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import sqlite_utils
from pydantic import BaseModel, ConfigDict

from playground.storm import metrics as m
from playground.storm.dialogues import (
    DESIGN_FIELDS,
    StormDialogue,
    judges,
    load_dialogue,
    load_judgements,
    storm_sessions,
)
from playground.storm.metric_records import DialogueMetrics, GroupMetrics

#: Turns texts into unit vectors (e.g. MiniLM's ``embed_sync``), for goal progress.
EmbedFn = Callable[[Sequence[str]], np.ndarray]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class DialogueRow(_Record):
    """One dialogue: its design, its metrics and its curves."""

    session_id: str
    user: str
    status: str
    experiment_id: str | None = None
    profile_id: str = ""
    category: str = ""
    task: str = ""
    difficulty: int | None = None
    uncertainty: int | None = None
    profile_access: bool | None = None
    assistant: str = ""
    assistant_model: str = ""
    user_model: str = ""
    #: The judge whose labels gave Clarify (None: not judged by it).
    judge: str | None = None
    #: Turn pairs there are to judge (turns − 1).
    pairs: int = 0
    metrics: DialogueMetrics
    #: Satisfaction and clarity per user turn (the curves); None where the user's answer gave
    #: no readable value (a gap, never a number).
    satisfaction: list[float | None]
    clarity: list[float | None]
    #: Hidden states or a profile that could not be read back.
    problems: list[str] = []


class Curve(_Record):
    """A group's mean satisfaction and clarity per user turn over the dialogues that rated it
    (None: none did), how many dialogues reach the turn and how many of them rated each value."""

    satisfaction: list[float | None]
    clarity: list[float | None]
    n: list[int]
    satisfaction_n: list[int]
    clarity_n: list[int]


class GroupRow(_Record):
    """One row of Table 2: an assistant at an uncertainty, with and without profile access."""

    label: str
    assistant_model: str
    assistant: str
    uncertainty: int
    with_profile: GroupMetrics | None
    without_profile: GroupMetrics | None
    #: ``"with"`` / ``"without"`` → the group's mean curves.
    curves: dict[str, Curve]


class StormReport(_Record):
    """Everything ``playground report --storm`` shows, and the window's STORM view."""

    experiment: str | None
    options: dict[str, Any]
    #: The judge whose labels give Clarify, and every judge found with the dialogues it judged.
    judge: str | None
    judges: dict[str, int]
    clarify_method: str
    clarify_formula: str
    #: How goal progress was computed ("" when it was not).
    goal: str
    rows: list[GroupRow]
    dialogues: list[DialogueRow]
    methods: list[str]

    @property
    def empty(self) -> bool:
        return not self.dialogues


def group_label(assistant_model: str, assistant: str, uncertainty: int) -> str:
    """The row name of Table 2: ``model (40%)``, with the assistant kind unless plain."""
    kind = "" if assistant in ("", "plain") else f" · {assistant}"
    return f"{assistant_model}{kind} ({uncertainty}%)"


def _goal_shares(
    dialogues: Sequence[StormDialogue], embed: EmbedFn | None, threshold: float
) -> dict[str, list[float] | None]:
    """Each dialogue's goal shares, embedding every distinct text once."""
    out: dict[str, list[float] | None] = {d.session_id: None for d in dialogues}
    if embed is None:
        return out
    plans = []
    texts: dict[str, int] = {}
    for d in dialogues:
        criteria = [c for c in (d.profile.task.success_criteria if d.profile else []) if c.strip()]
        if not criteria or not d.turns:
            continue
        seen = [list(d.opening), *(list(t.replies) for t in d.turns[:-1])]
        for text in [*criteria, *(x for group in seen for x in group)]:
            texts.setdefault(text, len(texts))
        plans.append((d.session_id, criteria, seen))
    if not texts:
        return out
    vectors = np.asarray(embed(list(texts)), dtype=np.float64)
    for sid, criteria, seen in plans:
        out[sid] = m.goal_shares(
            [vectors[texts[c]] for c in criteria],
            [[vectors[texts[x]] for x in group] for group in seen],
            threshold,
        )
    return out


def _curve(rows: Sequence[DialogueRow]) -> Curve:
    longest = max((len(r.satisfaction) for r in rows), default=0)
    sat: list[float | None] = []
    clar: list[float | None] = []
    n: list[int] = []
    sat_n: list[int] = []
    clar_n: list[int] = []
    for t in range(longest):
        here = [r for r in rows if len(r.satisfaction) > t]
        n.append(len(here))
        for values, means, counts in (
            ([r.satisfaction[t] for r in here], sat, sat_n),
            ([r.clarity[t] for r in here], clar, clar_n),
        ):
            rated = [v for v in values if v is not None]
            means.append(float(np.mean(rated)) if rated else None)
            counts.append(len(rated))
    return Curve(satisfaction=sat, clarity=clar, n=n, satisfaction_n=sat_n, clarity_n=clar_n)


def build_storm_report(
    db: sqlite_utils.Database,
    *,
    experiment: str | None = None,
    session_ids: Sequence[str] | None = None,
    options: m.MetricOptions | None = None,
    judge: str | None = None,
    embed: EmbedFn | None = None,
) -> StormReport:
    """Compute the STORM report from the database.

    Args:
        db: an open session database.
        experiment: only the dialogues of this experiment (id, unique prefix or name).
        session_ids: only these sessions (full ids), combined with ``experiment``.
        options: weights, thresholds and methods (:class:`~playground.storm.metrics.MetricOptions`).
        judge: the judge whose labels give Clarify (default: the one that judged most dialogues).
        embed: texts → unit vectors, for goal progress (None: no goal progress; C's goal term
            counts 0 and the report says so).

    Raises:
        PlaygroundError: an unknown experiment.
    """
    o = options or m.MetricOptions()
    ids = storm_sessions(db, experiment)
    if session_ids is not None:
        wanted = set(session_ids)
        ids = [i for i in ids if i in wanted]
    found = judges(db, ids)
    chosen = judge or (min(found, key=lambda j: (-found[j], j)) if found else None)
    dialogues = [load_dialogue(db, sid) for sid in ids]
    shares = _goal_shares(dialogues, embed, o.goal_threshold)
    status = dict(db.execute("SELECT id, status FROM sessions").fetchall())
    rows: list[DialogueRow] = []
    for d in dialogues:
        judged = load_judgements(db, d.session_id, chosen) if chosen else []
        design = {k: v for k, v in (d.design or {}).items() if k in DESIGN_FIELDS}
        design.pop("user_name", None)
        rows.append(
            DialogueRow(
                session_id=d.session_id,
                user=d.user,
                status=str(status.get(d.session_id, "")),
                **design,
                judge=chosen if judged else None,
                pairs=max(0, len(d.turns) - 1),
                metrics=m.dialogue_metrics(
                    d.states, shares=shares[d.session_id], judgements=judged, options=o
                ),
                satisfaction=[h.rated_satisfaction for h in d.states],
                clarity=[h.rated_clarity for h in d.states],
                problems=list(d.problems),
            )
        )
    by_group: dict[tuple[str, str, int], dict[bool, list[DialogueRow]]] = defaultdict(
        lambda: {True: [], False: []}
    )
    for r in rows:
        if r.metrics.turns:
            key = (r.assistant_model, r.assistant, int(r.uncertainty or 0))
            by_group[key][bool(r.profile_access)].append(r)
    groups = []
    for (model, kind, unc), split in sorted(by_group.items()):
        groups.append(
            GroupRow(
                label=group_label(model, kind, unc),
                assistant_model=model,
                assistant=kind,
                uncertainty=unc,
                with_profile=m.group_metrics([r.metrics for r in split[True]], o)
                if split[True]
                else None,
                without_profile=m.group_metrics([r.metrics for r in split[False]], o)
                if split[False]
                else None,
                curves={
                    name: _curve(split[access])
                    for name, access in (("with", True), ("without", False))
                    if split[access]
                },
            )
        )
    goal = f"MiniLM cosine ≥ {o.goal_threshold:g}" if embed is not None else ""
    return StormReport(
        experiment=experiment, options={**asdict(o), "weights": list(o.weights)}, judge=chosen,
        judges=found, clarify_method=o.clarify_method,
        clarify_formula=m.CLARIFY_FORMULAS[o.clarify_method], goal=goal, rows=groups,
        dialogues=rows, methods=methods(o, chosen, goal),
    )  # fmt: skip


def methods(o: m.MetricOptions, judge: str | None, goal: str) -> list[str]:
    """The methods behind the figures, stated once under every rendering."""
    w1, w2, w3 = o.weights
    rate = (
        "share of the dialogues with a rated satisfaction whose"
        f" {'final (last rated)' if o.high_on == 'final' else 'average'} satisfaction"
        f" ≥ {o.high_threshold:g}"
        if o.rates == "dialogues"
        else f"mean share of the rated turns with satisfaction ≥ {o.high_threshold:g}, over the"
        " dialogues with a rated satisfaction"
    )
    improved = (
        "share of the dialogues with two rated turns or more whose last rated satisfaction"
        " exceeds their first rated one"
        if o.rates == "dialogues"
        else "mean share of the rated turns after the first rated one whose satisfaction exceeds"
        " it, over the dialogues with two rated turns or more"
    )
    return [
        "Average Satisfaction: mean over the dialogues with a rated satisfaction of each one's"
        " mean rated satisfaction (0–1)",
        f"High Satisfaction Rate: {rate}",
        f"Improved Satisfaction Rate: {improved}",
        f"Clarify: {m.CLARIFY_FORMULAS[o.clarify_method]} over the judge's clarity labels"
        f" (I improve, N not change, D decrease, P pairs), mean over the judged dialogues;"
        f" judge: {judge or 'none (no judge)'}",
        f"SSA = {o.ssa_alpha:g}·({o.ssa_lambda:g}·S_avg) + {o.ssa_beta:g}·Clarify (appendix"
        " B.1), from the row's Average Satisfaction and Clarify",
        f"C = {w1:g}·Δclarity + {w2:g}·Δsatisfaction + {w3:g}·g at each user turn where both"
        " were rated, the changes since the previous such turn;"
        + (
            f" g = change in the share of success criteria addressed ({goal})"
            if goal
            else " goal progress g not computed (counted 0)"
        ),
        "self-rated clarity: the Clarify formula over the simulated users' own clarity changes"
        f" between rated turns (|Δ| ≤ {o.self_tolerance:g} = not change); it is not a judge's"
        " Clarify",
        "Missing values: a satisfaction or clarity the simulated user's answer did not give"
        " (stored flagged, as a placeholder) is counted in no figure; each figure is over the"
        " dialogues that have it, and the tables say how many turns were unrated and how many"
        " dialogues each figure rests on",
    ]
