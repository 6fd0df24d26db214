"""``playground features``: TRACE's conversational geometry for saved sessions.

Computes what is missing or out of date (embedding only the messages without a cached vector),
stores it in ``session_features`` and prints a table, CSV or JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import math
from typing import TYPE_CHECKING, Any, TextIO

from playground import errors
from playground.cli import progress as progress_cli
from playground.cli.flag_ranges import TURNS, Number
from playground.cli.flags import add_db_flags
from playground.geometry.vectors import EMBED_BATCH

if TYPE_CHECKING:
    from playground.geometry.store import SessionFeatures

#: Texts per embedding call: up to 16 times the default, beyond which one call's padded batch
#: only costs memory.
EMBED_BATCHES = Number(1, 16 * EMBED_BATCH)

#: The columns of the table (all features go to CSV and JSON), with their headings.
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("turns", "turns"),
    ("self_similarity_mean", "self-sim"),
    ("gap_median", "gap med s"),
    ("initial_response_distance", "init resp"),
    ("responder_distance_mean", "resp dist"),
    ("prompter_distance_mean", "prompt dist"),
    ("relevance_trend", "rel trend"),
    ("cohesion", "cohesion"),
    ("volatility", "volatility"),
    ("late_volatility", "late vol"),
    ("max_jump", "max jump"),
    ("self_consistency", "self-cons"),
    ("goal_adherence", "goal adh"),
    ("goal_drift", "goal drift"),
    ("goal_convergence", "goal conv"),
)


def add_parser(sub: Any, default_db: str, busy_timeout: float) -> None:
    """Add ``features`` to the command line's subparsers."""
    p = sub.add_parser(
        "features",
        help="conversational geometry (TRACE) of saved sessions",
        description="Embed each session's messages with the local MiniLM model (vectors are"
        " cached in the database), compute TRACE's geometry features (docs/geometry.md), store"
        " them and print them. Only missing or out-of-date features are computed.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="sessions (default: every session)")
    p.add_argument("--experiment", help="the sessions of this experiment (id, prefix or name)")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--recompute", action="store_true", help="compute stored features again")
    p.add_argument(
        "--late-k",
        type=TURNS,
        default=3,
        metavar="K",
        help="late volatility averages the last K turn-to-turn distances (default 3)",
    )
    p.add_argument(
        "--embed-batch",
        type=EMBED_BATCHES,
        default=EMBED_BATCH,
        metavar="N",
        help=f"texts per embedding call when many are missing (default {EMBED_BATCH})",
    )
    add_db_flags(p, default_db, busy_timeout)
    progress_cli.add_flag(p)


def _session_ids(db: Any, ids: list[str], experiment: str | None) -> list[str]:
    """The sessions asked for, oldest first when none are named.

    Raises:
        PlaygroundError: an unknown or ambiguous session or experiment.
    """
    from playground.experiments.results import resolve
    from playground.storage import SessionReader

    exp = resolve(db, experiment) if experiment else None
    if ids:
        reader = SessionReader(db)
        chosen = list(dict.fromkeys(reader.resolve(i) for i in ids))
        if exp is not None:
            keep = {
                r[0] for r in db.execute("SELECT id FROM sessions WHERE experiment_id = ?", [exp])
            }
            chosen = [i for i in chosen if i in keep]
        return chosen
    sql = "SELECT id FROM sessions"
    params: list[Any] = []
    if exp is not None:
        sql += " WHERE experiment_id = ?"
        params.append(exp)
    return [r[0] for r in db.execute(sql + " ORDER BY created_at, id", params).fetchall()]


def _fmt(x: float | None, name: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if name == "turns":
        return str(int(x))
    return f"{x:.3f}" if abs(x) < 100 else f"{x:.0f}"


def render_table(rows: list[SessionFeatures], model: str) -> str:
    """One line per session, the main features as columns (— where undefined)."""
    head = ["session", *(h for _, h in TABLE_COLUMNS)]
    body = [[r.session_id, *(_fmt(r.features.get(k), k) for k, _ in TABLE_COLUMNS)] for r in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]
    lines = [f"TRACE geometry of {len(rows)} session{'' if len(rows) == 1 else 's'} ({model})"]
    for line in [head, *body]:
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
        )
    return "\n".join(lines) + "\n"


def to_csv(rows: list[SessionFeatures]) -> str:
    """One line per session with every feature (empty where undefined)."""
    from playground.geometry.features import FEATURE_NAMES

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["session_id", "model", "version", "message_count", *FEATURE_NAMES, "late_k", "goal"]
    )
    for r in rows:
        vals = [r.features.get(k) for k in (*FEATURE_NAMES, "late_k")]
        w.writerow(
            [r.session_id, r.model, r.version, r.message_count]
            + ["" if v is None else repr(float(v)) for v in vals]
            + [r.goal or ""]
        )
    return buf.getvalue()


