"""The analysis of human user studies run as study plans, computed from the database (no Qt).

A study plan runs several conversations for the same group of people, each with one agent in one
proactivity condition (:data:`playground.rating.user_study.STYLES`). For one plan, or several
pooled, the report gives per condition: the questionnaire's statements (n, median, mean, and a
Friedman test within people), how often people named each agent's style correctly (against
chance, 1/3), whose agent was the favourite, and how close the agents' interpretation of a
person's message came to the reason the person gave for it themselves (MiniLM cosine, and a judge
model's 1–5 rating: :func:`playground.report.study_judge.with_judge`). Methods:
:data:`~playground.report.study_model.STUDY_METHODS`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sqlite_utils

from playground import errors
from playground.embedding.base import normalise_rows
from playground.rating.user_study import STYLES, USER_STUDY_METRICS
from playground.report.study_model import (
    STUDY_METHODS,
    FavouriteCount,
    FriedmanResult,
    InferenceItem,
    InferenceSummary,
    LeftOut,
    PlanSummary,
    StatementSummary,
    StudyCounts,
    StudyReport,
    StyleMatch,
)
from playground.storage import study_rows
from playground.storage.database import snapshot

#: Texts → their embeddings, one row each (e.g. ``MiniLMEmbedder().embed_sync``).
EmbedFn = Callable[[Sequence[str]], Any]
#: The chance of naming an agent's style by guessing: one of the three styles.
CHANCE = 1 / 3
#: Fewer people who rated every condition give no Friedman test.
MIN_FRIEDMAN = 3
ALL = "all"


def _float(x: Any) -> float | None:
    value = float(x)
    return None if math.isnan(value) else value


def plan_ids(db: sqlite_utils.Database) -> list[str]:
    """Every study plan's id, oldest first."""
    return [str(p["id"]) for p in study_rows.plans(db)]


def resolve_plans(db: sqlite_utils.Database, given: Sequence[str]) -> list[str]:
    """Plan ids from ids or unique id prefixes, in the order given, each once.

    Raises:
        PlaygroundError: no plan, or several, start with one of them.
    """
    known = plan_ids(db)
    out: list[str] = []
    for g in given:
        found = [p for p in known if p == g] or [p for p in known if p.startswith(g)]
        if not found:
            raise errors.PlaygroundError(f"no study plan {g!r} in the database")
        if len(found) > 1:
            raise errors.PlaygroundError(
                f"{g!r} is the start of {len(found)} study plans ({', '.join(found[:5])}):"
                " give more of the id"
            )
        if found[0] not in out:
            out.append(found[0])
    return out


def order_conditions(conditions: set[str]) -> list[str]:
    """The study's conditions in the paper's order, then any others alphabetically."""
    styles = [s.key for s in STYLES]
    return [k for k in styles if k in conditions] + sorted(conditions - set(styles))


def build_study_report(
    db: sqlite_utils.Database, plans: Sequence[str], *, embed: EmbedFn | None = None
) -> StudyReport:
    """The report over ``plans`` (ids, see :func:`resolve_plans`), pooled.

    Args:
        db: an open session database.
        plans: the plans to pool (one for a single plan's report).
        embed: computes the cosine similarities of the inference part; None leaves them out.
    """
    with snapshot(db):
        data = [_PlanData.load(db, p) for p in plans]
    notes = [n for d in data for n in d.notes]
    conditions = order_conditions({s["condition"] for d in data for s in d.steps})
    questionnaire, friedman = _questionnaire(data, conditions)
    matches, confusion, favourites = _final_answers(data, conditions, notes)
    items = [i for d in data for i in d.items]
    if embed is not None and items:
        items = with_cosines(items, embed)
    inference = _inference(data, items, conditions)
    people = {(d.plan["id"], p) for d in data for p in d.people}
    counts = StudyCounts(
        plans=len(data), conversations=sum(1 for d in data for s in d.steps if s["session_id"]),
        people=len(people), questionnaire_ratings=sum(len(d.ratings) for d in data),
        style_matches=matches[-1].n if matches else 0,
        favourites=sum(f.count for f in favourites), inference_pairs=len(items),
    )  # fmt: skip
    return StudyReport(
        plans=[d.summary() for d in data], conditions=conditions, counts=counts,
        questionnaire=questionnaire, friedman=friedman, style_matching=matches,
        confusion=confusion, favourites=favourites, inference=inference, inference_items=items,
        inference_left_out=[x for d in data for x in d.left_out], similarity=embed is not None, notes=notes, methods=STUDY_METHODS,
    )  # fmt: skip


