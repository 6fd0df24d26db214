"""Renderings of the STORM report: the paper's Table 2 as aligned text, CSV and JSON."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from playground.storm.metric_records import GroupMetrics
from playground.storm.report import DialogueRow, GroupRow, StormReport

EMPTY = "–"
NO_JUDGE = "no judge"


@dataclass
class Column:
    group: str
    head: str
    cells: list[str]
    left: bool = False


def _num(x: float | None, digits: int = 2) -> str:
    return EMPTY if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return EMPTY if x is None else f"{100 * x:.1f}%"


def _signed(x: float | None, digits: int = 3) -> str:
    return EMPTY if x is None else f"{x:+.{digits}f}"


def render_columns(columns: Sequence[Column]) -> list[str]:
    """Columns under two header lines: a group name spans the columns that share it."""
    widths = [max(len(c.head), *(len(x) for x in c.cells)) for c in columns]
    spans: list[tuple[str, list[int]]] = []
    for i, c in enumerate(columns):
        if spans and spans[-1][0] == c.group:
            spans[-1][1].append(i)
        else:
            spans.append((c.group, [i]))
    for group, idx in spans:  # a group name wider than its columns widens them evenly
        span = sum(widths[i] for i in idx) + 2 * (len(idx) - 1)
        for k, i in enumerate(idx):
            extra = max(0, len(group) - span)
            widths[i] += extra // len(idx) + (1 if k < extra % len(idx) else 0)
    top = "  ".join(
        group.ljust(sum(widths[i] for i in idx) + 2 * (len(idx) - 1)) for group, idx in spans
    )

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            x.ljust(w) if c.left else x.rjust(w)
            for x, w, c in zip(cells, widths, columns, strict=True)
        ).rstrip()

    rows = [line([c.cells[r] for c in columns]) for r in range(len(columns[0].cells))]
    return [top.rstrip(), line([c.head for c in columns]), line(["-" * w for w in widths]), *rows]


def _judge_cell(g: GroupMetrics | None, value: float | None, digits: int = 2) -> str:
    if g is None:
        return EMPTY
    if not g.judged:
        return NO_JUDGE
    return _num(value, digits)


def _pair(
    rows: Sequence[GroupRow], group: str, get: Callable[[GroupMetrics], float | None],
    fmt: Callable[[float | None], str],
) -> list[Column]:  # fmt: skip
    def cells(access: str) -> list[str]:
        out = []
        for r in rows:
            g = r.with_profile if access == "with" else r.without_profile
            out.append(EMPTY if g is None else fmt(get(g)))
        return out

    return [
        Column(group, "w/Profile", cells("with")),
        Column(group, "w/o Profile", cells("without")),
    ]


def _judged(
    rows: Sequence[GroupRow], group: str, get: Callable[[GroupMetrics], float | None]
) -> Column:
    """A judge's figure, without profile access only (as the paper reports Clarify and SSA)."""
    g = [r.without_profile for r in rows]
    return Column(group, "w/o Profile", [_judge_cell(x, get(x) if x else None) for x in g])


def _group_table(rows: Sequence[GroupRow], *columns: list[Column] | Column) -> list[str]:
    """One row per "assistant (uncertainty %)", then the given columns (pairs or single)."""
    cols = [Column("", "Assistant (Uncertainty)", [r.label for r in rows], left=True)]
    for c in columns:
        cols += c if isinstance(c, list) else [c]
    return render_columns(cols)


def _ratio(rows: Sequence[GroupRow], group: str, part: Callable[[GroupMetrics], int],
           whole: Callable[[GroupMetrics], int]) -> list[Column]:  # fmt: skip
    """A pair of "part/whole" counts (e.g. unrated turns / turns)."""

    def cells(access: str) -> list[str]:
        out = []
        for r in rows:
            g = r.with_profile if access == "with" else r.without_profile
            out.append(EMPTY if g is None else f"{part(g)}/{whole(g)}")
        return out

    return [
        Column(group, "w/Profile", cells("with")),
        Column(group, "w/o Profile", cells("without")),
    ]


def table2(report: StormReport) -> list[str]:
    """The paper's Table 2 layout: one row per "assistant (uncertainty %)", and how many user
    turns gave no readable satisfaction (left out of every figure)."""
    rows = report.rows
    return _group_table(
        rows,
        _pair(rows, "Average Satisfaction", lambda g: g.average_satisfaction, _num),
        _pair(rows, "High Satisfaction Rate", lambda g: g.high_rate, _pct),
        _pair(rows, "Improved Satisfaction Rate", lambda g: g.improved_rate, _pct),
        _judged(rows, "Clarify", lambda g: g.clarify),
        _judged(rows, "SSA", lambda g: g.ssa),
        _pair(rows, "n dialogues", lambda g: g.n, str),
        _ratio(rows, "Unrated turns", lambda g: g.missing_satisfaction, lambda g: g.turns),
    )