def to_json(rows: list[SessionFeatures], model: str) -> str:
    """Every feature and the per-speaker variants, as indented JSON."""
    return (
        json.dumps(
            {"model": model, "sessions": [r.as_dict() for r in rows]},
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``playground features``.

    Returns:
        0 on success; 2 on bad input (no database, an unknown session or experiment, a bad
        ``--late-k``), after one line ``error: …`` on ``err``.
    """
    from pathlib import Path

    from playground.storage.database import open_database

    try:
        if args.late_k < 1:
            raise errors.PlaygroundError(f"--late-k: must be at least 1 (got {args.late_k})")
        if args.embed_batch < 1:
            raise errors.PlaygroundError(
                f"--embed-batch: must be at least 1 (got {args.embed_batch})"
            )
        if not 0 <= args.busy_timeout < float("inf"):  # NaN fails too
            raise errors.PlaygroundError(
                f"--busy-timeout: must be 0 or more seconds (got {args.busy_timeout:g})"
            )
        if not Path(args.db).is_file():
            raise errors.PlaygroundError(f"no database at {args.db}")
        db = open_database(args.db, create=False, busy_timeout=args.busy_timeout)
        try:
            ids = _session_ids(db, list(args.ids), args.experiment)
            if not ids:
                where = (
                    f"experiment {args.experiment!r} in {args.db}" if args.experiment else args.db
                )
                raise errors.PlaygroundError(f"no sessions in {where}: nothing to compute")
            return asyncio.run(_run(db, ids, args, out, err))
        finally:
            db.close()
    except errors.PlaygroundError as exc:
        print(f"error: {exc}", file=err)
        return 2


async def _run(db: Any, ids: list[str], args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # Not through playground.factory: that imports the openai client, seconds of start-up
    # this command never needs.
    from playground.embedding.cache import CachingEmbedder
    from playground.embedding.minilm import MiniLMEmbedder
    from playground.geometry.store import ComputeStats, compute_many

    embedder = CachingEmbedder(MiniLMEmbedder())
    stats = ComputeStats()
    with progress_cli.ProgressBar(err, enabled=not args.no_progress) as bar:
        rows = await compute_many(
            db,
            ids,
            embedder,
            recompute=args.recompute,
            late_k=args.late_k,
            batch=args.embed_batch,
            stats=stats,
            on_progress=bar.advance,
        )
    print(
        f"features: {len(rows)} session{'' if len(rows) == 1 else 's'} with {embedder.name}:"
        f" {stats.computed} computed, {len(rows) - stats.computed} already stored,"
        f" {stats.embedded} text{'' if stats.embedded == 1 else 's'} embedded"
        f" (model load {stats.model_seconds:.2f} s, embedding {stats.embed_seconds:.2f} s,"
        f" features {stats.features_seconds:.2f} s)",
        file=err,
    )
    if args.format == "table":
        out.write(render_table(rows, embedder.name))
    elif args.format == "csv":
        out.write(to_csv(rows))
    else:
        out.write(to_json(rows, embedder.name))
    return 0
