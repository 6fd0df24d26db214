"""``playground study-report``: the analysis of human user studies run as study plans.

The report is built by :mod:`playground.report.study` (and, with ``--judge``, a judge model's
ratings by :mod:`playground.report.study_judge`); this module adds the command's flags and writes
the report as a table or JSON. It is a command of its own rather than a mode of ``playground
report``: it reads other tables (the study plans, their questionnaires and answers, people's
stated reasons), by plan rather than by experiment, and takes a judge model's flags, whose names
(``--judge``, ``--model``) ``report`` already uses for other things.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from playground import errors
from playground.cli import signals as interrupts
from playground.cli.flags import add_judge_flags, judge_settings

NO_OFFLINE_JUDGE = (
    "the offline engine has no judge: give --engine openai with --model and --base-url (or set"
    " OPENAI_API_KEY / OPENAI_BASE_URL) to have a model rate the inferences, or leave out --judge"
)
#: The judge's flags: given without --judge they would do nothing.
_JUDGE_ONLY = ("engine", "model", "base_url", "api_key", "concurrency")


def add_parser(sub: Any, default_db: str) -> None:
    """Add ``study-report`` to the subcommands ``sub``."""
    p = sub.add_parser(
        "study-report",
        help="the analysis of human user studies (study plans)",
        description="For one study plan, or several pooled: per condition, the questionnaire"
        " (n, median, mean; Friedman test within people), how often people named each agent's"
        " style correctly (exact binomial test against chance, 1/3), the favourite agents, and"
        " how close the agents' interpretation of a person's message came to the person's own"
        " reason for it (MiniLM cosine; with --judge also a judge model's 1-5 rating). Reads"
        " the database only; nothing is stored.",
    )
    p.add_argument("plans", nargs="*", metavar="PLAN_ID", help="plans (ids or unique prefixes)")
    p.add_argument("--all", action="store_true", help="every study plan in the database, pooled")
    p.add_argument("--db", default=default_db, help=f"session database (default {default_db})")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.add_argument(
        "--no-similarity",
        action="store_true",
        help="leave out the cosine similarities (no embedding model is loaded)",
    )
    g = p.add_argument_group("judge (with --judge)")
    g.add_argument(
        "--judge",
        action="store_true",
        help="also have a judge model rate 1-5 how well each interpretation matches the"
        " person's own reason (an unreadable answer counts as failed)",
    )
    add_judge_flags(g, engine_choices=False)


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``playground study-report``.

    Returns:
        0 with the report (also when some judge answers could not be read: they are counted as
        failed in it) or when the database has no study plan; 2 for bad input or an offline
        judge.

    Raises:
        PlaygroundError: no database at the path, an unknown plan, or the embedding model cannot
            be loaded.
        LLMError: the judge's server cannot be used.
    """
    if args.plans and args.all:
        print("study-report: give PLAN_IDs or --all, not both", file=err)
        return 2
    unused = [f"--{k.replace('_', '-')}" for k in _JUDGE_ONLY if getattr(args, k, None)]
    if unused and not args.judge:
        print(f"study-report: {', '.join(unused)} is for the judge: add --judge", file=err)
        return 2
    settings = None
    if args.judge:
        try:
            settings = judge_settings(args)
        except errors.SettingsError as exc:
            print(f"study-report: {exc}", file=err)
            return 2
        if settings.engine.engine == "offline":
            print(f"study-report: {NO_OFFLINE_JUDGE}", file=err)
            return 2
    from playground.report import study
    from playground.storage.database import open_for_reading

    path = Path(args.db)
    if not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    db = open_for_reading(path)
    try:
        known = study.plan_ids(db)
        if not known:
            print(f"no study plans in {path}: nothing to report", file=out)
            return 0
        if not args.plans and not args.all:
            print(
                "study-report: give PLAN_IDs or --all; the plans in the database are: "
                + ", ".join(known),
                file=err,
            )
            return 2
        plans = known if args.all else study.resolve_plans(db, args.plans)
        report = study.build_study_report(
            db, plans, embed=None if args.no_similarity else _embedder(err)
        )
    finally:
        db.close()
    if settings is not None and report.inference_items:
        judged: list[Any] = []
        code = interrupts.run_interruptible(_judge(report, settings, err, judged), err)
        if code or not judged:
            return code or 1
        report = judged[0]
    elif settings is not None:
        print("study-report: no message has both a stated reason and an interpretation:"
              " nothing for the judge", file=err)  # fmt: skip
    as_json = args.json or args.format == "json"
    text = study.to_json(report) if as_json else _table(report)
    out.write(text if text.endswith("\n") else text + "\n")
    return 0


def _table(report: Any) -> str:
    from playground.report.study_format import render_table

    return render_table(report)


def _embedder(err: TextIO) -> Any:
    """MiniLM's ``embed_sync``, loading the model on its first use (only when there is
    something to compare)."""

    def embed(texts: Any) -> Any:
        from playground.embedding.minilm import MiniLMEmbedder

        print("Loading the embedding model (for the similarities)…", file=err, flush=True)
        return MiniLMEmbedder().embed_sync(texts)

    return embed


async def _judge(report: Any, settings: Any, err: TextIO, into: list[Any]) -> int:
    """The report with the judge's ratings, appended to ``into`` (the event loop's runner
    returns an exit code)."""
    from playground import factory
    from playground.report.study_judge import judge_items, with_judge

    client = factory.make_chat_client(settings)
    try:
        items = report.inference_items
        print(f"Judging {len(items)} inferences with {client.model} at {client.where}…", file=err)
        await client.probe()  # a wrong URL or key fails once, clearly
        judged = await judge_items(client, items, concurrency=settings.llm.concurrency)
        print(f"LLM use: {client.usage.calls_text()}", file=err)
    finally:
        await client.close()
    into.append(with_judge(report, judged, client.model))
    return 0
