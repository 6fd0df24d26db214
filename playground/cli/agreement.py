"""``playground report``'s agreement flags (judge and geometry against the humans).

The flags are added to ``report``'s parser; :func:`options` turns them into the keyword
arguments of :func:`playground.report.agreement.build_agreement`.
"""

from __future__ import annotations

import argparse
from typing import Any

from playground import errors
from playground.cli.flag_ranges import COUNT
from playground.report.agreement import MIN_PAIRS, MIN_SESSIONS, MISSING_FEATURES


def add_arguments(rep: Any) -> None:
    """Add the agreement flags to ``playground report``'s parser."""
    g = rep.add_argument_group("agreement: judge, geometry and humans")
    g.add_argument(
        "--agreement",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="judge/geometry agreement with the human raters (default: on)",
    )
    g.add_argument(
        "--agreement-judge",
        metavar="RATER",
        help="the judge for pairwise predictions (default: the one that scored most sessions)",
    )
    g.add_argument(
        "--min-pairs",
        type=COUNT,
        default=MIN_PAIRS,
        metavar="N",
        help=f"fewer rated pairs print 'not enough pairs' ({MIN_PAIRS})",
    )
    g.add_argument(
        "--min-sessions",
        type=COUNT,
        default=MIN_SESSIONS,
        metavar="N",
        help=f"fewer sessions rated by judge and humans print 'not enough sessions' ({MIN_SESSIONS})",
    )
    g.add_argument(
        "--missing-features",
        choices=list(MISSING_FEATURES),
        default="drop",
        help="geometry features missing in some sessions: drop them (default) or impute the median",
    )
    g.add_argument(
        "--features-model",
        metavar="MODEL",
        help="embedding model of the stored features (default: the most common one)",
    )
    g.add_argument(
        "--compute-features",
        action="store_true",
        help="first compute and store the geometry features of sessions that have none (MiniLM)",
    )


def options(args: Any) -> dict[str, Any]:
    """The flags as ``build_report(agreement_options=...)``; ``{"skip": True}`` when off.

    Raises:
        PlaygroundError: a minimum below 1.
    """
    if not getattr(args, "agreement", True):
        return {"skip": True}
    min_pairs = getattr(args, "min_pairs", MIN_PAIRS)
    min_sessions = getattr(args, "min_sessions", MIN_SESSIONS)
    if min_pairs < 1 or min_sessions < 1:
        raise errors.PlaygroundError(
            f"--min-pairs and --min-sessions must be at least 1 (got {min_pairs}, {min_sessions})"
        )
    out: dict[str, Any] = {
        "judge": getattr(args, "agreement_judge", None),
        "features_model": getattr(args, "features_model", None),
        "min_pairs": min_pairs,
        "min_sessions": min_sessions,
        "missing": getattr(args, "missing_features", "drop"),
    }
    if getattr(args, "compute_features", False):
        from playground.factory import local_embedder

        out["embedder"] = local_embedder()
    return out
