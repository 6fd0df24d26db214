"""``playground rate``: blind rating from the raters' own browsers, and rating plans.

- ``rate plan new``: make a rating plan from an experiment or chosen sessions (raters × items,
  seed), as **Rating ▸ Rating plans…** does; ``--raters N`` makes N random rater ids from an
  alphabet without lookalikes. Prints the plan id on standard error and its rater ids on standard
  output.
- ``rate plan list``: the plans in the database and how far their raters have got.
- ``rate serve PLAN``: serve a plan to browsers. Prints one link per rater, or with
  ``--open-link`` one link for a crowdsourcing platform: each arrival gets the next free rater,
  and a completion code at the end. Answers go into the same rows as the window's blind rating,
  so ``playground report`` reads them as they are. Ctrl-C stops serving; the links stay valid for
  the next ``rate serve``.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any, TextIO

from playground import errors
from playground.cli.flag_ranges import SEED, Number
from playground.cli.flags import add_db_flags
from playground.cli.serve import PORT, exposure_warning

#: Raters a plan made here may have, and items each may get.
RATERS = Number(1, 10_000)
ITEMS = Number(1, 10_000)
CPS = Number(1, 1000)

HELP = "blind rating from the raters' own browsers, and rating plans"


def add_parsers(sub: Any, default_db: str, busy_timeout: float) -> None:
    """Add ``rate plan new|list`` and ``rate serve`` to the subcommands ``sub``."""
    p = sub.add_parser("rate", help=HELP, description=__doc__)
    actions = p.add_subparsers(dest="rate_command", required=True)
    plan = actions.add_parser("plan", help="make or list rating plans")
    plans = plan.add_subparsers(dest="plan_command", required=True)
    new = plans.add_parser("new", help="make a rating plan")
    source = new.add_mutually_exclusive_group(required=True)
    source.add_argument("--experiment", metavar="NAME", help="every finished session of it")
    source.add_argument("--sessions", nargs="+", metavar="ID", help="these sessions (or prefixes)")
    new.add_argument(
        "--kind",
        choices=["conversation", "pairwise"],
        default="conversation",
        help="rate single conversations on the seven statements, or choose between pairs"
        " (default conversation)",
    )
    who = new.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--raters", type=RATERS, metavar="N", help="N raters with random ids (R-7KX3MQ)"
    )
    who.add_argument("--rater-names", nargs="+", metavar="NAME", help="raters with these ids")
    new.add_argument(
        "--items", type=ITEMS, required=True, metavar="K", help="conversations (or pairs) each"
    )
    new.add_argument("--seed", type=SEED, default=0, help="the same seed gives the same plan")
    new.add_argument("--name", help="a name for people (default: made from the source)")
    add_db_flags(new, default_db, busy_timeout)
    listing = plans.add_parser("list", help="the rating plans and their progress")
    listing.add_argument(
        "--db", default=default_db, help=f"session database (default {default_db})"
    )
    serve = actions.add_parser("serve", help="serve a rating plan to the raters' browsers")
    serve.add_argument("plan", metavar="PLAN", help="the plan's id or name")
    serve.add_argument(
        "--open-link",
        action="store_true",
        help="print one open link for a crowdsourcing platform instead of one link per rater",
    )
    serve.add_argument(
        "--cps",
        type=CPS,
        default=None,
        help="typing speed, characters per second (default: the app's)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: only this machine); 0.0.0.0 exposes the"
        " plan to the local network",
    )
    serve.add_argument(
        "--port", type=PORT, default=8766, help="TCP port (default 8766; 0: any free)"
    )
    serve.add_argument("--tls-cert", metavar="PEM", help="serve HTTPS with this certificate chain")
    serve.add_argument("--tls-key", metavar="PEM", help="the certificate's private key")
    add_db_flags(serve, default_db, busy_timeout)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``rate plan new``, ``rate plan list`` (synchronous: the caller runs ``serve``)."""
    if args.plan_command == "new":
        return new_plan(args, out, err)
    return list_plans(args, out)


def _open(args: argparse.Namespace, *, create: bool) -> Any:
    from playground.storage import open_database

    path = Path(args.db)
    if not create and not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    return open_database(path, create=False, busy_timeout=getattr(args, "busy_timeout", 30.0))


