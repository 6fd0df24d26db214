"""The agreement section of the ratings report as text lines and long-format CSV rows."""

from __future__ import annotations

from typing import Any

from playground.rating.store import CONVERSATION_METRICS
from playground.report.agreement_model import (
    PREDICTOR_LABELS,
    AgreementWithHumans,
    MetricAgreement,
    PairwiseAccuracy,
)

TITLE = "Agreement: judge, geometry and humans"
LABELS = {m.key: m.label for m in CONVERSATION_METRICS}


def _num(x: float | None, digits: int = 2, missing: str = "-") -> str:
    return missing if x is None else f"{x:.{digits}f}"


def metric_cells(m: MetricAgreement, *, with_p: bool = True, missing: str = "-") -> list[str]:
    """One metric's row: judge, metric, sessions, humans, rho, (p,) alpha, alpha among humans.

    Args:
        m: the judge's agreement with the humans on one metric.
        with_p: include the p-value of rho (the report's text has it, the window does not).
        missing: what stands for a number that could not be computed.
    """
    rho = m.note if m.rho is None and m.note else _num(m.rho, 2, missing)
    p = [_num(m.p, 3, missing)] if with_p else []
    return [
        m.judge,
        LABELS.get(m.metric, m.metric),
        str(m.n),
        str(m.humans),
        rho,
        *p,
        _num(m.alpha, 3, missing),
        _num(m.alpha_humans, 3, missing),
    ]


def percent(a: PairwiseAccuracy) -> str:
    """``71.3% [58.1-81.7]``, or the note when there is no number."""
    if a.accuracy is None or a.ci_low is None or a.ci_high is None:
        return a.note or "-"
    return f"{100 * a.accuracy:.1f}% [{100 * a.ci_low:.1f}-{100 * a.ci_high:.1f}]"


def shown(a: AgreementWithHumans | None) -> bool:
    """Whether there is anything to show: a judge or a human pairwise preference."""
    return a is not None and bool(a.judges or a.human_pairs or a.tied_pairs)


def render_lines(a: AgreementWithHumans | None, table: Any) -> list[str]:
    """The section's lines (empty when there is nothing to show).

    Args:
        a: the agreement record of a report.
        table: the report's column aligner, ``table(headers, rows, left)``.
    """
    if a is None or not shown(a):
        return []
    out = ["", TITLE]
    if a.metrics:
        out += [
            "Judge against the human raters per metric: Spearman's rho (judge score vs mean human"
            " rating), Krippendorff's alpha (ordinal) with and without the judge"
        ]
        rows = [metric_cells(m) for m in a.metrics]
        heads = ["judge", "metric", "sessions", "humans", "rho", "p", "alpha", "alpha humans"]
        out += table(heads, rows, 2)
    elif not a.judges:
        out += ["No judge ratings: run `playground judge` (the offline engine has no judge)."]
    else:
        out += ["No session is rated by both a judge and a human yet."]
    pairs = f"{a.human_pairs} session pair{'' if a.human_pairs == 1 else 's'} with a human"
    pairs += " majority preference"
    pairs += f", {a.tied_pairs} tied left out" if a.tied_pairs else ""
    out += ["", f"Predicting the human preference ({pairs}); TRACE Table 1 for reference"]
    rows = [
        [PREDICTOR_LABELS[p.predictor], str(p.n), percent(p), f"{p.paper:.1f}%"] for p in a.pairwise
    ]
    out += table(["predictor", "pairs", "accuracy [Wilson 95%]", "TRACE paper"], rows, 1)
    details = []
    if a.pairwise_judge:
        details.append(f"judge {a.pairwise_judge}")
    if a.features_model:
        details.append(f"{len(a.features)} features from {a.features_model}")
    if details:
        out.append("(" + "; ".join(details) + ")")
    out += ["", "Agreement methods: " + "; ".join(a.methods) + "."]
    return out


def csv_rows(a: AgreementWithHumans | None) -> list[list[Any]]:
    """Rows for the report's long CSV: section, condition, condition_b, metric, subject,
    statistic, value."""
    if a is None or not shown(a):
        return []
    rows: list[list[Any]] = []
    for m in a.metrics:
        for name in ("n", "humans", "rho", "p", "alpha", "alpha_humans", "note"):
            rows.append(["judge_agreement", "", "", m.metric, m.judge, name, getattr(m, name)])
    for p in a.pairwise:
        for name in ("n", "correct", "accuracy", "ci_low", "ci_high", "paper", "note"):
            rows.append(["pairwise_accuracy", "", "", "", p.predictor, name, getattr(p, name)])
    return rows
