"""``playground study``: a user study of several conversations for the same group of people.

- ``study new``: save a plan (three conversations, one agent each, the proactivity conditions in
  the group's counter-balanced order) and run it. Prints the plan id on standard error and one
  invite link per person on standard output; the links stay the same for the whole plan.
- ``study resume PLAN``: run a plan again from its first unfinished conversation, with the
  same links.
- ``study list``: the plans in the database and how far each got: ``running`` (a live runner
  holds it: its process and address are shown), ``stopped`` (``study resume`` goes on), ``not
  started`` or ``done``, with the conversation it is at and what that conversation is doing.

One runner at a time holds a plan: a second ``study resume`` of a plan that is running (here or
in the window) is refused, naming the first's process and address. While a plan runs, its
progress (the conversation, its phase, who joined, who has answered) is printed on standard
error.

After each conversation everyone reviews it message by message and rates its agent; after the
last, everyone matches the agents to their styles and picks a favourite. Ctrl-C stops the study
for everyone; ``study resume`` goes on from there.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
from typing import Any, TextIO

from playground import errors, personas
from playground.cli.flag_ranges import SEED, Number
from playground.cli.flags import (
    LLM_FLAGS,
    add_db_flags,
    add_llm_flags,
    settings_from,
    start_local_embedder,
)
from playground.cli.serve import HUMANS, add_listen_flags, exposure_warning
from playground.clock import SystemClock
from playground.storage import open_database

#: Minutes a conversation (or a review) lasts; the paper's conversations took 10.
MINUTES = Number(0, 24 * 60, whole=False, above=True)
#: A group's number: picks its order of the conditions (six orders, then again).
GROUP = Number(0, 10_000)

HELP = "run a user study: several conversations for one group, conditions counter-balanced"


def add_parsers(sub: Any, default_db: str, busy_timeout: float) -> None:
    p = sub.add_parser("study", help=HELP, description=__doc__)
    actions = p.add_subparsers(dest="study_command", required=True)
    new = actions.add_parser("new", help="save a study plan and run it")
    new.add_argument("--humans", type=HUMANS, default=2, help="people in the group (default 2)")
    new.add_argument(
        "--group",
        type=GROUP,
        default=0,
        help="the group's number, 0…: picks its order of the three conditions (default 0)",
    )
    new.add_argument("--seed", type=SEED, default=0, help="draws the agents' personas")
    new.add_argument(
        "--minutes", type=MINUTES, default=10.0, help="minutes per conversation (default 10)"
    )
    new.add_argument(
        "--show-thoughts",
        action="store_true",
        help="a condition: people's pages show the agents' thoughts (recorded with the plan)",
    )
    resume = actions.add_parser("resume", help="run a plan on from where it stopped")
    resume.add_argument("plan", help="the plan's id (see `playground study list`)")
    for q in (new, resume):
        q.add_argument(
            "--review-minutes",
            type=MINUTES,
            default=15.0,
            help="longest wait for everyone's review and answers after a conversation (default 15)",
        )
        q.add_argument(
            "--personas", default=str(personas.DEFAULT_DIR), help="directory of persona files"
        )
        add_listen_flags(q)
        add_llm_flags(q)
        add_db_flags(q, default_db, busy_timeout)
    listing = actions.add_parser("list", help="the study plans and how far each got")
    add_db_flags(listing, default_db, busy_timeout)


async def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = settings_from(args, LLM_FLAGS)
    library = personas.load_personas(args.personas)
    db = open_database(args.db, busy_timeout=args.busy_timeout)
    try:
        return await _run(args, settings, library, db, out, err)
    except sqlite3.Error as exc:  # a plan's own rows (the sessions' are the recorder's)
        raise errors.PlaygroundError(
            f"the study plan could not be saved in {args.db}: {exc}; what was saved before is"
            " kept, and `playground study resume` goes on from there"
        ) from exc
    finally:
        db.close()


async def _run(
    args: argparse.Namespace,
    settings: Any,
    library: list[Any],
    db: Any,
    out: TextIO,
    err: TextIO,
) -> int:
    from playground import factory
    from playground.storage import study_rows
    from playground.study.plan import Listen, PlanRunner, create_plan
    from playground.study.seats import PlanSeatBook
    from playground.study.server import StudyServer

    if args.study_command == "new":
        settings.room.show_thoughts = args.show_thoughts
        plan_id = create_plan(
            db,
            library,
            settings,
            humans=args.humans,
            group=args.group,
            seed=args.seed,
            minutes=args.minutes,
            now=SystemClock().now_iso(),
        )
        print(f"Study plan {plan_id} saved.", file=err)
    else:
        plan_id = args.plan
        saved = study_rows.plan(db, plan_id)
        if saved is None:
            raise errors.PlaygroundError(f"no study plan {plan_id!r} in {args.db}")
        if saved["status"] == "done":
            print(f"Study plan {plan_id} is already done.", file=err)
            return 0
        settings.room.show_thoughts = saved["show_thoughts"]
        _same_engine(plan_id, saved["settings"], settings)

    def links(server: StudyServer, book: PlanSeatBook) -> None:
        where = server.listening
        assert where is not None
        if (warning := exposure_warning(args.host, where.port)) is not None:
            print(warning, file=err)
        print(f"Plan {plan_id}: one invite link per person, for every conversation:", file=err)
        for seat in book.seats:
            if not seat.revoked:
                print(server.link(seat), file=out, flush=True)
        print("Ctrl-C stops the study; `playground study resume` goes on.", file=err)

    def progress(line: str) -> None:
        print(line, file=err, flush=True)

    embedder = start_local_embedder(settings)
    engine = await factory.build_engine(settings, embedder=embedder)
    try:
        runner = PlanRunner(
            db,
            plan_id,
            engine,
            library,
            settings,
            listen=Listen(args.host, args.port, args.tls_cert, args.tls_key),
            review_minutes=args.review_minutes,
            on_links=links,
            on_progress=progress,
        )
        await runner.run()
    except errors.PlaygroundError:
        if args.study_command == "new" and _never_started(db, plan_id):
            study_rows.delete_plan(db, plan_id)
            print(f"Study plan {plan_id} was not started, and is not kept.", file=err)
        raise
    except asyncio.CancelledError:
        print(f"Stopped. Resume with: playground study resume {plan_id}", file=err)
        raise
    finally:
        await engine.close()
    print(plan_id, file=out, flush=True)
    return 0


def _never_started(db: Any, plan_id: str) -> bool:
    from playground.storage import study_rows

    return all(s["status"] == "pending" for s in study_rows.plan_steps(db, plan_id))


def _same_engine(plan_id: str, saved: dict[str, Any], now: Any) -> None:
    """Refuse to go on with another engine or model than the plan's conversations ran with.

    Raises:
        SettingsError: the engine or the model differs (naming the flags that would match).
    """
    from playground.study.plan import other_engine

    was = other_engine(saved, now)
    if was is not None:
        engine, model = was
        flags = f"--engine {engine}" + (f" --model {model}" if model else "")
        raise errors.SettingsError(
            f"plan {plan_id} ran with the {engine} engine{f' and {model}' if model else ''};"
            f" resume it with the same ({flags}) so that its conversations differ only in"
            " their condition"
        )


def list_plans(args: argparse.Namespace, out: TextIO) -> int:
    from playground.storage import study_rows
    from playground.study.lock import plan_status

    db = open_database(args.db, busy_timeout=args.busy_timeout)
    try:
        rows = study_rows.plans(db)
        if not rows:
            print("no study plans", file=out)
            return 0
        for row in rows:
            steps = study_rows.plan_steps(db, row["id"])
            status = plan_status(db, row)
            order = ", ".join(
                s["persona"]
                + (f" shown as {s['agent']}" if s["agent"] != s["persona"] else "")
                + f" ({s['condition']})"
                for s in steps
            )
            print(
                f"{row['id']}  group {row['grp']}  {row['humans']} people  {status.describe()}"
                f"  {status.done}/{status.of} conversations  {order}",
                file=out,
            )
        return 0
    finally:
        db.close()