class _PlanData:
    """What one plan's report needs, read in one go."""

    def __init__(self, plan: dict[str, Any], steps: list[dict[str, Any]]) -> None:
        self.plan = plan
        self.steps = steps
        #: session id → condition, for the steps that were run.
        self.condition = {s["session_id"]: s["condition"] for s in steps if s["session_id"]}
        #: (person, session, statement, value)
        self.ratings: list[tuple[str, str, str, int]] = []
        self.answers: list[dict[str, Any]] = []
        self.agents: dict[str, str] = {}
        self.ambiguous: set[str] = set()
        self.items: list[InferenceItem] = []
        self.left_out: list[LeftOut] = []
        #: condition → [human messages, with their author's reason]
        self.messages: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.people: set[str] = set()
        self.notes: list[str] = []

    @classmethod
    def load(cls, db: sqlite_utils.Database, plan_id: str) -> _PlanData:
        plan = study_rows.plan(db, plan_id)
        if plan is None:
            raise errors.PlaygroundError(f"no study plan {plan_id!r} in the database")
        d = cls(plan, study_rows.plan_steps(db, plan_id))
        metrics = {m.key for m in USER_STUDY_METRICS}
        for sid in d.condition:
            for r in study_rows.questionnaire(db, sid):
                if r["item"] in metrics:
                    d.ratings.append((r["author"], sid, r["item"], int(r["value"])))
        d.answers = study_rows.plan_answers(db, plan_id)
        d._agents(db)
        for sid, cond in d.condition.items():
            d._inference(db, sid, cond)
        d.people = (
            {p for p, *_ in d.ratings}
            | {a["person"] for a in d.answers}
            | {i.person for i in d.items}
        )
        d._notes()
        return d

    def _agents(self, db: sqlite_utils.Database) -> None:
        """Agent name → the condition of its conversation: the step's persona, and the names
        (and persona ids) of the agents of the step's session."""
        seen: dict[str, set[str]] = defaultdict(set)
        for s in self.steps:
            seen[s["persona"]].add(s["condition"])
            if s["session_id"]:
                for name, persona_id in db.execute(
                    "SELECT name, persona_id FROM participants WHERE session_id = ?"
                    " AND kind != 'human'",
                    [s["session_id"]],
                ):
                    for key in (name, persona_id):
                        if key:
                            seen[key].add(s["condition"])
        self.agents = {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}
        self.ambiguous = {k for k, v in seen.items() if len(v) > 1}

    def _inference(self, db: sqlite_utils.Database, sid: str, cond: str) -> None:
        """The session's human messages with their author's own reason and the interpretation."""
        messages = db.execute(
            "SELECT id, speaker, text, interpretation FROM messages WHERE session_id = ?"
            " AND speaker_kind = 'human' ORDER BY id",
            [sid],
        ).fetchall()
        notes: dict[int, list[str]] = defaultdict(list)
        for mid, text in db.execute(
            "SELECT a.message_id, a.text FROM annotations a JOIN messages m"
            " ON m.session_id = a.session_id AND m.id = a.message_id"
            " WHERE a.session_id = ? AND a.kind = 'reason' AND a.author = m.speaker"
            " ORDER BY a.id",
            [sid],
        ):
            if text.strip():
                notes[int(mid)].append(text.strip())
        speakers = {int(mid): speaker for mid, speaker, *_ in messages}
        retro = {
            int(r["message_id"]): r
            for r in study_rows.retrospective(db, sid)
            if speakers.get(int(r["message_id"])) == r["author"]
        }
        counts = self.messages[cond]
        [(last,)] = db.execute(
            "SELECT MAX(id) FROM messages WHERE session_id = ? AND TRIM(interpretation) != ''",
            [sid],
        ).fetchall()
        for mid, speaker, text, interpretation in messages:
            counts[0] += 1
            reason, source = _stated_reason(notes.get(int(mid), []), retro.get(int(mid)))
            if not reason:
                continue
            counts[1] += 1
            if interpretation is None or not interpretation.strip():
                self.left_out.append(
                    LeftOut(
                        plan_id=self.plan["id"], session_id=sid, message_id=int(mid),
                        condition=cond, person=speaker,
                        why="skipped" if last is not None and last > mid else "ended",
                    )
                )  # fmt: skip
                continue
            self.items.append(
                InferenceItem(
                    plan_id=self.plan["id"], session_id=sid, message_id=int(mid), condition=cond,
                    person=speaker, message=text, interpretation=interpretation.strip(),
                    reason=reason, source=source,
                )
            )  # fmt: skip

    def _notes(self) -> None:
        pid = self.plan["id"]
        if not self.steps:
            self.notes.append(f"plan {pid} has no conversations")
        elif not self.condition:
            self.notes.append(f"plan {pid}: no conversation has been run yet")
        if self.condition and not self.ratings and not self.answers:
            self.notes.append(f"plan {pid} has no answers yet")
        else:
            if self.condition and not self.ratings:
                self.notes.append(f"plan {pid} has no questionnaire answers yet")
            if self.condition and not self.answers:
                self.notes.append(f"plan {pid} has no end-of-study answers yet")
        for name in sorted(self.ambiguous):
            self.notes.append(
                f"plan {pid}: agent {name!r} talked in more than one condition; its style"
                " matches and favourite votes are left out"
            )

    def summary(self) -> PlanSummary:
        p = self.plan
        return PlanSummary(
            id=p["id"], created_at=p["created_at"], status=p["status"], humans=p["humans"],
            conversations=len(self.steps), run=len(self.condition),
            conditions=[s["condition"] for s in self.steps], people=sorted(self.people),
            questionnaires=len({(person, sid) for person, sid, *_ in self.ratings}),
            final_answers=len({a["person"] for a in self.answers}),
        )  # fmt: skip


