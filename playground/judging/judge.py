"""The automatic judge: a model rates sessions on the human form's 7 statements, and picks the more
natural conversation of each pair of a rating plan.

Scores. Every answer carries a short reason and a whole-number rating 1–7; the score is read from
the rating token's logprobs (as G-Eval and the paper's thought evaluation do), from sampled
ratings, or is the parsed integer (:mod:`playground.judging.scores`). The stored rating is the score
rounded half up, so the judge is one more rater with 1–7 answers in ``ratings``; ``judge_scores``
keeps the unrounded score, the reason and the method.

Failures are never filled in: an answer that cannot be read gets one corrective retry (the
client's), and a metric (or pair) still unreadable is left out and reported through ``on_skip``.
A later run asks again for what is missing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import sqlite_utils

from playground import errors
from playground.clock import SystemClock
from playground.judging import prompts
from playground.judging.blind import blind_messages, render_transcript
from playground.judging.scores import (
    Answer,
    matching,
    rating_distributions,
    round_half_up,
    score_of,
)
from playground.llm import rating
from playground.llm.client import ChatClient
from playground.rating.store import LIKERT_MAX, LIKERT_MIN, RatingStore
from playground.storage import SessionReader

log = logging.getLogger(__name__)
_CLOCK = SystemClock()

JudgeMode = Literal["per-metric", "all-at-once"]
JUDGE_MODES: tuple[JudgeMode, ...] = ("per-metric", "all-at-once")
#: The prefix of every judge's rater name (``judge:<model>``); other modules look for it.
RATER_PREFIX = "judge:"


@dataclass(frozen=True)
class JudgeScore:
    """One metric of one session as a judge rated it."""

    session_id: str
    rater: str
    metric: str
    score: float
    rating: int
    reason: str
    method: str
    model: str
    created_at: str


@dataclass(frozen=True)
class PairJudgement:
    """A judge's choice between two sessions (``first_id`` shown as A, ``second_id`` as B)."""

    rater: str
    first_id: str
    second_id: str
    chosen_id: str
    reason: str


def judge_rater(model: str) -> str:
    """The rater name a judge model is stored under: ``judge:<model>``."""
    return f"{RATER_PREFIX}{model}"


# -- reading back ------------------------------------------------------------------------------
def load_scores(db: sqlite_utils.Database, session_id: str, rater: str) -> list[JudgeScore]:
    """A judge's stored scores of a session, in the order of the rating form."""
    cur = db.execute(
        "SELECT session_id, rater, metric, score, rating, reason, method, model, created_at"
        " FROM judge_scores WHERE session_id = ? AND rater = ?",
        [session_id, rater],
    )
    rows = [JudgeScore(*r) for r in cur.fetchall()]
    order = list(prompts.METRICS)
    return sorted(rows, key=lambda s: order.index(s.metric) if s.metric in order else len(order))


def judged_metrics(db: sqlite_utils.Database, session_id: str, rater: str) -> set[str]:
    """The metrics of a session this judge has already scored."""
    return {s.metric for s in load_scores(db, session_id, rater)}


def _store(
    db: sqlite_utils.Database,
    sid: str,
    rater: str,
    model: str,
    answers: dict[str, Answer],
) -> None:
    store = RatingStore(db)
    now = _CLOCK.now_iso()
    with db.atomic():
        store.ensure_rater(rater)
        values: dict[str, int] = {}
        for metric, answer in answers.items():
            score, method = score_of(answer)
            values[metric] = round_half_up(score)
            db.execute(
                "INSERT INTO judge_scores (session_id, rater, metric, score, rating, reason,"
                " method, model, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (session_id, rater, metric) DO UPDATE SET score = excluded.score,"
                " rating = excluded.rating, reason = excluded.reason, method = excluded.method,"
                " model = excluded.model, created_at = excluded.created_at",
                [sid, rater, metric, score, values[metric], answer.reason.strip(), method,
                 model, now],
            )  # fmt: skip
        if values:
            store.rate_conversation(sid, rater, values)


# -- asking ------------------------------------------------------------------------------------
async def _ask_one(
    client: ChatClient, transcript: str, key: str, method: str = "auto", samples: int = 20
) -> Answer:
    """One statement. With logprobs, read from the answer's own rating token (the answer is a
    reason and a rating, ~50 tokens: one call); sampled, from a short final call after the
    answer (:mod:`playground.llm.rating`); parsed, the written rating."""
    how = rating.resolve(client, method)
    messages = prompts.metric_messages(transcript, prompts.METRICS[key])
    res = await client.chat_json(
        f"judge {key}",
        messages,
        prompts.MetricAnswer,
        logprobs=how == "logprobs",
        max_tokens=250,
    )
    parsed: prompts.MetricAnswer = res.parsed
    if how == "logprobs":
        found = rating_distributions(res.tokens)
        dist = matching(found[-1][1], parsed.rating, found[-1][2]) if found else None
        return Answer(parsed.reason, parsed.rating, dist)
    if how == "parsed":
        return Answer(parsed.reason, parsed.rating, None, "parsed")
    sampled = await rating.final_distribution(
        client, f"judge {key}", messages, res.text, "sampled", samples=samples,
        low=LIKERT_MIN, high=LIKERT_MAX, subject="your rating of the statement",
    )  # fmt: skip
    if sampled is None:
        return Answer(parsed.reason, parsed.rating, None, "parsed")
    return Answer(parsed.reason, parsed.rating, sampled[0], "sampled", sampled[2])