def missing_table(report: StormReport) -> list[str]:
    """Per group: the turns whose ratings could not be read, and the dialogues each figure
    rests on (the rates' denominators)."""
    rows = report.rows
    return _group_table(
        rows,
        _ratio(rows, "Unrated sat. (turns)", lambda g: g.missing_satisfaction, lambda g: g.turns),
        _ratio(rows, "Unrated clarity (turns)", lambda g: g.missing_clarity, lambda g: g.turns),
        _ratio(rows, "Avg/Final/High: dialogues", lambda g: g.n_rated, lambda g: g.n),
        _ratio(rows, "Improved/Trend: dialogues", lambda g: g.n_compared, lambda g: g.n),
        _ratio(rows, "Mean C: dialogues", lambda g: g.n_scored, lambda g: g.n),
    )  # fmt: skip


def more_table(report: StormReport) -> list[str]:
    """Further figures per group, the self-rated ones apart from the judge's."""
    rows = report.rows
    return _group_table(
        rows,
        _pair(rows, "Final Satisfaction", lambda g: g.final_satisfaction, _num),
        _pair(rows, "Trend (per turn)", lambda g: g.trend, _signed),
        _pair(rows, "Mean C", lambda g: g.mean_c, _signed),
        _pair(rows, "Judged (Clarify)", lambda g: g.judged, str),
        _pair(rows, "Self-rated clarity", lambda g: g.self_clarify, _num),
    )


def dialogue_table(report: StormReport) -> list[str]:
    """One line per dialogue."""
    ds = report.dialogues

    def col(head: str, get: Callable[[DialogueRow], str], left: bool = False) -> Column:
        return Column("", head, [get(d) for d in ds], left)

    return render_columns([
        col("session", lambda d: d.session_id, True),
        col("assistant (uncertainty)", lambda d: _row_label(d), True),
        col("profile", lambda d: "w/" if d.profile_access else "w/o", True),
        col("task", lambda d: d.task, True),
        col("turns", lambda d: str(d.metrics.turns)),
        col("unrated sat.", lambda d: str(d.metrics.missing_satisfaction)),
        col("unrated clar.", lambda d: str(d.metrics.missing_clarity)),
        col("final", lambda d: _num(d.metrics.final_satisfaction)),
        col("avg", lambda d: _num(d.metrics.average_satisfaction)),
        col("trend", lambda d: _signed(d.metrics.trend)),
        col("high", lambda d: _yes(d.metrics.high)),
        col("improved", lambda d: _yes(d.metrics.improved)),
        col("mean C", lambda d: _signed(d.metrics.mean_c)),
        col("Clarify", lambda d: _num(d.metrics.clarify) if d.judge else NO_JUDGE),
        col("pairs judged", lambda d: f"{d.metrics.judged_pairs}/{d.pairs}"),
        col("SSA", lambda d: _num(d.metrics.ssa) if d.judge else NO_JUDGE),
        col("self-rated", lambda d: _num(d.metrics.self_clarify)),
        col("status", lambda d: d.status + (f" ({len(d.problems)} problems)" if d.problems else ""), True),
    ])  # fmt: skip


def _row_label(d: DialogueRow) -> str:
    from playground.storm.report import group_label

    return group_label(d.assistant_model, d.assistant, int(d.uncertainty or 0))


def missing_line(report: StormReport) -> str:
    """One sentence: how many user turns gave no readable rating, and how many dialogues have
    too few rated turns for a figure."""
    ms = [d.metrics for d in report.dialogues if d.metrics.turns]
    turns = sum(x.turns for x in ms)
    sat = sum(x.missing_satisfaction for x in ms)
    clar = sum(x.missing_clarity for x in ms)
    none = sum(1 for x in ms if x.satisfaction_rated == 0)
    one = sum(1 for x in ms if x.satisfaction_rated == 1)
    text = (
        f"Unrated: satisfaction in {sat} of {turns} user turns, clarity in {clar};"
        " left out of every figure, never counted as a number."
    )
    if none:
        text += (
            f" {none} dialogue{'s' if none != 1 else ''} with no rated satisfaction (no figure)."
        )
    if one:
        text += (
            f" {one} dialogue{'s' if one != 1 else ''} with one rated turn only (no Improved value,"
            " no trend)."
        )
    return text


def _yes(x: bool | None) -> str:
    return EMPTY if x is None else "yes" if x else "no"


