"""``playground experiment`` (run or resume a batch) and ``playground experiments`` (list, summary)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from playground import domain, personas, runs
from playground.cli import progress as progress_cli
from playground.cli.flag_ranges import AGENTS, BATCH_CONCURRENCY, SEED, TURNS, setting
from playground.cli.flags import (
    LLM_FLAGS,
    add_db_flags,
    add_llm_flags,
    settings_from,
)
from playground.experiments.progress import Progress
from playground.experiments.protocol import ExperimentProtocol, build_protocol, parse_shard
from playground.settings import Settings
from playground.storage.database import open_for_reading

if TYPE_CHECKING:
    from playground.experiments import runner as experiment

#: ``experiment``'s flags by the setting each one sets.
SETTING_FLAGS = {**LLM_FLAGS, "embeddings": "--embeddings"}


def add_parsers(sub: Any, default_db: str, busy_timeout: float) -> None:
    """The ``experiment`` and ``experiments`` subcommands."""
    x = sub.add_parser(
        "experiment",
        help="run (or resume) the paper's simulation study: conditions over paired draws",
        description="Runs every condition on the same draws of participants, initiator and"
        " icebreaker (a paired design) and saves each conversation under one experiment id."
        " Rerunning the same command resumes it.",
    )
    x.add_argument(
        "--conditions",
        default="inner-thoughts,next-speaker",
        help=f"comma-separated, from {', '.join(domain.POLICIES)} (default inner-thoughts,next-speaker)",
    )
    x.add_argument(
        "--conversations",
        type=setting(ExperimentProtocol, "conversations"),
        default=50,
        help="per condition (default 50)",
    )
    x.add_argument(
        "--agents", type=AGENTS, default=4, help="participants per conversation (default 4)"
    )
    x.add_argument("--turns", type=TURNS, default=15, help="messages per conversation (default 15)")
    x.add_argument("--seed", type=SEED, default=1)
    x.add_argument(
        "--personas", default=str(personas.DEFAULT_DIR), help="directory of persona files"
    )
    x.add_argument(
        "--concurrency",
        type=BATCH_CONCURRENCY,
        help="conversations in flight at once (default 8 with a model; 2 offline, where the"
        " engine is CPU-bound and more only costs CPU time)",
    )
    x.add_argument(
        "--shard", metavar="K/N", help="run every N-th conversation starting at K (0-based)"
    )
    add_llm_flags(x)
    x.add_argument("--embeddings", choices=["local", "remote"])
    x.add_argument(
        "--http",
        choices=["auto", "aiohttp", "httpx"],
        default="auto",
        help="HTTP library for the model server (default auto: aiohttp, about half the client CPU"
        " per call; httpx when a proxy variable is set, which aiohttp here ignores)",
    )
    add_db_flags(x, default_db, busy_timeout)
    x.add_argument("--name", help="a label for the experiment")
    progress_cli.add_flag(x)

    xs = sub.add_parser("experiments", help="list experiments, or one experiment's summary")
    xs.add_argument("id", nargs="?", help="experiment id, unique prefix or name")
    xs.add_argument("--db", default=default_db)
    xs.add_argument("--runs", action="store_true", help="also list every conversation's run")
    xs.add_argument("--format", choices=["table", "json"], default="table")


def parse_conditions(text: str) -> tuple[domain.Policy, ...]:
    """Raises: SettingsError naming the unknown condition."""
    return runs.check_conditions(
        (c for c in (x.strip() for x in text.split(",")) if c), "--conditions"
    )


def settings_of(args: argparse.Namespace) -> Settings:
    """Raises: SettingsError naming the flag."""
    # The runner (and through it the room and the engines) loads when a batch runs, not with
    # the parser: every other command's start-up would pay for it.
    from playground.experiments import runner as experiment

    extra = {
        "preset": experiment.PRESET,
        "evaluation_mode": experiment.EVALUATION_MODE,
    }
    return settings_from(args, SETTING_FLAGS, extra)


def protocol_of(args: argparse.Namespace, settings: Settings) -> ExperimentProtocol:
    """The protocol from the flags and the persona directory.

    Raises:
        SettingsError: a flag out of range; PersonaError: a bad persona file.
    """
    return build_protocol(
        settings,
        conditions=parse_conditions(args.conditions),
        conversations=args.conversations,
        agents=args.agents,
        turns=args.turns,
        seed=args.seed,
        personas_dir=args.personas,
    )


async def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from playground.experiments import results as experiment_report

    settings = settings_of(args)
    protocol = protocol_of(args, settings)
    shard = parse_shard(args.shard) if args.shard else (0, 1)
    bar = _Bar(err, enabled=not args.no_progress)

    def header(runner: experiment.Runner) -> None:
        print(
            f"Experiment {runner.id}"
            + (f" ({args.name})" if args.name else "")
            + f": {', '.join(protocol.conditions)} × {protocol.conversations} conversations,"
            f" {protocol.agents} agents, {protocol.turns} turns, seed {protocol.seed},"
            f" {runner.engine.label}"
            + (f", shard {shard[0]}/{shard[1]}" if shard != (0, 1) else ""),
            file=err,
            flush=True,
        )

    options = batch_options(args, shard, bar, header)
    end = await runs.run_experiment(settings, protocol, options, http=args.http)
    failed = tell_outcome(end.progress, err, "conversation")
    rdb = open_for_reading(args.db)
    try:
        rows = experiment_report.summarise(rdb, end.batch_id)
    finally:
        rdb.close()
    print(experiment_report.format_summary(rows), file=out)
    print(end.batch_id, file=out, flush=True)
    return exit_code(failed, end.batch_id, err, "conversation")


# -- what ``experiment`` and ``storm`` share -------------------------------------------------------


def batch_options(
    args: argparse.Namespace,
    shard: tuple[int, int],
    bar: _Bar,
    header: Callable[[experiment.Runner], None],
) -> runs.BatchOptions:
    """How a batch command runs: its ``--db``, ``--busy-timeout``, ``--concurrency`` and
    ``--name``, the progress ``bar`` and the ``header`` it prints once the batch has its id."""
    return runs.BatchOptions(
        db=args.db,
        busy_timeout=args.busy_timeout,
        concurrency=args.concurrency,
        shard=shard,
        name=args.name,
        on_progress=bar.update,
        on_start=header,
        display=bar,
    )


def tell_outcome(progress: Progress, err: TextIO, noun: str) -> int:
    """Say how many runs an earlier run had finished (skipped now) and how many failed, with
    the last error; return the number failed. ``noun`` names a run (``conversation``)."""
    skipped = sum(c.skipped for c in progress.conditions.values())
    failed = sum(c.failed for c in progress.conditions.values())
    if skipped:
        print(f"{skipped} {noun}s were already finished and were skipped.", file=err)
    if progress.last_error:
        print(f"{failed} failed; the last: {progress.last_error}", file=err)
    return failed


def exit_code(failed: int, experiment_id: str, err: TextIO, noun: str) -> int:
    """0, or 1 with an error line saying how to see and retry the ``failed`` runs."""
    if not failed:
        return 0
    print(
        f"error: {failed} {noun}{'s' if failed != 1 else ''} failed (recorded with their errors:"
        f" `playground experiments {experiment_id} --runs`); run the same command again to"
        " retry them",
        file=err,
    )
    return 1


def show(args: argparse.Namespace, out: TextIO) -> int:
    from playground.experiments import results as experiment_report

    db = open_for_reading(args.db)
    try:
        if not args.id:
            found = experiment_report.list_experiments(db)
            if args.format == "json":
                json.dump(found, out, indent=2, ensure_ascii=False)
                print(file=out)
                return 0
            if not found:
                print(f"No experiments in {args.db}.", file=out)
                return 0
            for e in found:
                print(
                    f"{e['id']}  {e['created_at'][:19]}  {e['name'] or ''}\n"
                    f"    {', '.join(e['conditions'])} × {e['conversations']}, {e['agents']} agents,"
                    f" {e['turns']} turns, seed {e['seed']}, {e['model']}:"
                    f" {e['finished']}/{e['planned']} finished, {e['failed']} failed,"
                    f" {e['interrupted'] + e['running']} unfinished",
                    file=out,
                )
            return 0
        xid = experiment_report.resolve(db, args.id)
        rows = experiment_report.summarise(db, xid)
        run_rows = experiment_report.runs(db, xid) if args.runs else []
        if args.format == "json":
            json.dump(
                {"experiment": xid, "summary": [r.model_dump() for r in rows], "runs": run_rows},
                out,
                indent=2,
                ensure_ascii=False,
            )
            print(file=out)
            return 0
        print(f"Experiment {xid}", file=out)
        print(experiment_report.format_summary(rows), file=out)
        for r in run_rows:
            err = f"  {r['error']}" if r["error"] and r["status"] != "finished" else ""
            print(
                f"  #{r['draw']:<4} {r['condition']:<15} {r['status']:<12} {r['session_id'] or '—':<22}"
                f" {r['messages']:>3} msgs{err}",
                file=out,
            )
        return 0
    finally:
        db.close()


class _Bar(progress_cli.ProgressBar):
    """Conversations per condition, ETA, calls, tokens (a row each on a terminal; in a log, one
    line per finished conversation)."""

    def update(self, p: Progress) -> None:
        if self.lines:
            if p.finished != self._shown.get("all"):
                self._shown["all"] = p.finished
                per = ", ".join(
                    f"{c} {x.done + x.failed}/{x.total}" for c, x in p.conditions.items()
                )
                self.line(
                    f"[{p.finished}/{p.total}] {per}; {p.calls} LLM calls, {p.tokens} tokens,"
                    f" {p.retries} retries, {p.errors} errors"
                )
            return
        for cond, c in p.conditions.items():
            self.bar(cond, c.done + c.failed, c.total, f"{c.failed} failed" if c.failed else "")
        stats = (
            f"{p.calls} LLM calls, {p.tokens} tokens, {p.retries} retries, {p.errors} errors,"
            f" {p.running} running"
        )
        self.bar("all", p.finished, p.total, stats)