async def _ask_all(
    client: ChatClient, transcript: str, keys: list[str], method: str = "auto", samples: int = 20
) -> dict[str, Answer]:
    """All statements in one answer. With logprobs they are read from the answer's own rating
    tokens (one call); without, each statement's rating is sampled in a final call of its own."""
    how = rating.resolve(client, method)
    schema = prompts.metrics_answer(tuple(keys))
    messages = prompts.all_metrics_messages(transcript, [prompts.METRICS[k] for k in keys])
    res = await client.chat_json(
        "judge all metrics",
        messages,
        schema,
        logprobs=how == "logprobs",
        max_tokens=200 * len(keys),
    )
    if how == "sampled":
        out_sampled: dict[str, Answer] = {}
        for key in keys:
            asked: prompts.MetricAnswer = getattr(res.parsed, key)
            sampled = await rating.final_distribution(
                client, f"judge {key}", messages, res.text, "sampled", samples=samples,
                low=LIKERT_MIN, high=LIKERT_MAX,
                subject=f"your rating of statement {key!r}",
            )  # fmt: skip
            if sampled is None:
                out_sampled[key] = Answer(asked.reason, asked.rating, None, "parsed")
            else:
                out_sampled[key] = Answer(
                    asked.reason, asked.rating, sampled[0], "sampled", sampled[2]
                )
        return out_sampled
    by_key: dict[str, tuple[int, dict[int, float]]] = {}
    for named, written, found in rating_distributions(res.tokens):
        if named in keys and named not in by_key:
            by_key[named] = (written, found)
    out: dict[str, Answer] = {}
    for key in keys:
        item: prompts.MetricAnswer = getattr(res.parsed, key)
        got = by_key.get(key)
        dist = matching(got[0], item.rating, got[1]) if got else None
        out[key] = Answer(item.reason, item.rating, dist)
    return out


async def judge_session(
    db: sqlite_utils.Database,
    session_id: str,
    client: ChatClient,
    *,
    force: bool = False,
    mode: JudgeMode = "per-metric",
    on_skip: Callable[[str, str], None] | None = None,
    method: str = "auto",
    samples: int = 20,
) -> list[JudgeScore]:
    """Rate a session on the 7 conversation metrics and store the result as rater ``judge:<model>``.

    Idempotent: the metrics this judge has already scored are not asked again (a session fully
    judged costs no call) unless ``force``, which asks every metric again and replaces its rows.

    Args:
        db: the session database (written: ``raters``, ``judge_scores``, ``ratings``).
        session_id: a session id or unique prefix.
        client: the judge model.
        force: judge the metrics already scored again.
        mode: ``per-metric`` (one call per statement, the default) or ``all-at-once`` (one call
            for all the statements still to judge).
        on_skip: called with the metric and the reason when its answer could not be read even
            after the retry; that metric is not stored.
        method: how each rating's distribution is read (:mod:`playground.llm.rating`); stored
            as the score's ``method`` (``sampled:N`` with the sample count).
        samples: ratings sampled per statement with the sampled method.

    Returns:
        Every stored score of this judge for the session, in the rating form's order.

    Raises:
        SessionNotFound: no such session.
        PlaygroundError: the session has no messages, or an unknown mode.
        LLMError: the server cannot be used (unreachable, key refused, kept failing...).
    """
    if mode not in JUDGE_MODES:
        raise errors.PlaygroundError(
            f"unknown judge mode {mode!r} (expected {' or '.join(JUDGE_MODES)})"
        )
    sid = SessionReader(db).resolve(session_id)
    rater = judge_rater(client.model)
    done = set() if force else judged_metrics(db, sid, rater)
    todo = [k for k in prompts.METRICS if k not in done]
    if not todo:
        return load_scores(db, sid, rater)
    transcript = render_transcript(blind_messages(db, sid))

    def skipped(keys: list[str], exc: errors.LLMOutputError) -> None:
        for key in keys:
            log.warning("judge: %s of session %s not judged: %s", key, sid, exc)
            if on_skip is not None:
                on_skip(key, str(exc))

    answers: dict[str, Answer] = {}
    if mode == "per-metric":

        async def one(key: str) -> None:
            try:
                answers[key] = await _ask_one(client, transcript, key, method, samples)
            except errors.LLMOutputError as exc:
                skipped([key], exc)

        await asyncio.gather(*(one(k) for k in todo))
    else:
        try:
            answers = await _ask_all(client, transcript, todo, method, samples)
        except errors.LLMOutputError as exc:
            skipped(todo, exc)
    ordered = {k: answers[k] for k in todo if k in answers}
    _store(db, sid, rater, client.model, ordered)
    return load_scores(db, sid, rater)