def new_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``rate plan new``: make the plan; its id on ``err``, its rater ids on ``out``.

    Raises:
        PlaygroundError: no database, unknown sessions or experiment, too few of them.
    """
    from playground.experiments import results
    from playground.rating import links
    from playground.rating.store import RatingStore

    db = _open(args, create=False)
    try:
        store = RatingStore(db)
        # By id, a unique prefix of it, or its name, as every other command takes an experiment.
        experiment = results.resolve(db, args.experiment) if args.experiment else None
        names = args.rater_names or links.new_rater_ids(args.raters, store.raters())
        where = f"experiment {args.experiment}" if args.experiment else "chosen sessions"
        plan = store.create_plan(
            args.name or f"{where}, {args.items} per rater, seed {args.seed}",
            args.kind,
            names,
            args.items,
            sessions=args.sessions,
            experiment=experiment,
            seed=args.seed,
        )
    finally:
        db.close()
    print(f"Rating plan {plan.id} ({plan.name}): {len(plan.raters)} raters", file=err)
    for rater in plan.raters:
        print(rater, file=out)
    return 0


def list_plans(args: argparse.Namespace, out: TextIO) -> int:
    """``rate plan list``: one line per plan: id, kind, per rater, seed, source, raters done."""
    from playground.rating.store import RatingStore
    from playground.storage.database import open_for_reading

    path = Path(args.db)
    if not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    db = open_for_reading(path)
    try:
        store = RatingStore(db)
        plans = store.plans()
        if not plans:
            print(f"no rating plans in {path}", file=out)
        for plan in plans:
            progress = store.progress(plan.id)
            done = sum(d for d, _ in progress.values())
            total = sum(t for _, t in progress.values())
            finished = sum(1 for d, t in progress.values() if t and d == t)
            source = plan.source or {}
            where = (
                f"experiment {source['experiment']}"
                if source.get("experiment")
                else f"{len(source.get('sessions') or [])} sessions"
            )
            print(
                f"{plan.id}\t{plan.name}\t{plan.kind}\t{plan.per_rater} per rater\tseed"
                f" {plan.seed}\t{where}\t{finished}/{len(plan.raters)} raters done\t"
                f"{done}/{total} answers",
                file=out,
            )
    finally:
        db.close()
    return 0


def find_plan(store: Any, given: str) -> int:
    """A plan's id from its id or exact name.

    Raises:
        PlaygroundError: no such plan, or two plans of that name.
    """
    plans = store.plans()
    if given.isdigit() and any(p.id == int(given) for p in plans):
        return int(given)
    named = [p.id for p in plans if p.name == given.strip()]
    if len(named) == 1:
        return int(named[0])
    if named:
        raise errors.PlaygroundError(
            f"{len(named)} rating plans are named {given!r}: give one of their ids"
            f" ({', '.join(map(str, named))})"
        )
    raise errors.PlaygroundError(f"no rating plan {given!r} (see `playground rate plan list`)")


async def serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``rate serve PLAN``: serve until Ctrl-C; the links on ``out``.

    Raises:
        PlaygroundError: no database or plan, or the address cannot be listened on.
    """
    from playground.rating.store import RatingStore
    from playground.rating.web.server import RaterServer
    from playground.settings import RoomSettings

    db = _open(args, create=False)
    server = None
    try:
        plan_id = find_plan(RatingStore(db), args.plan)
        cps = args.cps or max(1, round(RoomSettings().typing_cps))
        server = RaterServer(
            db,
            plan_id,
            host=args.host,
            port=args.port,
            cps=cps,
            certificate=args.tls_cert,
            key=args.tls_key,
        )
        where = await server.start()
        if (warning := exposure_warning(args.host, where.port)) is not None:
            print(warning.replace("join as that seat", "rate as that rater"), file=err)
        plan = server.plan
        if args.open_link:
            print(
                f"Rating plan {plan.id} ({plan.name}): one open link; each arrival gets the next"
                f" free rater of {len(plan.raters)}:",
                file=err,
            )
            print(server.open_link(), file=out, flush=True)
        else:
            print(f"Rating plan {plan.id} ({plan.name}): one link per rater:", file=err)
            for rater, link in server.rater_links():
                print(f"{rater}\t{link}", file=out, flush=True)
        print("Ctrl-C stops serving; answers are saved as they come.", file=err, flush=True)
        await asyncio.Event().wait()
    finally:
        if server is not None:
            await server.stop()
        db.close()
    return 0
