"""``playground report``: the statistics over the human ratings of a database, or with ``--storm``
the STORM report (:mod:`playground.cli.storm_report`).

The report itself is built by :mod:`playground.report.stats`; this module adds the command's flags
(with the agreement and STORM groups) and writes the report as a table, CSV or JSON, and the plots.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from playground import errors
from playground.cli import agreement as agreement_cli
from playground.cli import storm_report as storm_report_cli


def add_parser(sub: Any, default_db: str) -> None:
    """Add ``report`` to the subcommands ``sub``."""
    rep = sub.add_parser("report", help="statistics over the human ratings in a database")
    rep.add_argument("--db", default=default_db)
    rep.add_argument("--experiment", help="only the sessions of this experiment")
    rep.add_argument("--format", choices=["table", "csv", "json"], default="table")
    rep.add_argument("--plots", metavar="DIR", help="also write the plots as PNG files here")
    storm_report_cli.add_arguments(rep)
    agreement_cli.add_arguments(rep)


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``playground report``: the STORM report with ``--storm``, else the ratings report."""
    if args.storm:
        return storm_report_cli.cli(args, out, err)
    return ratings_report(args, out)


def ratings_report(args: Any, out: TextIO) -> int:
    """``playground report [--db PATH] [--experiment ID] [--format table|csv|json] [--plots DIR]``.

    Raises:
        PlaygroundError: no database at the path (none is created), or an unknown experiment.
    """
    from playground.report.stats import build_report, render_table, to_csv, to_json
    from playground.storage.database import open_database, open_for_reading

    path = Path(args.db)
    if not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    options = agreement_cli.options(args)
    # Reads only (also where the database cannot be written), unless features are to be stored.
    db = open_database(path, create=False) if "embedder" in options else open_for_reading(path)
    try:
        report = build_report(db, experiment=args.experiment, agreement_options=options)
    finally:
        db.close()
    if report.empty:
        where = f"experiment {args.experiment!r} in {path}" if args.experiment else str(path)
        print(
            f"no ratings yet in {where} ({report.counts.sessions}"
            f" session{'' if report.counts.sessions == 1 else 's'}): nothing to report",
            file=out,
        )
        return 0
    text = {"table": render_table, "csv": to_csv, "json": to_json}[args.format](report)
    out.write(text if text.endswith("\n") else text + "\n")
    if args.plots:
        from playground.report import plots

        # Keep machine-readable output clean: plot notices go to stderr for csv and json.
        notes = out if args.format == "table" else sys.stderr
        for line in plots.write_plots(report, Path(args.plots), log=notes):
            print(f"wrote {line}", file=notes)
    return 0
