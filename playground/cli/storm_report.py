"""``playground report --storm``: the STORM report on the command line (Table 2 layout, CSV,
JSON). The flags are added to ``report``'s parser; nothing heavy is imported until it runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from playground import errors
from playground.cli.flag_ranges import PROBABILITY, Number

#: A cosine between two embeddings.
COSINE = Number(-1, 1, whole=False)
#: A change of clarity (0 to 1) that still counts as no change: below a whole step.
TOLERANCE = Number(0, 1, whole=False, below=True)
#: SSA's λ scales the average satisfaction (0 to 1) against Clarify (0 to 10).
SSA_LAMBDA = Number(0, 1000, whole=False, above=True)


def add_arguments(rep: Any) -> None:
    """Add the STORM flags to ``playground report``'s parser."""
    g = rep.add_argument_group("STORM simulated users (with --storm)")
    g.add_argument(
        "--storm",
        action="store_true",
        help="report the STORM dialogues (Table 2 layout) instead of the human ratings",
    )
    g.add_argument("--out", metavar="FILE", help="write the STORM report here, not to stdout")
    g.add_argument("--dialogues", action="store_true", help="also list every dialogue")
    g.add_argument("--judge", help="the judge whose labels give Clarify (default: the most used)")
    g.add_argument(
        "--clarify-method",
        choices=["balanced", "improve-share"],
        default="balanced",
        help="Clarify from the labels: 10·(I+½N)/P (default) or 10·I/P",
    )
    g.add_argument(
        "--rates",
        choices=["dialogues", "turns"],
        default="dialogues",
        help="High/Improved Satisfaction Rates as shares of dialogues (default, as the paper)"
        " or of turns",
    )
    g.add_argument(
        "--high-threshold", type=PROBABILITY, default=0.8, help="high satisfaction (0.8)"
    )
    g.add_argument(
        "--high-on",
        choices=["final", "average"],
        default="final",
        help="a dialogue is highly satisfied by its final (default) or average satisfaction",
    )
    g.add_argument(
        "--c-weights", default="0.4,0.4,0.2", metavar="W1,W2,W3", help="weights of C (0.4,0.4,0.2)"
    )
    g.add_argument(
        "--goal-threshold",
        type=COSINE,
        default=0.5,
        help="MiniLM cosine at which a reply addresses a success criterion (0.5)",
    )
    g.add_argument(
        "--no-goal",
        action="store_true",
        help="skip goal progress (no embedding model is loaded; C's goal term counts 0)",
    )
    g.add_argument(
        "--self-tolerance",
        type=TOLERANCE,
        default=0.0,
        help="|Δclarity| up to this is 'not change' in the self-rated clarity figure (0)",
    )
    g.add_argument("--ssa-weights", default="0.7,0.3", metavar="WA,WB", help="SSA's wα,wβ")
    g.add_argument("--ssa-lambda", type=SSA_LAMBDA, default=7.75, help="SSA's λ (7.75)")


def _floats(text: str, n: int, flag: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        values = ()
    if len(values) != n:
        raise errors.SettingsError(f"{flag}: {n} comma-separated numbers are needed (got {text!r})")
    return values


def options_from(args: argparse.Namespace) -> Any:
    """The metric options of the flags.

    Raises:
        SettingsError: a flag's value is invalid (named by the flag).
    """
    from playground.storm.metrics import MetricOptions

    w1, w2, w3 = _floats(args.c_weights, 3, "--c-weights")
    alpha, beta = _floats(args.ssa_weights, 2, "--ssa-weights")
    return MetricOptions(
        weights=(w1, w2, w3), goal_threshold=args.goal_threshold,
        high_threshold=args.high_threshold, high_on=args.high_on, rates=args.rates,
        clarify_method=args.clarify_method, self_tolerance=args.self_tolerance,
        ssa_alpha=alpha, ssa_beta=beta, ssa_lambda=args.ssa_lambda,
    )  # fmt: skip


def cli(args: argparse.Namespace, out: TextIO, err: TextIO | None = None) -> int:
    """``playground report --storm [--db PATH] [--experiment ID] [--format table|csv|json]
    [--out FILE] [--dialogues]`` and the metric options.

    Raises:
        SettingsError: an invalid option.
        PlaygroundError: no database at the path, an unknown experiment, or no STORM dialogue.
    """
    from playground.storage.database import open_for_reading
    from playground.storm import report_format as fmt
    from playground.storm.report import EmbedFn, build_storm_report

    err = err or sys.stderr
    options = options_from(args)
    path = Path(args.db)
    if not path.is_file():
        raise errors.PlaygroundError(f"no database at {path}")
    embed: EmbedFn | None = None
    if not args.no_goal:

        def embed(texts: Any) -> Any:
            from playground.embedding.minilm import MiniLMEmbedder

            print("Loading the embedding model (for goal progress)…", file=err, flush=True)
            return MiniLMEmbedder().embed_sync(texts)

    db = open_for_reading(path)
    try:
        report = build_storm_report(
            db, experiment=args.experiment, options=options, judge=args.judge, embed=embed
        )
    finally:
        db.close()
    if report.empty:
        where = f"experiment {args.experiment!r} in {path}" if args.experiment else str(path)
        raise errors.PlaygroundError(f"no STORM dialogues in {where}: run `playground storm` first")
    if args.format == "csv":
        text = fmt.to_csv(report, dialogues=args.dialogues)
    elif args.format == "json":
        text = fmt.to_json(report)
    else:
        text = fmt.render_table(report, dialogues=args.dialogues)
    text = text if text.endswith("\n") else text + "\n"
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise errors.PlaygroundError(f"--out: cannot write {args.out} ({exc})") from exc
        print(f"wrote {args.out}", file=out)
    else:
        out.write(text)
    return 0
