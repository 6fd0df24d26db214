"""``playground export``, ``import`` and ``merge``: moving sessions between files and databases.

The work is done by :mod:`playground.transfer.export`, :mod:`playground.transfer.importer` and
:mod:`playground.transfer.merge`; this module adds their flags to the parser and prints what
they did.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from playground import errors
from playground.cli import progress as progress_cli
from playground.cli.flag_ranges import BUSY_TIMEOUT

if TYPE_CHECKING:
    from playground.transfer.importer import Outcome


def add_export_parsers(sub: Any, default_db: str) -> None:
    """Add ``export`` and ``import`` to the subcommands ``sub``."""
    exp = sub.add_parser("export", help="write sessions (with their ratings) to a file")
    exp.add_argument("ids", nargs="*", metavar="ID", help="session ids (or unique prefixes)")
    exp.add_argument("--all", action="store_true", help="every session in the database")
    exp.add_argument("--experiment", help="every session of this experiment")
    exp.add_argument("--db", default=default_db)
    exp.add_argument("--format", choices=["jsonl", "json", "csv"], default="jsonl")
    exp.add_argument("--output", metavar="FILE", help="default: standard output")

    imp = sub.add_parser("import", help="read a JSON Lines export into a database")
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--db", default=default_db)
    imp.add_argument(
        "--as-new",
        action="store_true",
        help="import a conversation whose id the database has, with other content, as a copy"
        " under a new id (the same conversation is always skipped)",
    )
    progress_cli.add_flag(imp)


def add_merge_parser(sub: Any, busy_timeout: float) -> None:
    """Add ``merge`` to the subcommands ``sub``."""
    mg = sub.add_parser(
        "merge", help="combine session databases (e.g. an experiment's shards) into one"
    )
    mg.add_argument("output", metavar="OUT.db", help="the database to merge into (created if new)")
    mg.add_argument("sources", nargs="+", metavar="SHARD.db", help="databases to read")
    mg.add_argument("--busy-timeout", type=BUSY_TIMEOUT, default=busy_timeout, metavar="SECONDS")


def cli_export(args: argparse.Namespace, out: TextIO) -> int:
    """``playground export``: write sessions to ``--output`` or to ``out``. Returns the exit code.

    Raises:
        PlaygroundError: no sessions chosen, no database at ``--db``, unknown id or experiment.
    """
    from playground.storage.database import open_for_reading
    from playground.transfer.export import (
        experiment_sessions,
        resolve_ids,
        write_export,
        write_records,
    )

    if not args.ids and not args.all and not args.experiment:
        raise errors.PlaygroundError(
            "nothing to export: give session ids (or unique prefixes), --all or --experiment ID"
        )
    path = Path(args.db)
    db = open_for_reading(path)  # reads only: also where the database cannot be written
    try:
        ids = resolve_ids(db, args.ids)
        if args.experiment:
            ids += [s for s in experiment_sessions(db, args.experiment) if s not in ids]
        if args.all:
            every = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]
            if not every:
                raise errors.PlaygroundError(f"no sessions in {path}")
            ids += [s for s in every if s not in ids]
        if not args.output:
            write_records(db, ids, out, args.format)
            return 0
        count = write_export(db, ids, args.output, args.format)
    finally:
        db.close()
    what = (
        f"{count} rating rows ({len(ids)} conversations)"
        if args.format == "csv"
        else f"{count} conversation{'s' if count != 1 else ''}"
    )
    print(f"wrote {what} to {args.output}", file=out)
    return 0


def cli_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``playground import``: read a JSON Lines export into ``--db``. Returns the exit code.

    One line per conversation (imported, or skipped because it is already in the database), the
    warnings, then the counts; the count so far of all the file's conversations on ``err``.

    Raises:
        PlaygroundError: bad file or database, or a different conversation under a taken id
            without ``--as-new``; conversations before the line at fault are kept.
    """
    from playground.storage import open_database
    from playground.transfer.importer import Importer

    db = open_database(args.db)
    imported = skipped = 0
    try:
        run = Importer(db, as_new=args.as_new)
        with progress_cli.ProgressBar(err, enabled=not args.no_progress) as bar:
            for done in run.import_lines(args.file):
                _tell_import(done, out)
                imported += done.imported
                skipped += not done.imported
                bar.advance("conversations", imported + skipped, run.conversations)
        for warning in run.warnings():
            print(f"warning: {warning}", file=out)
        print(f"{imported} imported, {skipped} already in the database", file=out)
    finally:
        db.close()
    return 0


def _tell_import(done: Outcome, out: TextIO) -> None:
    """One line on what became of one conversation of an import."""
    if done.imported:
        note = " (renamed: the id was taken)" if done.file_id != done.db_id else ""
        print(f"imported {done.file_id} as {done.db_id}{note}", file=out, flush=True)
    else:
        there = f" as {done.db_id}" if done.db_id != done.file_id else ""
        print(f"skipped {done.file_id}: already in the database{there}", file=out, flush=True)


def cli_merge(args: argparse.Namespace, out: TextIO) -> int:
    """``playground merge OUT.db SHARD.db [...]``: merge, then print a summary. Returns 0.

    Args:
        args: ``output`` (the OUT path), ``sources`` (paths) and ``busy_timeout`` (seconds).
        out: where the summary goes.

    Raises:
        SettingsError: a negative or not-a-number ``--busy-timeout``.
        PlaygroundError: as :func:`playground.transfer.merge.merge` (nothing is merged).
    """
    from playground.transfer.merge import merge

    if not 0 <= args.busy_timeout < float("inf"):  # NaN fails too
        raise errors.SettingsError(
            f"--busy-timeout: must be 0 or more seconds (got {args.busy_timeout:g})"
        )
    result = merge(args.output, args.sources, busy_timeout=args.busy_timeout)
    for s in result.sources:
        line = f"{s.path}: {_sessions(s.sessions_added, s.sessions_present)}"
        if s.experiments:
            line += f"; {_count(len(s.experiments), 'experiment')} ({', '.join(s.experiments)})"
        if s.evaluation_rows:
            line += f"; {_count(s.evaluation_rows, 'rating row')}"
        if s.plans_added or s.plans_present:
            line += (
                f"; {_count(s.plans_added, 'study plan')} added, {s.plans_present} already there"
            )
        print(line, file=out)
    total = _sessions(result.sessions_added, result.sessions_present)
    print(
        f"merged into {result.output}: {total}, {_count(len(result.experiments), 'experiment')}",
        file=out,
    )
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _sessions(added: int, present: int) -> str:
    return f"{_count(added, 'session')} added, {present} already there"