# -- pairs -------------------------------------------------------------------------------------
def plan_pairs(db: sqlite_utils.Database, plan_id: int) -> list[tuple[str, str]]:
    """The distinct pairs of a pairwise plan, each in the order its first assignment shows them.

    Raises:
        PlaygroundError: no such plan, or the plan is not pairwise.
    """
    store = RatingStore(db)
    plan = store.plan(plan_id)
    if plan.kind != "pairwise":
        raise errors.PlaygroundError(
            f"rating plan {plan_id} ({plan.name}) rates single conversations, not pairs"
        )
    seen: set[frozenset[str]] = set()
    out: list[tuple[str, str]] = []
    for a in store.assignments(plan_id):
        if a.session_b is None:
            continue
        key = frozenset((a.session_a, a.session_b))
        if key not in seen:
            seen.add(key)
            out.append((a.session_a, a.session_b))
    return out


def load_preferences(
    db: sqlite_utils.Database, rater: str, pairs: Sequence[tuple[str, str]]
) -> list[PairJudgement]:
    """This judge's stored choices on the given pairs (either order), in the pairs' order."""
    out: list[PairJudgement] = []
    for a, b in pairs:
        row = db.execute(
            "SELECT first_id, second_id, chosen_id, reason FROM preferences WHERE rater = ?"
            " AND ((first_id = ? AND second_id = ?) OR (first_id = ? AND second_id = ?))"
            " ORDER BY id DESC LIMIT 1",
            [rater, a, b, b, a],
        ).fetchone()
        if row:
            out.append(PairJudgement(rater, str(row[0]), str(row[1]), str(row[2]), str(row[3])))
    return out


async def _choose(client: ChatClient, first: str, second: str) -> prompts.PairAnswer:
    res = await client.chat_json(
        "judge pair", prompts.pair_messages(first, second), prompts.PairAnswer, max_tokens=250
    )
    answer: prompts.PairAnswer = res.parsed
    return answer


async def judge_pairs(
    db: sqlite_utils.Database,
    plan_id: int,
    client: ChatClient,
    *,
    force: bool = False,
    swap: bool = False,
    on_skip: Callable[[str, str, str], None] | None = None,
) -> list[PairJudgement]:
    """Choose the more natural conversation of each pair of a pairwise rating plan; stored as
    ``preferences`` rows of rater ``judge:<model>``.

    Each distinct pair is judged once, shown in the order of its first assignment (A = the
    session the plan shows first). With ``swap`` it is asked in both orders: a choice that
    follows the position rather than the conversation (A both times, or B both times) is not
    stored but reported, as position bias.

    Args:
        db: the session database (written: ``raters``, ``preferences``).
        plan_id: a pairwise rating plan.
        client: the judge model.
        force: judge pairs already chosen by this judge again.
        swap: also ask with the two conversations swapped.
        on_skip: called with the two sessions and the reason for a pair left without a choice.

    Returns:
        Every stored choice of this judge on the plan's pairs.

    Raises:
        PlaygroundError: no such plan, a plan that is not pairwise, a session without messages.
        LLMError: the server cannot be used.
    """
    rater = judge_rater(client.model)
    pairs = plan_pairs(db, plan_id)
    done = set() if force else {frozenset((p.first_id, p.second_id)) for p in
                                load_preferences(db, rater, pairs)}  # fmt: skip
    todo = [(a, b) for a, b in pairs if frozenset((a, b)) not in done]
    if not todo:
        return load_preferences(db, rater, pairs)
    transcripts: dict[str, str] = {}
    for sid in dict.fromkeys(s for pair in todo for s in pair):
        transcripts[sid] = render_transcript(blind_messages(db, sid))
    store = RatingStore(db)
    store.ensure_rater(rater)

    def skip(a: str, b: str, why: str) -> None:
        log.warning("judge: pair %s / %s not judged: %s", a, b, why)
        if on_skip is not None:
            on_skip(a, b, why)

    async def one(a: str, b: str) -> None:
        try:
            first = await _choose(client, transcripts[a], transcripts[b])
            second = await _choose(client, transcripts[b], transcripts[a]) if swap else None
        except errors.LLMOutputError as exc:
            skip(a, b, str(exc))
            return
        chosen = a if first.choice == "A" else b
        reason = first.reason.strip()
        if second is not None:
            again = b if second.choice == "A" else a
            if again != chosen:
                skip(a, b, f"position bias: the judge chose {first.choice} in both orders")
                return
            reason = f"{reason}\n(swapped) {second.reason.strip()}"
        store.record_preference(rater, a, b, chosen, reason)

    await asyncio.gather(*(one(a, b) for a, b in todo))
    return load_preferences(db, rater, pairs)
