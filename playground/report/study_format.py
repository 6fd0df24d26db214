"""The study report as aligned plain text for a terminal (its JSON is the model's own)."""

from __future__ import annotations

from playground.rating.user_study import USER_STUDY_METRICS
from playground.report.format import _num, _p, _table, count
from playground.report.study_model import LEFT_OUT_WHY, StudyReport

LABELS = {m.key: m.label for m in USER_STUDY_METRICS}


def _head(report: StudyReport) -> list[str]:
    c = report.counts
    ids = [p.id for p in report.plans]
    scope = f"plan {ids[0]}" if len(ids) == 1 else f"{len(ids)} plans pooled"
    return [
        f"Study report: {scope}",
        f"{count(c.conversations, 'conversation')} run, {count(c.people, 'person', 'people')}; "
        f"{count(c.questionnaire_ratings, 'questionnaire rating')}, "
        f"{count(c.style_matches, 'style match', 'style matches')}, "
        f"{count(c.favourites, 'favourite')}, {count(c.inference_pairs, 'inference pair')}",
        f"conditions: {', '.join(report.conditions) or 'none'}",
        "",
        "Plans",
        *_table(
            ["plan", "created", "status", "conditions in order", "run", "people",
             "questionnaires", "final answers"],
            [
                [p.id, p.created_at[:16], p.status, ", ".join(p.conditions) or "-",
                 f"{p.run}/{p.conversations}", str(len(p.people)), str(p.questionnaires),
                 str(p.final_answers)]
                for p in report.plans
            ],
            left=4,
        ),
    ]  # fmt: skip


def _questionnaire(report: StudyReport) -> list[str]:
    if not report.questionnaire:
        return []
    rated = {s.metric for s in report.questionnaire if s.n}
    out = ["", "Questionnaire (1 = strongly disagree .. 7 = strongly agree)"]
    rows = [
        [LABELS.get(s.metric, s.metric), s.condition, str(s.n), _num(s.median, 1), _num(s.mean)]
        for s in report.questionnaire
        if s.metric in rated
    ]
    out += _table(["statement", "condition", "n", "median", "mean"], rows, left=2)
    unrated = [LABELS.get(f.metric, f.metric) for f in report.friedman if f.metric not in rated]
    if unrated:
        out += [f"(no ratings yet: {', '.join(unrated)})"]
    out += ["", "Across the conditions, within people: Friedman test (people who rated all)"]
    rows = [
        [LABELS.get(f.metric, f.metric), str(f.n), _num(f.statistic), _p(f.p),
         _num(f.kendall_w), f.note]
        for f in report.friedman
        if f.metric in rated
    ]  # fmt: skip
    return out + _table(["statement", "n", "chi2", "p", "Kendall W", ""], rows)


def _styles(report: StudyReport) -> list[str]:
    out: list[str] = []
    if report.style_matching:
        out += ["", "Style matching (chance 1/3; exact one-sided binomial test)"]
        rows = [
            [m.condition, f"{m.correct}/{m.n}", _num(m.accuracy, 3), _p(m.p)]
            for m in report.style_matching
        ]
        out += _table(["agent's condition", "correct", "accuracy", "p"], rows)
        found = {k for row in report.confusion.values() for k in row}
        chosen = [c for c in report.conditions if c in found]
        chosen += sorted(found - set(chosen))
        rows = [
            [truth, *(str(row.get(k, 0)) for k in chosen)]
            for truth, row in report.confusion.items()
        ]
        out += ["", "Styles as named (rows: the agent's condition; columns: the style chosen)"]
        out += _table(["agent's condition", *chosen], rows)
    if report.favourites:
        out += ["", "Favourite agent, by its condition"]
        rows = [[f.condition, str(f.count), _num(f.share, 3)] for f in report.favourites]
        out += _table(["condition", "people", "share"], rows)
    return out


def _inference(report: StudyReport) -> list[str]:
    if not report.inference:
        return []
    judge = report.judge is not None
    out = [
        "",
        "How well the agents inferred people's reasons (the person's own reason vs the agents'"
        " interpretation of their message)",
    ]
    heads = ["condition", "human messages", "with reason", "pairs", "cosine", "sd"]
    if judge:
        heads += ["judged", "judge 1-5", "failed"]
    rows = []
    for r in report.inference:
        row = [r.condition, str(r.human_messages), str(r.with_reason), str(r.n),
               _num(r.mean_cosine, 3), _num(r.sd_cosine, 3)]  # fmt: skip
        if judge:
            row += [str(r.judged), _num(r.mean_judge), str(r.judge_failed)]
        rows.append(row)
    out += _table(heads, rows)
    out += left_out_lines(report)
    if not report.similarity:
        out += ["(no cosine similarities: the embedding model was not loaded)"]
    if judge:
        out += [f"judge: {report.judge}"]
    if report.judge_failures:
        out += [f"Judge failures ({len(report.judge_failures)}), counted as failed, not rated:"]
        out += [f"  {line}" for line in report.judge_failures]
    return out


def left_out_lines(report: StudyReport) -> list[str]:
    """How many messages with a reason the inference measure leaves out, and why (none: [])."""
    total = report.inference[-1] if report.inference else None
    if total is None or not total.left_out:
        return []
    n = sum(total.left_out.values())
    why = "; ".join(f"{k}: {LEFT_OUT_WHY[w]}" for w, k in sorted(total.left_out.items()))
    lines = [
        f"Left out: {n} of {total.with_reason} messages with a reason have no agent"
        f" interpretation to compare with ({why}):"
    ]
    lines += [
        f"  {x.session_id} message {x.message_id} ({x.person}, {x.condition}): {x.why}"
        for x in report.inference_left_out
    ]
    return lines


def render_table(report: StudyReport) -> str:
    """The report as aligned plain text."""
    out = _head(report) + _questionnaire(report) + _styles(report) + _inference(report)
    if report.notes:
        out += ["", "Notes:", *(f"- {n}" for n in report.notes)]
    out += ["", "Methods: " + "; ".join(report.methods) + "."]
    return "\n".join(out) + "\n"