def _stated_reason(notes: list[str], retro: dict[str, Any] | None) -> tuple[str, str]:
    """The person's own reason for their message, and where it came from: their private reason
    notes (several joined), else their retrospective ``why``, else its ``thinking``."""
    if notes:
        return " ".join(notes), "reason"
    for field in ("why", "thinking"):
        text = str((retro or {}).get(field) or "").strip()
        if text:
            return text, field
    return "", ""


def _summary(metric: str, condition: str, values: list[int]) -> StatementSummary:
    if not values:
        return StatementSummary(metric=metric, condition=condition, n=0, median=None, mean=None)
    return StatementSummary(
        metric=metric, condition=condition, n=len(values), median=float(np.median(values)),
        mean=float(np.mean(values)),
    )  # fmt: skip


def friedman(
    metric: str, table: dict[Any, dict[str, float]], conditions: list[str]
) -> FriedmanResult:
    """Friedman's test of ``{person: {condition: value}}`` over the people who have a value in
    every condition."""
    from scipy import stats

    k = len(conditions)
    people = sorted((p for p, row in table.items() if all(c in row for c in conditions)), key=str)
    n = len(people)

    def none(note: str) -> FriedmanResult:
        return FriedmanResult(metric=metric, n=n, k=k, statistic=None, p=None, kendall_w=None,
                              note=note)  # fmt: skip

    if k < 3:
        return none(f"too few conditions ({k}): Friedman's test compares 3 or more")
    if n < MIN_FRIEDMAN:
        return none(f"too few people rated all {k} conditions ({n}; {MIN_FRIEDMAN} needed)")
    columns = [[table[p][c] for p in people] for c in conditions]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all ties: 0/0, reported as None
        res = stats.friedmanchisquare(*columns)
    chi2, p = _float(res.statistic), _float(res.pvalue)
    if chi2 is None:
        return none("every person gave every condition the same rating")
    return FriedmanResult(
        metric=metric, n=n, k=k, statistic=chi2, p=p, kendall_w=chi2 / (n * (k - 1))
    )