def render_table(report: StormReport, *, dialogues: bool = False) -> str:
    """The report as aligned plain text: Table 2, further figures, methods."""
    scope = f"experiment {report.experiment}" if report.experiment else "all"
    judged = sum(1 for d in report.dialogues if d.judge)
    if report.judge:
        judge = f"Clarify and SSA from {report.judge} ({judged} of {len(report.dialogues)} dialogues judged)"
        others = sorted(set(report.judges) - {report.judge})
        if others:
            judge += f"; other judges in the database: {', '.join(others)} (--judge)"
    else:
        judge = "Clarify and SSA: no judge (run `playground storm-judge` with a judge model)"
    out = [f"STORM report: {len(report.dialogues)} dialogues ({scope})", judge]
    out += [missing_line(report), ""]
    out += table2(report)
    out += [
        "",
        "More per group. Self-rated clarity: the Clarify formula over the simulated users' own"
        " clarity ratings; it is not a judge's Clarify.",
    ]
    out += more_table(report)
    out += [
        "",
        "Missing values per group: user turns whose rating could not be read (counted in no"
        " figure), and the dialogues each figure is over (part/all).",
    ]
    out += missing_table(report)
    if dialogues:
        out += ["", "Dialogues"]
        out += dialogue_table(report)
    out += ["", "Methods:"] + [f"- {line}" for line in report.methods]
    return "\n".join(out) + "\n"


GROUP_FIELDS = [
    "n", "judged", "n_rated", "n_compared", "n_scored", "n_self_rated", "turns",
    "missing_satisfaction", "missing_clarity", "average_satisfaction", "final_satisfaction",
    "trend", "high_rate", "improved_rate", "mean_c", "clarify", "ssa", "self_clarify", "self_ssa",
]  # fmt: skip
DIALOGUE_METRICS = [
    "turns", "satisfaction_rated", "missing_satisfaction", "missing_clarity",
    "final_satisfaction", "average_satisfaction", "trend", "high_turn_share", "high",
    "improved_turn_share", "improved", "mean_c", "clarify", "judged_pairs", "ssa",
    "self_clarify", "self_ssa",
]  # fmt: skip
#: A curve's point where the user gave no readable value.
NOT_RATED = "NA"


def _settings_cells(report: StormReport) -> dict[str, object]:
    o = report.options
    return {
        "judge": report.judge or "",
        "clarify_method": report.clarify_method,
        "clarify_formula": report.clarify_formula,
        "rates": o["rates"],
        "high_threshold": o["high_threshold"],
        "high_on": o["high_on"],
        "c_weights": ",".join(f"{w:g}" for w in o["weights"]),
        "goal": report.goal or "not computed",
        "ssa_formula": f"{o['ssa_alpha']:g}*({o['ssa_lambda']:g}*S_avg)+{o['ssa_beta']:g}*Clarify",
    }


def _cell(v: object) -> object:
    return "" if v is None else int(v) if isinstance(v, bool) else v


def _curve_cell(values: Sequence[float | None]) -> str:
    return " ".join(NOT_RATED if x is None else f"{x:g}" for x in values)


def to_csv(report: StormReport, *, dialogues: bool = False) -> str:
    """One row per group and access mode (or per dialogue with ``dialogues``), every metric."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    extra = _settings_cells(report)
    if dialogues:
        head = ["session_id", "user", "status", "experiment_id", "profile_id", "category", "task",
                "difficulty", "uncertainty", "profile_access", "assistant", "assistant_model",
                "user_model", "pairs"]  # fmt: skip
        w.writerow([*head, *DIALOGUE_METRICS, "satisfaction_curve", "clarity_curve", *extra])
        for d in report.dialogues:
            md = d.metrics.model_dump()
            w.writerow([
                *(_cell(getattr(d, k)) for k in head), *(_cell(md[k]) for k in DIALOGUE_METRICS),
                _curve_cell(d.satisfaction), _curve_cell(d.clarity),
                *extra.values(),
            ])  # fmt: skip
        return buf.getvalue()
    w.writerow(["label", "assistant_model", "assistant", "uncertainty", "profile_access",
                *GROUP_FIELDS, *extra])  # fmt: skip
    for r in report.rows:
        for access, g in ((1, r.with_profile), (0, r.without_profile)):
            if g is None:
                continue
            gd = g.model_dump()
            w.writerow([r.label, r.assistant_model, r.assistant, r.uncertainty, access,
                        *(_cell(gd[k]) for k in GROUP_FIELDS), *extra.values()])  # fmt: skip
    return buf.getvalue()


def to_json(report: StormReport) -> str:
    """Everything: options, methods, the groups with their curves, every dialogue."""
    return report.model_dump_json(indent=2)
