"""Command line: `playground simulate | sessions | show | report | export | import | experiment |
experiments | features | judge | storm | storm-judge | profiles | merge | eval-next-speaker |
serve | study | study-report | rate`; with no command, the GUI (when installed).

Each command's flags and work are in a module of this package (``simulate.py``, ``sessions.py``,
``report.py``, ``transfer.py``...); this module builds the parser from them, runs the command and
turns every expected failure into one ``error:`` line.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, NoReturn, TextIO

from playground import errors
from playground.cli import signals as interrupts
from playground.storage.database import DEFAULT_BUSY_TIMEOUT, DEFAULT_DB
from playground.terminal_text import for_data, guard

log = logging.getLogger("playground")


class Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as :class:`errors.UsageError` so that :func:`main` says
    them in one ``error:`` line (the flag first: ``--seed: … is out of range``) and exits 2,
    also when it runs inside a test or the window's process. Subcommands' parsers are of the
    same class."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):
            raise errors.UsageError(message.removeprefix("argument "))
        raise errors.UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


#: Each command module and the function that adds its commands to the parser, in ``--help``'s
#: order: the commands it adds, and whether the function takes the default database and the
#: default busy timeout after the subparsers.
PARSERS: tuple[tuple[tuple[str, ...], str, str, bool, bool], ...] = (
    (("simulate",), "simulate", "add_parser", True, True),
    (("sessions", "show"), "sessions", "add_parsers", True, False),
    (("report",), "report", "add_parser", True, False),
    (("study-report",), "study_report", "add_parser", True, False),
    (("export", "import"), "transfer", "add_export_parsers", True, False),
    (("experiment", "experiments"), "experiment", "add_parsers", True, True),
    (("features",), "features", "add_parser", True, True),
    (("judge",), "judge", "add_parsers", True, True),
    (("storm",), "storm", "add_parser", True, True),
    (("storm-judge",), "storm_judge", "add_parsers", True, True),
    (("profiles",), "profiles", "add_parsers", False, False),
    (("merge",), "transfer", "add_merge_parser", False, True),
    (("eval-next-speaker",), "eval_next_speaker", "add_parser", False, False),
    (("serve",), "serve", "add_parser", True, True),
    (("study",), "study", "add_parsers", True, True),
    (("rate",), "rate", "add_parsers", True, True),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``playground`` parser: each command's module adds its subcommands, in this order.

    Args:
        command: a command name: only its module is imported and only its commands are added
            (what it parses is the same; a command's start-up then never pays for the other
            commands' modules). None, or a name no module adds: every command.
    """
    chosen = [e for e in PARSERS if command in e[0]] or PARSERS
    p = Parser(prog="playground", description="Inner Thoughts agents in a shared chat room.")
    sub = p.add_subparsers(dest="command")
    for _, module, adder, with_db, with_busy in chosen:
        extra: list[Any] = [str(DEFAULT_DB)] if with_db else []
        extra += [DEFAULT_BUSY_TIMEOUT] if with_busy else []
        getattr(importlib.import_module(f"playground.cli.{module}"), adder)(sub, *extra)
    return p


def launch_gui(argv: Sequence[str]) -> int:
    """Open the GUI through the ``playground.gui`` entry point; -1 when no GUI is installed."""
    eps = entry_points(group="playground.gui")
    if not eps:
        return -1
    return int(next(iter(eps)).load()(list(argv)) or 0)


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Every line printed below shows control codes from files, models and people as visible
    # escapes (playground.terminal_text); only an export's data is written as it is.
    raw_out = out or sys.stdout
    out = guard(raw_out)
    err = guard(err or sys.stderr)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=err
    )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if not argv:
        code = launch_gui(argv)
        if code != -1:
            return code
        # No GUI installed: run the demo simulation headless instead.
        print(
            "(no GUI installed: running a headless simulation; see `playground --help`)", file=err
        )
        argv = ["simulate"]
    try:
        args = build_parser(argv[0]).parse_args(argv)
    except errors.UsageError as exc:
        print(f"error: {exc}", file=err)
        return 2
    try:
        if args.command == "simulate":
            from playground.cli import simulate as simulate_cli

            return interrupts.run_interruptible(simulate_cli.simulate(args, out, err), err)
        if args.command == "serve":
            from playground.cli import serve as serve_cli

            return interrupts.run_interruptible(serve_cli.serve(args, out, err), err)
        if args.command == "study":
            from playground.cli import study as study_cli

            if args.study_command == "list":
                return study_cli.list_plans(args, out)
            return interrupts.run_interruptible(study_cli.run(args, out, err), err)
        if args.command == "rate":
            from playground.cli import rate as rate_cli

            if args.rate_command == "serve":
                return interrupts.run_interruptible(rate_cli.serve(args, out, err), err)
            return rate_cli.run(args, out, err)
        if args.command in ("sessions", "show"):
            from playground.cli import sessions as sessions_cli

            if args.command == "show":
                return sessions_cli.show(args, out)
            return sessions_cli.list_sessions(args, out)
        if args.command == "report":
            from playground.cli import report as report_cli

            return report_cli.cli(args, out, err)
        if args.command == "study-report":
            from playground.cli import study_report as study_report_cli

            return study_report_cli.cli(args, out, err)
        if args.command == "profiles":
            from playground.cli import profiles as profiles_cli

            return profiles_cli.cli(args, out, err)
        if args.command == "judge":
            from playground.cli import judge as judging_cli

            return judging_cli.cli(args, out, err)
        if args.command == "storm-judge":
            from playground.cli import storm_judge as judge_cli

            return judge_cli.cli(args, out, err)
        if args.command in ("export", "import", "merge"):
            from playground.cli import transfer as transfer_cli

            if args.command == "export":
                return transfer_cli.cli_export(args, for_data(raw_out))
            if args.command == "import":
                return transfer_cli.cli_import(args, out, err)
            return transfer_cli.cli_merge(args, out)
        if args.command == "experiment":
            from playground.cli import experiment as experiment_cli

            return interrupts.run_interruptible(experiment_cli.run(args, out, err), err)
        if args.command == "storm":
            from playground.cli import storm as storm_cli

            return storm_cli.main(args, out, err)
        if args.command == "experiments":
            from playground.cli import experiment as experiment_cli

            return experiment_cli.show(args, out)
        if args.command == "features":
            from playground.cli import features as features_cli

            return features_cli.cli(args, out, err)
        if args.command == "eval-next-speaker":
            from playground.cli import eval_next_speaker as eval_next_speaker_cli

            return eval_next_speaker_cli.cli(args, out, err)
    except errors.PlaygroundError as exc:
        # The boundary: every expected failure becomes one clear line, never a traceback.
        print(f"error: {exc}", file=err)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=err)
        return 130
    build_parser().print_help(err)
    return 2
