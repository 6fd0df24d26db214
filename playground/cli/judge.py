"""``playground judge``: a judge model rates sessions on the 7 conversation metrics, or picks the
more natural conversation of each pair of a rating plan (see :mod:`playground.judging.judge`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, TextIO

import sqlite_utils

from playground import errors
from playground.cli import progress as progress_cli
from playground.cli import signals as interrupts
from playground.cli.flag_ranges import ROW_ID
from playground.cli.flags import add_db_flags, add_judge_flags, judge_settings
from playground.settings import Settings
from playground.workers import run_workers

NO_OFFLINE_JUDGE = (
    "The offline engine has no judge: give --engine openai with --model and --base-url (or set"
    " OPENAI_API_KEY / OPENAI_BASE_URL) to have a model rate the sessions. No scores are invented."
)


def add_parsers(sub: Any, default_db: str, busy_timeout: float) -> None:
    """Add ``judge`` to the command line's subparsers."""
    p = sub.add_parser(
        "judge",
        help="a judge model rates sessions on the 7 metrics, or the pairs of a rating plan",
        description="A judge model reads each conversation blind (speaker names and messages, as a"
        " blind human rater sees it) and rates it 1-7 on the 7 statements of the human rating"
        " form, with a short reason each; with logprobs the score is the probability-weighted"
        " rating. With --plan of a pairwise plan it picks the more natural conversation of each"
        " pair. Stored as rater judge:<model>; what is already judged is not asked again unless"
        " --force.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="sessions (ids or unique prefixes)")
    p.add_argument("--experiment", help="every finished session of this experiment")
    p.add_argument("--plan", type=ROW_ID, metavar="ID", help="a rating plan: its pairs or sessions")
    add_judge_flags(p, engine_choices=False)
    p.add_argument(
        "--mode",
        choices=["per-metric", "all-at-once"],
        default="per-metric",
        help="one call per statement (default) or one call for all 7",
    )
    p.add_argument(
        "--swap",
        action="store_true",
        help="pairs: also ask with A and B swapped; a choice that follows the position is not stored",
    )
    p.add_argument("--force", action="store_true", help="judge what is already judged again")
    add_db_flags(p, default_db, busy_timeout)
    progress_cli.add_flag(p)


@dataclass
class _Tally:
    sessions: int = 0
    skipped: int = 0
    metrics: int = 0
    methods: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    pairs: int = 0
    pairs_skipped: int = 0


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``playground judge`` (its own event loop; Ctrl-C stops it cleanly).

    Returns:
        0 when everything asked was judged; 1 when some metric or pair could not be judged (a
        rerun asks again) or the server could not be used; 2 with the offline engine or bad input.

    Raises:
        LLMError: the judge's server cannot be used (the command line prints it in one line).
    """
    try:
        settings = judge_settings(args)
    except errors.SettingsError as exc:
        print(f"judge: {exc}", file=err)
        return 2
    if settings.engine.engine == "offline":
        print(f"judge: {NO_OFFLINE_JUDGE}", file=err)
        return 2
    given = sum(bool(x) for x in (args.ids, args.experiment, args.plan is not None))
    if given != 1:
        print("judge: give session IDs, --experiment ID or --plan ID (one of them)", file=err)
        return 2
    if args.concurrency is not None and args.concurrency < 1:
        print(f"judge: --concurrency must be at least 1 (got {args.concurrency})", file=err)
        return 2
    return interrupts.run_interruptible(run(args, settings, out, err), err)


def _targets(db: sqlite_utils.Database, args: argparse.Namespace) -> tuple[list[str], int | None]:
    """The sessions to rate and the pairwise plan to judge (either may be empty).

    Raises:
        PlaygroundError: an unknown session, experiment or plan; nothing to judge.
    """
    from playground.experiments import results as experiment_report
    from playground.rating.store import RatingStore
    from playground.storage import SessionReader

    if args.plan is not None:
        store = RatingStore(db)
        plan = store.plan(args.plan)
        if plan.kind == "pairwise":
            return [], plan.id
        ids = list(dict.fromkeys(a.session_a for a in store.assignments(plan.id)))
        return ids, None
    if args.experiment:
        exp = experiment_report.resolve(db, args.experiment)
        rows = db.execute(
            "SELECT id FROM sessions WHERE experiment_id = ? AND status = 'finished'"
            " ORDER BY created_at, id",
            [exp],
        ).fetchall()
        if not rows:
            raise errors.PlaygroundError(f"experiment {exp} has no finished sessions to judge")
        return [str(r[0]) for r in rows], None
    reader = SessionReader(db)
    return list(dict.fromkeys(reader.resolve(i) for i in args.ids)), None


async def run(args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO) -> int:
    """The command's work (see :func:`cli`)."""
    # The model client (openai and its HTTP libraries) loads here, not when the command line
    # builds its parser: commands that never call a model start without it.
    from playground import factory
    from playground.llm import rating
    from playground.storage.database import open_database

    try:
        db = open_database(args.db, create=False, busy_timeout=args.busy_timeout)
    except errors.PlaygroundError as exc:
        print(f"judge: {exc}", file=err)
        return 2
    try:
        try:
            ids, plan_id = _targets(db, args)
            client = factory.make_chat_client(settings)
        except errors.PlaygroundError as exc:
            print(f"judge: {exc}", file=err)
            return 2
        tally = _Tally()
        try:
            print(f"Judging with {client.model} at {client.where}…", file=err)
            if args.force or _pending(db, ids, plan_id, client.model):
                await client.probe()  # a wrong URL or key fails once, clearly
                how = rating.resolve(client, settings.engine.rating_method)
                if how != "logprobs":
                    print(
                        f"(ratings: {how}"
                        + (
                            f", {settings.engine.rating_samples} samples each"
                            if how == "sampled"
                            else ""
                        )
                        + (
                            "; the server gives no logprobs"
                            if not client.logprobs_supported
                            else ""
                        )
                        + ")",
                        file=err,
                    )
            if ids:
                with progress_cli.ProgressBar(err, enabled=not args.no_progress) as bar:
                    await _sessions(db, ids, client, args, settings, tally, out, bar)
            if plan_id is not None:
                await _pairs(db, plan_id, client, args, tally, out)
            _summary(tally, client, ids, plan_id, out)
            print(f"LLM use: {client.usage.calls_text()}", file=err)
        finally:
            await client.close()
    finally:
        db.close()
    return 1 if tally.failures else 0


def _pending(db: sqlite_utils.Database, ids: list[str], plan_id: int | None, model: str) -> bool:
    """Whether anything is left to judge (else the command asks the server nothing at all)."""
    from playground.judging import judge
    from playground.judging.prompts import METRICS

    rater = judge.judge_rater(model)
    if any(len(judge.judged_metrics(db, sid, rater)) < len(METRICS) for sid in ids):
        return True
    if plan_id is None:
        return False
    pairs = judge.plan_pairs(db, plan_id)
    return len(judge.load_preferences(db, rater, pairs)) < len(pairs)


async def _sessions(
    db: sqlite_utils.Database,
    ids: list[str],
    client: Any,
    args: argparse.Namespace,
    settings: Settings,
    tally: _Tally,
    out: TextIO,
    bar: progress_cli.ProgressBar,
) -> None:
    from playground.judging import judge
    from playground.judging.prompts import METRICS

    rater = judge.judge_rater(client.model)
    queue = iter(enumerate(ids, start=1))
    finished = 0

    async def judge_one(n: int, sid: str) -> None:
        head = f"[{n}/{len(ids)}] {sid}"
        if not args.force and len(judge.judged_metrics(db, sid, rater)) == len(METRICS):
            tally.skipped += 1
            print(f"{head}: already judged by {rater} (skipped)", file=out, flush=True)
            return
        missed: list[str] = []

        def skip(metric: str, why: str, into: list[str] = missed, sid: str = sid) -> None:
            into.append(metric)
            tally.failures.append(f"{sid} {metric}: {why}")

        try:
            scores = await judge.judge_session(
                db,
                sid,
                client,
                force=args.force,
                mode=args.mode,
                on_skip=skip,
                method=settings.engine.rating_method,
                samples=settings.engine.rating_samples,
            )
        except errors.LLMError:
            raise
        except errors.PlaygroundError as exc:
            tally.failures.append(f"{sid}: {exc}")
            print(f"{head}: not judged: {exc}", file=out, flush=True)
            return
        tally.sessions += 1
        tally.metrics += len(scores)
        counts = _methods(scores)
        for k, v in counts.items():
            tally.methods[k] = tally.methods.get(k, 0) + v
        methods = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
        line = f"{head}: {len(scores)} of {len(METRICS)} metrics ({methods})"
        if missed:
            line += f"; not judged: {', '.join(missed)} (unreadable answer; a rerun asks again)"
        print(line, file=out, flush=True)

    async def worker() -> None:
        nonlocal finished
        for n, sid in queue:
            await judge_one(n, sid)
            finished += 1
            failed = f"{len(tally.failures)} failures" if tally.failures else ""
            bar.advance("sessions judged", finished, len(ids), failed)

    await run_workers(worker, min(settings.llm.concurrency, len(ids)))


def _methods(scores: Any) -> dict[str, int]:
    """How many scores came by each method."""
    out: dict[str, int] = {}
    for s in scores:
        out[s.method] = out.get(s.method, 0) + 1
    return out


async def _pairs(
    db: sqlite_utils.Database,
    plan_id: int,
    client: Any,
    args: argparse.Namespace,
    tally: _Tally,
    out: TextIO,
) -> None:
    from playground.judging import judge

    pairs = judge.plan_pairs(db, plan_id)
    before = len(judge.load_preferences(db, judge.judge_rater(client.model), pairs))

    def skip(a: str, b: str, why: str) -> None:
        tally.pairs_skipped += 1
        tally.failures.append(f"{a} vs {b}: {why}")
        print(f"{a} vs {b}: no choice stored: {why}", file=out, flush=True)

    got = await judge.judge_pairs(
        db, plan_id, client, force=args.force, swap=args.swap, on_skip=skip
    )
    tally.pairs = len(got)
    already = 0 if args.force else before
    for p in got:
        other = p.second_id if p.chosen_id == p.first_id else p.first_id
        print(f"{p.chosen_id} preferred to {other}", file=out, flush=True)
    if already:
        print(f"({already} of {len(pairs)} pairs were already judged)", file=out)


def _summary(tally: _Tally, client: Any, ids: list[str], plan_id: int | None, out: TextIO) -> None:
    from playground.judging.judge import judge_rater

    rater = judge_rater(client.model)
    if ids:
        methods = ", ".join(f"{k} {v}" for k, v in sorted(tally.methods.items())) or "none"
        print(
            f"Judged {tally.sessions} of {len(ids)} sessions as {rater}"
            f" ({tally.skipped} already judged): {tally.metrics} metric scores, method: {methods}",
            file=out,
        )
    if plan_id is not None:
        print(
            f"Rating plan {plan_id}: {tally.pairs} pairs with a choice by {rater},"
            f" {tally.pairs_skipped} without",
            file=out,
        )
    if tally.failures:
        print(f"Failures ({len(tally.failures)}), not stored; a rerun asks again:", file=out)
        for line in tally.failures:
            print(f"  {line}", file=out)
    else:
        print("Failures: none", file=out)
