"""The statistics report over human ratings, computed entirely from the database (no Qt).

Sessions are grouped by ``sessions.condition``. Every observation is one rater's rating of one
session (ratings are not averaged per session first). Methods, stated once in ``Report.methods``:

- quantiles: ``numpy.percentile(method="linear")`` (Hyndman & Fan type 7, R's default);
- Mann-Whitney U: ``scipy.stats.mannwhitneyu(a, b, alternative="two-sided", method="auto")``
  (exact below 8 per group without ties, otherwise normal approximation with tie correction);
  ``u`` is U of the first condition; rank-biserial ``r = 2U/(n_a n_b) - 1`` is positive when the
  first condition is rated higher; p is Holm-corrected across the 7 metrics of each pair;
- preferences: Wilson 95 % interval and a two-sided exact binomial test against 0.5;
- agreement: Krippendorff's alpha, ordinal, raters x sessions with missing values.
"""

from __future__ import annotations

import itertools
import math
import threading
import warnings
from collections import Counter, defaultdict
from typing import Any

import sqlite_utils

from playground.rating.store import CONVERSATION_METRICS, PARTICIPANT_ITEMS
from playground.report import format as fmt
from playground.report.model import (
    METHODS,
    NO_CONDITION,
    Agreement,
    Comparison,
    ConditionMarks,
    ConversationMarks,
    Counts,
    MetricSummary,
    PreferenceChoice,
    PreferenceSummary,
    RaterPreference,
    Report,
    Share,
)
from playground.storage.database import snapshot


def _float(x: Any) -> float | None:
    value = float(x)
    return None if math.isnan(value) else value