def _questionnaire(
    data: list[_PlanData], conditions: list[str]
) -> tuple[list[StatementSummary], list[FriedmanResult]]:
    values: dict[tuple[str, str], list[int]] = defaultdict(list)
    per_person: dict[str, dict[tuple[str, str], dict[str, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for d in data:
        for person, sid, metric, value in d.ratings:
            cond = d.condition[sid]
            values[(metric, cond)].append(value)
            per_person[metric][(d.plan["id"], person)][cond].append(value)
    if not any(values.values()):
        return [], []
    summaries = [
        _summary(m.key, c, values[(m.key, c)]) for m in USER_STUDY_METRICS for c in conditions
    ]
    tests = []
    for m in USER_STUDY_METRICS:
        table = {
            who: {c: float(np.mean(v)) for c, v in row.items()}
            for who, row in per_person[m.key].items()
        }
        tests.append(friedman(m.key, table, conditions))
    return summaries, tests


def style_match(condition: str, correct: int, n: int) -> StyleMatch:
    """``correct`` of ``n`` styles named right, tested against chance (one-sided, exact)."""
    from scipy import stats

    if n == 0:
        return StyleMatch(condition=condition, n=0, correct=0, accuracy=None, p=None)
    p = float(stats.binomtest(correct, n, CHANCE, alternative="greater").pvalue)
    return StyleMatch(condition=condition, n=n, correct=correct, accuracy=correct / n, p=p)


def _final_answers(
    data: list[_PlanData], conditions: list[str], notes: list[str]
) -> tuple[list[StyleMatch], dict[str, dict[str, int]], list[FavouriteCount]]:
    tally: dict[str, list[int]] = {c: [0, 0] for c in conditions}
    confusion: dict[str, dict[str, int]] = {c: {} for c in conditions}
    votes: Counter[str] = Counter()
    for d in data:
        pid = d.plan["id"]
        for a in d.answers:
            item, value, person = a["item"], a["value"], a["person"]
            agent = item.removeprefix("match:") if item.startswith("match:") else value
            if not item.startswith("match:") and item != "favourite":
                continue
            if agent in d.ambiguous:
                continue
            truth = d.agents.get(agent)
            if truth is None:
                what = "matched a style to" if item.startswith("match:") else "chose as favourite"
                notes.append(
                    f"plan {pid}: {person} {what} {agent!r}, not an agent of the plan (left out)"
                )
                continue
            if item == "favourite":
                votes[truth] += 1
                continue
            row = tally.setdefault(truth, [0, 0])
            row[0] += int(value == truth)
            row[1] += 1
            chosen = confusion.setdefault(truth, {})
            chosen[value] = chosen.get(value, 0) + 1
    matches = [style_match(c, k, n) for c, (k, n) in tally.items()]
    if any(m.n for m in matches):
        total = sum(m.n for m in matches)
        matches.append(style_match(ALL, sum(m.correct for m in matches), total))
    else:
        matches, confusion = [], {}
    n_votes = sum(votes.values())
    favourites = (
        [
            FavouriteCount(condition=c, count=votes[c], share=votes[c] / n_votes)
            for c in order_conditions(set(conditions) | set(votes))
        ]
        if n_votes
        else []
    )
    return matches, confusion, favourites


def with_cosines(items: list[InferenceItem], embed: EmbedFn) -> list[InferenceItem]:
    """The items with the cosine of each interpretation and its reason (one embedding call)."""
    texts = [i.interpretation for i in items] + [i.reason for i in items]
    vectors = normalise_rows(np.asarray(embed(texts), dtype=np.float32))
    a, b = vectors[: len(items)], vectors[len(items) :]
    cosines = np.sum(a * b, axis=1)
    return [i.model_copy(update={"cosine": float(c)}) for i, c in zip(items, cosines, strict=True)]


def inference_row(
    condition: str,
    items: list[InferenceItem],
    human: int,
    with_reason: int,
    left_out: Sequence[LeftOut] = (),
) -> InferenceSummary:
    """One row of the inference table: the items of one condition (or all), and the messages
    with a reason it leaves out."""
    cos = [i.cosine for i in items if i.cosine is not None]
    judged = [i.judge_rating for i in items if i.judge_rating is not None]
    return InferenceSummary(
        condition=condition, human_messages=human, with_reason=with_reason, n=len(items),
        mean_cosine=float(np.mean(cos)) if cos else None,
        sd_cosine=float(np.std(cos, ddof=1)) if len(cos) > 1 else None,
        judged=len(judged), mean_judge=float(np.mean(judged)) if judged else None,
        judge_failed=sum(1 for i in items if i.judge_failed),
        left_out=dict(Counter(x.why for x in left_out)),
    )  # fmt: skip


def _inference(
    data: list[_PlanData], items: list[InferenceItem], conditions: list[str]
) -> list[InferenceSummary]:
    human: Counter[str] = Counter()
    reasoned: Counter[str] = Counter()
    for d in data:
        for cond, (n, r) in d.messages.items():
            human[cond] += n
            reasoned[cond] += r
    if not sum(human.values()):
        return []
    left_out = [x for d in data for x in d.left_out]
    rows = [
        inference_row(
            c,
            [i for i in items if i.condition == c],
            human[c],
            reasoned[c],
            [x for x in left_out if x.condition == c],
        )
        for c in conditions
    ]
    everything = inference_row(ALL, items, sum(human.values()), sum(reasoned.values()), left_out)
    return [*rows, everything]


def to_json(report: StudyReport) -> str:
    """The report as indented JSON."""
    return report.model_dump_json(indent=2)
