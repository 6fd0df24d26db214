"""Text renderings of a ratings report: an aligned terminal table and long-format CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from playground.rating.store import CONVERSATION_METRICS, PARTICIPANT_ITEMS
from playground.report import agreement_format
from playground.report.model import Report

LABELS = {i.key: i.label for i in (*PARTICIPANT_ITEMS, *CONVERSATION_METRICS)}
MOST_MARKED = 10
CSV_COLUMNS = ["section", "condition", "condition_b", "metric", "subject", "statistic", "value"]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one: ``1 rater``, ``2 raters``, ``0 raters``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def _table(headers: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell; the first ``left`` columns left-aligned."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        out = [
            str(c).ljust(w) if i < left else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *map(line, rows)]


def render_table(report: Report) -> str:
    """The report as aligned plain text for a terminal."""
    c = report.counts
    scope = f"experiment {report.experiment}" if report.experiment else "all sessions"
    out = [
        f"Ratings report: {scope}",
        f"{count(c.sessions, 'session')} ({c.rated_sessions} rated), {count(c.raters, 'rater')}, "
        f"{count(c.conversation_ratings, 'conversation rating')}, "
        f"{count(c.preferences, 'preference')}, {count(c.marks, 'unnatural-turn mark')}, "
        f"{count(c.questionnaires, 'questionnaire')} "
        f"from {count(c.respondents, 'participant')}",
        f"conditions: {', '.join(report.conditions) or 'none'}",
    ]
    if c.conversation_ratings:
        out += ["", "Conversation ratings (1 = strongly disagree .. 7 = strongly agree)"]
        rows = [
            [LABELS[m.metric], m.condition, str(m.n), _num(m.median, 1), _num(m.mean),
             f"{_num(m.q1, 1)}-{_num(m.q3, 1)}", *(str(m.distribution[v]) for v in range(1, 8))]
            for m in report.metrics
        ]  # fmt: skip
        heads = ["metric", "condition", "n", "median", "mean", "IQR", *map(str, range(1, 8))]
        out += _table(heads, rows, left=2)
    if report.comparisons and c.conversation_ratings:
        out += ["", "Between conditions: Mann-Whitney U, two-sided; p_holm over the 7 metrics;"]
        out += ["r = rank-biserial, positive when the first condition is rated higher"]
        rows = [
            [f"{k.condition_a} vs {k.condition_b}", LABELS[k.metric], f"{k.n_a}/{k.n_b}",
             _num(k.u, 1), _p(k.p), _p(k.p_holm), _num(k.r)]
            for k in report.comparisons
        ]  # fmt: skip
        out += _table(["pair", "metric", "n", "U", "p", "p_holm", "r"], rows, left=2)
    if report.preferences:
        out += ["", "Pairwise preference (share chosen, Wilson 95% interval; binomial test vs 50%)"]
        rows = [
            [f"{s.condition_a} vs {s.condition_b}", str(s.n),
             *(f"{x.condition} {x.chosen} ({100 * x.share:.0f}% [{100 * x.ci_low:.0f}-"
               f"{100 * x.ci_high:.0f}])" for x in s.shares),
             _p(s.p), str(s.chose_first)]
            for s in report.preferences
        ]  # fmt: skip
        heads = ["conditions", "n", "chosen", "chosen", "p", "shown first (A) chosen"]
        out += _table(heads, rows, left=4)
        rows = [
            [r.rater, f"{r.condition_a} vs {r.condition_b}", str(r.chose_shown_a),
             str(r.chose_shown_b),
             f"{r.condition_a} {r.chose_condition_a}, {r.condition_b} {r.chose_condition_b}"]
            for r in report.rater_preferences
        ]  # fmt: skip
        out += ["", "Preferences per rater (A, B: Conversation A and B as the rater saw them,"]
        out += ["A shown first; which condition each was differs from pair to pair)"]
        heads = ["rater", "conditions", "chose A", "chose B", "chosen by condition"]
        out += _table(heads, rows, left=2)
        rows = [
            [x.rater, f"{x.shown_a} ({x.shown_a_condition})",
             f"{x.shown_b} ({x.shown_b_condition})", f"{x.chosen} (= {x.chosen_condition})"]
            for x in report.choices
        ]  # fmt: skip
        out += ["", "Choices as the rater saw them"]
        out += _table(["rater", "Conversation A", "Conversation B", "chose"], rows, left=4)
    if c.marks:
        out += ["", "Unnatural-turn marks per condition"]
        rows = [
            [m.condition, str(m.conversations), str(m.rated_conversations), str(m.total),
             _num(m.mean_per_conversation), _num(m.mean_per_rated_conversation)]
            for m in report.condition_marks
        ]  # fmt: skip
        heads = ["condition", "conversations", "rated", "marks", "per conv.", "per rated conv."]
        out += _table(heads, rows)
        marked = [m for m in report.conversation_marks if m.marks]
        top = sorted(marked, key=lambda m: (-(m.per_message or 0), -m.marks, m.session_id))
        rows = [
            [m.session_id, m.condition, str(m.messages), str(m.marks), _num(m.per_message)]
            for m in top[:MOST_MARKED]
        ]
        more = (
            f" ({MOST_MARKED} of {len(marked)}; all in csv/json)"
            if len(marked) > MOST_MARKED
            else ""
        )
        out += ["", f"Most marked conversations{more}"]
        out += _table(["session", "condition", "messages", "marks", "per message"], rows, left=2)
    if c.conversation_ratings:
        out += ["", "Inter-rater agreement (Krippendorff's alpha, ordinal)"]
        rows = [
            [LABELS[a.metric], _num(a.alpha, 3), str(a.raters), str(a.shared_sessions)]
            for a in report.agreement
        ]
        out += _table(["metric", "alpha", "raters", "sessions rated by 2+"], rows)
    if report.participant:
        out += ["", "Participant questionnaire"]
        rows = [
            [LABELS[m.metric], m.condition, str(m.n), _num(m.median, 1), _num(m.mean)]
            for m in report.participant
        ]
        out += _table(["item", "condition", "n", "median", "mean"], rows, left=2)
    out += agreement_format.render_lines(report.agreement_with_humans, _table)
    out += ["", "Methods: " + "; ".join(report.methods) + "."]
    return "\n".join(out) + "\n"


def csv_rows(report: Report) -> list[list[Any]]:
    """Long-format rows: section, condition, condition_b, metric, subject, statistic, value."""
    rows: list[list[Any]] = []

    def add(section: str, stats: dict[str, Any], *, cond: str = "", cond_b: str = "",
            metric: str = "", subject: str = "") -> None:  # fmt: skip
        for name, value in stats.items():
            rows.append([section, cond, cond_b, metric, subject, name, value])

    add("counts", report.counts.model_dump())
    for m in report.metrics:
        dist = {f"count_{v}": n for v, n in m.distribution.items()}
        add("conversation", {**m.model_dump(include={"n", "median", "mean", "q1", "q3"}), **dist},
            cond=m.condition, metric=m.metric)  # fmt: skip
    for k in report.comparisons:
        add("comparison", k.model_dump(include={"n_a", "n_b", "u", "p", "r", "p_holm"}),
            cond=k.condition_a, cond_b=k.condition_b, metric=k.metric)  # fmt: skip
    for s in report.preferences:
        add("preference", {"n": s.n, "p": s.p, "chose_first": s.chose_first},
            cond=s.condition_a, cond_b=s.condition_b)  # fmt: skip
        for x, other in zip(s.shares, (s.condition_b, s.condition_a), strict=True):
            add("preference_share", x.model_dump(exclude={"condition"}), cond=x.condition,
                cond_b=other)  # fmt: skip
    for r in report.rater_preferences:
        add("rater_preference",
            r.model_dump(include={"chose_condition_a", "chose_condition_b", "chose_shown_a",
                                  "chose_shown_b"}),
            cond=r.condition_a, cond_b=r.condition_b, subject=r.rater)  # fmt: skip
    for ch in report.choices:
        add("preference_choice",
            {"rater": ch.rater, "session_a": ch.shown_a, "session_b": ch.shown_b,
             "chosen": ch.chosen, "chosen_condition": ch.chosen_condition},
            cond=ch.shown_a_condition, cond_b=ch.shown_b_condition,
            subject=f"{ch.rater}: {ch.shown_a} vs {ch.shown_b}")  # fmt: skip
    for cm in report.conversation_marks:
        add("conversation_marks", cm.model_dump(include={"messages", "marks", "per_message", "rated"}),
            cond=cm.condition, subject=cm.session_id)  # fmt: skip
    for dm in report.condition_marks:
        add("condition_marks", dm.model_dump(exclude={"condition"}), cond=dm.condition)
    for a in report.agreement:
        add("agreement", a.model_dump(exclude={"metric"}), metric=a.metric)
    for m in report.participant:
        add("participant", m.model_dump(include={"n", "median", "mean", "q1", "q3"}),
            cond=m.condition, metric=m.metric)  # fmt: skip
    rows += agreement_format.csv_rows(report.agreement_with_humans)
    return rows


def to_csv(report: Report) -> str:
    """The report in long format (one statistic per row), ready for pandas or R."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in csv_rows(report):
        writer.writerow(["" if v is None else int(v) if isinstance(v, bool) else v for v in row])
    return buf.getvalue()
