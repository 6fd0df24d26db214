"""``playground storm-judge``: a judge model's turn-pair analysis of STORM dialogues, stored in
``storm_judgements`` for Clarify (see :mod:`playground.storm.judge`)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from playground import errors
from playground.cli import signals as interrupts
from playground.cli.flags import add_db_flags, add_judge_flags, judge_settings
from playground.settings import Settings
from playground.workers import run_workers

NO_OFFLINE_JUDGE = (
    "there is no offline judge: Clarify comes from a judge model's turn-pair analysis. Use an"
    " OpenAI-compatible server (--engine openai with --base-url and --model, or OPENAI_API_KEY /"
    ' OPENAI_BASE_URL). Without a judge, `playground report --storm` says "no judge" and shows'
    " the simulated users' self-rated clarity apart."
)


def add_parsers(sub: Any, default_db: str, busy_timeout: float) -> None:
    """Add ``storm-judge`` to the command line's subparsers."""
    p = sub.add_parser(
        "storm-judge",
        help="a judge model labels each STORM dialogue's turn pairs (for Clarify)",
        description="Ask a judge model, for every pair of consecutive simulated-user turns, whether"
        " the user's satisfaction and the clarity of their goal improved, did not change or"
        " decreased; the labels are stored in the database and give Clarify in"
        " `playground report --storm`. Pairs already judged by the same judge are not asked"
        " again unless --force.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="sessions (default: every STORM dialogue)")
    p.add_argument("--experiment", help="the STORM dialogues of this experiment")
    add_judge_flags(p)
    p.add_argument("--judge", help="the name stored with the labels (default judge:<model>)")
    p.add_argument("--force", action="store_true", help="judge already judged pairs again")
    add_db_flags(p, default_db, busy_timeout)


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``playground storm-judge`` (its own event loop; Ctrl-C stops it cleanly).

    Returns:
        0 when every pair asked was judged; 1 when some answer could not be read or a session
        could not be judged (a rerun asks those again); 2 with the offline engine.

    Raises:
        SettingsError: an invalid flag value.
        PlaygroundError: no database, an unknown session or experiment, no STORM dialogue.
        LLMError: the judge's server cannot be used.
    """
    settings = judge_settings(args)
    if settings.engine.engine == "offline":
        print(f"storm-judge: {NO_OFFLINE_JUDGE}", file=err)
        return 2
    return interrupts.run_interruptible(run(args, settings, out, err), err)


async def run(args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO) -> int:
    """The command's work (see :func:`cli`)."""
    from playground import factory
    from playground.storage import SessionReader
    from playground.storage.database import open_database
    from playground.storm.dialogues import storm_sessions
    from playground.storm.judge import judge_name, judge_session

    db = open_database(args.db, create=False, busy_timeout=args.busy_timeout)
    try:
        if args.ids:
            reader = SessionReader(db)
            ids = list(dict.fromkeys(reader.resolve(i) for i in args.ids))
            if args.experiment:
                keep = set(storm_sessions(db, args.experiment))
                ids = [i for i in ids if i in keep]
        else:
            ids = storm_sessions(db, args.experiment)
        if not ids:
            where = f"experiment {args.experiment!r} in {args.db}" if args.experiment else args.db
            raise errors.PlaygroundError(f"no STORM dialogues in {where}: nothing to judge")
        client = factory.make_chat_client(settings)
        name = args.judge or judge_name(client)
        problems = 0
        try:
            print(f"Judging {len(ids)} dialogues with {client.model} at {client.where}…", file=err)
            await client.probe()  # a wrong URL or key fails once, clearly
            queue = iter(ids)

            async def worker() -> None:
                nonlocal problems
                for sid in queue:
                    skipped: list[str] = []

                    def skip(pair: int, why: str, into: list[str] = skipped) -> None:
                        into.append(f"pair {pair}: {why}")

                    try:
                        rows = await judge_session(
                            db, sid, client, judge=name, force=args.force, on_skip=skip
                        )
                    except errors.LLMError:
                        raise
                    except errors.PlaygroundError as exc:
                        problems += 1
                        print(f"{sid}: not judged: {exc}", file=err)
                        continue
                    problems += len(skipped)
                    for line in skipped:
                        print(f"{sid}: {line} (not stored; a rerun asks again)", file=err)
                    print(f"{sid}: {len(rows)} turn pairs judged by {name}", file=out, flush=True)

            # the first failure stops the others
            await run_workers(worker, min(settings.llm.concurrency, len(ids)))
            print(f"LLM use: {client.usage.calls_text()}", file=err)
        finally:
            await client.close()
    finally:
        db.close()
    return 1 if problems else 0