def holm(pvalues: list[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (None entries are skipped and stay None).

    Sorted ascending, p_(i) becomes max over j <= i of min(1, (m - j) p_(j)), j from 0.
    """
    present = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for j, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - j) * p))
        out[i] = running
    return out


def summarise(condition: str, metric: str, values: list[int]) -> MetricSummary:
    """n, median, mean, quartiles and the 1..7 distribution of some ratings."""
    import numpy as np

    dist = Counter(values)
    counts = {v: dist.get(v, 0) for v in range(1, 8)}
    if not values:
        return MetricSummary(
            condition=condition, metric=metric, n=0, median=None, mean=None, q1=None, q3=None,
            distribution=counts,
        )  # fmt: skip
    q1, q3 = np.percentile(values, [25, 75], method="linear")
    return MetricSummary(
        condition=condition, metric=metric, n=len(values), median=float(np.median(values)),
        mean=float(np.mean(values)), q1=float(q1), q3=float(q3), distribution=counts,
    )  # fmt: skip


def compare(a: str, b: str, metric: str, xs: list[int], ys: list[int]) -> Comparison:
    """Two-sided Mann-Whitney U of ``xs`` (condition a) against ``ys`` (b); p_holm unset."""
    from scipy import stats

    u = p = r = None
    if xs and ys:
        with warnings.catch_warnings():
            # Identical values in both groups give p = nan with a warning: reported as None.
            warnings.simplefilter("ignore", RuntimeWarning)
            res = stats.mannwhitneyu(xs, ys, alternative="two-sided")
        u, p = _float(res.statistic), _float(res.pvalue)
        r = 2 * u / (len(xs) * len(ys)) - 1 if u is not None else None
    return Comparison(
        condition_a=a, condition_b=b, metric=metric, n_a=len(xs), n_b=len(ys), u=u, p=p, r=r,
        p_holm=None,
    )  # fmt: skip


def krippendorff_alpha(table: dict[str, dict[str, int]]) -> tuple[float | None, int, int]:
    """Ordinal alpha of ``{rater: {session: value}}``; returns (alpha, raters, shared sessions)."""
    import krippendorff
    import numpy as np

    raters = sorted(table)
    units = sorted({s for row in table.values() for s in row})
    shared = sum(1 for s in units if sum(1 for r in raters if s in table[r]) >= 2)
    if len(raters) < 2 or not shared:
        return None, len(raters), shared
    data = np.full((len(raters), len(units)), np.nan)
    col = {s: j for j, s in enumerate(units)}
    for i, r in enumerate(raters):
        for s, v in table[r].items():
            data[i, col[s]] = v
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    except ValueError:  # every rating the same value: alpha is 0/0, undefined
        return None, len(raters), shared
    return _float(alpha), len(raters), shared


def _scope(
    db: sqlite_utils.Database, experiment: str | None, session_ids: list[str] | None
) -> dict[str, tuple[str, int]]:
    """session id → (condition, message count) for the sessions in the report."""
    sql = (
        "SELECT s.id, s.condition, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
        " FROM sessions s"
    )
    params: list[Any] = []
    if experiment is not None:
        from playground.experiments.results import resolve

        experiment = resolve(db, experiment)  # an id, a unique id prefix or a unique name
        sql += " WHERE s.experiment_id = ?"
        params.append(experiment)
    rows = {sid: (cond or NO_CONDITION, int(n)) for sid, cond, n in db.execute(sql, params)}
    if session_ids is None:
        return rows
    from playground.rating.store import RatingStore

    store = RatingStore(db)
    return {
        sid: rows[sid] for sid in (store.resolve_session(s) for s in session_ids) if sid in rows
    }


def build_report(
    db: sqlite_utils.Database,
    *,
    experiment: str | None = None,
    session_ids: list[str] | None = None,
    agreement_options: dict[str, Any] | None = None,
    stop: threading.Event | None = None,
) -> Report:
    """Compute the whole report from the database.

    Args:
        db: an open session database.
        experiment: only the sessions of this experiment.
        session_ids: only these sessions (ids or unique prefixes); combined with experiment.
        agreement_options: keyword arguments of :func:`playground.report.agreement.build_agreement`
            (judge, features_model, min_pairs, missing, embedder); ``{"skip": True}`` leaves
            the judge/geometry agreement out (see :func:`with_agreement`).
        stop: when set (from another thread), the slow agreement part stops with
            :class:`~playground.errors.Cancelled`.

    Raises:
        PlaygroundError: unknown experiment, or a bad agreement option.
        SessionNotFound: an unknown session id.
        Cancelled: ``stop`` was set.
    """
    # The ratings, preferences and marks in one snapshot (a rater may be saving meanwhile); the
    # agreement part reads (and, with an embedder, writes) on its own, after it.
    with snapshot(db):
        report = _human_report(db, experiment, session_ids)
    if (agreement_options or {}).get("skip"):
        return report
    return with_agreement(
        db, report, session_ids=session_ids, agreement_options=agreement_options, stop=stop
    )


def _human_report(
    db: sqlite_utils.Database, experiment: str | None, session_ids: list[str] | None
) -> Report:
    """The report without its judge and geometry agreement."""
    scope = _scope(db, experiment, session_ids)
    cond = {sid: c for sid, (c, _) in scope.items()}
    conditions = sorted(set(cond.values()))
    conv: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    part: dict[tuple[str, str], list[int]] = defaultdict(list)
    raters: set[str] = set()
    n_conv = 0
    questionnaires: set[tuple[str, str]] = set()
    for sid, rater, instrument, metric, value in db.execute(
        "SELECT session_id, rater, instrument, metric, value FROM ratings"
    ):
        if sid not in cond:
            continue
        if instrument == "conversation":
            raters.add(rater)
            conv[metric][rater][sid] = int(value)
            n_conv += 1
        else:
            part[(cond[sid], metric)].append(int(value))
            questionnaires.add((sid, rater))

    def values(condition: str, metric: str) -> list[int]:
        return [v for row in conv[metric].values() for s, v in row.items() if cond[s] == condition]

    metric_keys = [m.key for m in CONVERSATION_METRICS]
    metrics = [summarise(c, m, values(c, m)) for m in metric_keys for c in conditions]
    comparisons: list[Comparison] = []
    for a, b in itertools.combinations(conditions, 2):
        pair = [compare(a, b, m, values(a, m), values(b, m)) for m in metric_keys]
        adjusted = holm([c.p for c in pair])
        comparisons += [
            c.model_copy(update={"p_holm": h}) for c, h in zip(pair, adjusted, strict=True)
        ]
    participant = [
        summarise(c, item.key, part[(c, item.key)])
        for item in PARTICIPANT_ITEMS
        for c in conditions
        if part[(c, item.key)]
    ]
    agreement = []
    for m in metric_keys:
        alpha, n_raters, shared = krippendorff_alpha(conv[m])
        agreement.append(Agreement(metric=m, alpha=alpha, raters=n_raters, shared_sessions=shared))
    prefs, per_rater, choices = _preferences(db, cond, raters)
    conv_marks, cond_marks, n_marks = _marks(db, scope, conv, raters)
    rated = {s for rows in conv.values() for row in rows.values() for s in row}
    counts = Counts(
        sessions=len(scope), rated_sessions=len(rated), raters=len(raters),
        respondents=len({r for _, r in questionnaires}), conversation_ratings=n_conv,
        questionnaires=len(questionnaires), preferences=len(choices),
        marks=n_marks,
    )  # fmt: skip
    return Report(
        experiment=experiment, conditions=conditions, counts=counts, metrics=metrics,
        comparisons=comparisons, preferences=prefs, rater_preferences=per_rater, choices=choices,
        conversation_marks=conv_marks, condition_marks=cond_marks, agreement=agreement,
        participant=participant, methods=METHODS,
    )  # fmt: skip


def with_agreement(
    db: sqlite_utils.Database,
    report: Report,
    *,
    session_ids: list[str] | None = None,
    agreement_options: dict[str, Any] | None = None,
    stop: threading.Event | None = None,
) -> Report:
    """``report``, built with ``agreement_options={"skip": True}``, completed with the judge and
    geometry agreement: the same report :func:`build_report` gives in one go, in two steps, so
    that a window can show the quick part while the slow one (leave-one-out regressions) runs.

    Args:
        db: the session database the report was built from.
        report: the report without its agreement.
        session_ids: the ``session_ids`` the report was built with.
        agreement_options: as for :func:`build_report`.
        stop: as for :func:`build_report`.

    Raises:
        PlaygroundError: unknown experiment, or a bad agreement option.
        SessionNotFound: an unknown session id.
        Cancelled: ``stop`` was set.
    """
    scope = _scope(db, report.experiment, session_ids)
    agreement = _with_humans(db, scope, agreement_options or {}, stop)
    return report.model_copy(update={"agreement_with_humans": agreement})


def _with_humans(
    db: sqlite_utils.Database,
    scope: dict[str, tuple[str, int]],
    options: dict[str, Any],
    stop: threading.Event | None,
) -> Any:
    if options.get("skip"):
        return None
    from playground.report.agreement import build_agreement

    return build_agreement(db, list(scope), stop=stop, **options)


def _preferences(
    db: sqlite_utils.Database, cond: dict[str, str], raters: set[str]
) -> tuple[list[PreferenceSummary], list[RaterPreference], list[PreferenceChoice]]:
    """Per condition pair, per rater and per choice. ``first_id`` is the session the rater saw
    first, as Conversation A (``ui/rating/pairwise.py``); ``second_id`` is Conversation B."""
    from scipy import stats

    tally: dict[tuple[str, str], list[tuple[str, bool, bool]]] = defaultdict(list)
    choices: list[PreferenceChoice] = []
    for rater, first, second, chosen, reason in db.execute(
        "SELECT rater, first_id, second_id, chosen_id, reason FROM preferences ORDER BY id"
    ):
        if first not in cond or second not in cond or cond[first] == cond[second]:
            continue
        raters.add(rater)
        a, b = sorted((cond[first], cond[second]))
        tally[(a, b)].append((rater, cond[chosen] == a, chosen == first))
        choices.append(
            PreferenceChoice(
                rater=rater, shown_a=first, shown_a_condition=cond[first], shown_b=second,
                shown_b_condition=cond[second], chosen="A" if chosen == first else "B",
                chosen_condition=cond[chosen], reason=reason or "",
            )
        )  # fmt: skip
    summaries, per_rater = [], []
    for (a, b), rows in sorted(tally.items()):
        total, k = len(rows), sum(1 for _, chose_a, _ in rows if chose_a)
        test = stats.binomtest(k, total, 0.5)
        ci = test.proportion_ci(confidence_level=0.95, method="wilson")
        shares = [
            Share(condition=a, chosen=k, share=k / total, ci_low=ci.low, ci_high=ci.high),
            Share(
                condition=b, chosen=total - k, share=(total - k) / total,
                ci_low=1 - ci.high, ci_high=1 - ci.low,
            ),
        ]  # fmt: skip
        summaries.append(
            PreferenceSummary(
                condition_a=a,
                condition_b=b,
                n=total,
                shares=shares,
                p=float(test.pvalue),
                chose_first=sum(1 for *_, first in rows if first),
            )
        )
        by_condition = Counter((r, chose_a) for r, chose_a, _ in rows)
        by_screen = Counter((r, shown_first) for r, _, shown_first in rows)
        for r in sorted({r for r, _, _ in rows}):
            per_rater.append(
                RaterPreference(
                    rater=r,
                    condition_a=a,
                    condition_b=b,
                    chose_condition_a=by_condition[(r, True)],
                    chose_condition_b=by_condition[(r, False)],
                    chose_shown_a=by_screen[(r, True)],
                    chose_shown_b=by_screen[(r, False)],
                )
            )
    return summaries, per_rater, choices


def _marks(
    db: sqlite_utils.Database,
    scope: dict[str, tuple[str, int]],
    conv: dict[str, dict[str, dict[str, int]]],
    raters: set[str],
) -> tuple[list[ConversationMarks], list[ConditionMarks], int]:
    counts: Counter[str] = Counter()
    for sid, rater in db.execute("SELECT session_id, rater FROM turn_marks"):
        if sid in scope:
            counts[sid] += 1
            raters.add(rater)
    rated = {s for rows in conv.values() for row in rows.values() for s in row}
    per_conv = [
        ConversationMarks(
            session_id=sid,
            condition=c,
            messages=n,
            marks=counts[sid],
            per_message=counts[sid] / n if n else None,
            rated=sid in rated,
        )
        for sid, (c, n) in sorted(scope.items())
    ]
    per_cond = []
    for c in sorted({c for c, _ in scope.values()}):
        rows = [m for m in per_conv if m.condition == c]
        on_rated = [m.marks for m in rows if m.rated]
        total = sum(m.marks for m in rows)
        per_cond.append(
            ConditionMarks(
                condition=c,
                conversations=len(rows),
                rated_conversations=len(on_rated),
                total=total,
                mean_per_conversation=total / len(rows) if rows else None,
                mean_per_rated_conversation=sum(on_rated) / len(on_rated) if on_rated else None,
            )
        )
    return per_conv, per_cond, sum(counts.values())


render_table = fmt.render_table
to_csv = fmt.to_csv


def to_json(report: Report) -> str:
    """The report as indented JSON."""
    return report.model_dump_json(indent=2)
