"""The closing summary of ``playground storm``: per condition, how the dialogues went."""

from __future__ import annotations

from typing import Any

from playground.domain.simulated_user import CLARITY_NOT_RATED


def summarise(db: Any, experiment_id: str) -> list[dict[str, Any]]:
    """Per condition: finished and failed dialogues, mean average and final satisfaction, mean
    final clarity and judged turn pairs, over the finished dialogues.

    Only the ratings the simulated users gave count: a turn whose satisfaction (clarity) could
    not be read is left out (final = the last rated), and ``unrated`` / ``turns`` say how many
    turns gave no readable satisfaction."""
    conditions = [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT condition FROM experiment_runs WHERE experiment_id = ?",
            [experiment_id],
        ).fetchall()
    ]
    rows = []
    for cond in sorted(conditions, key=_condition_order):
        runs = db.execute(
            "SELECT status, session_id FROM experiment_runs WHERE experiment_id = ? AND condition = ?",
            [experiment_id, cond],
        ).fetchall()
        finished = [sid for status, sid in runs if status == "finished" and sid]
        averages, finals, clarities, judged, turns, unrated = [], [], [], 0, 0, 0
        for sid in finished:
            states = db.execute(
                "SELECT satisfaction, satisfaction_missing, clarity, clarity_explanation"
                " FROM hidden_states WHERE session_id = ? ORDER BY turn",
                [sid],
            ).fetchall()
            sats = [s for s, missing, _, _ in states if not missing]
            clars = [c for _, _, c, why in states if why not in CLARITY_NOT_RATED]
            turns += len(states)
            unrated += len(states) - len(sats)
            if sats:
                averages.append(sum(sats) / len(sats))
                finals.append(sats[-1])
            if clars:
                clarities.append(clars[-1])
            judged += db.execute(
                "SELECT COUNT(*) FROM storm_judgements WHERE session_id = ?", [sid]
            ).fetchone()[0]
        rows.append(
            {
                "condition": cond,
                "done": len(finished),
                "failed": sum(1 for status, _ in runs if status == "failed"),
                "satisfaction": _mean(averages),
                "final_satisfaction": _mean(finals),
                "final_clarity": _mean(clarities),
                "judged_pairs": judged,
                "turns": turns,
                "unrated": unrated,
            }
        )
    return rows


def _condition_order(label: str) -> tuple[int, int]:
    u, _, access = label.partition("/")
    return (int(u[1:]) if u[1:].isdigit() else 0, 0 if access == "no-profile" else 1)


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def format_summary(rows: list[dict[str, Any]]) -> str:
    head = ("condition", "done", "failed", "satisfaction", "final sat.", "final clarity", "judged")
    lines = [
        f"{head[0]:<16}{head[1]:>6}{head[2]:>8}{head[3]:>14}{head[4]:>12}{head[5]:>15}{head[6]:>8}"
        f"{'unrated turns':>15}",
        f"{'-' * 15:<16}{'-' * 5:>6}{'-' * 7:>8}{'-' * 13:>14}{'-' * 11:>12}{'-' * 14:>15}{'-' * 7:>8}"
        f"{'-' * 14:>15}",
    ]

    def f(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f}"

    for r in rows:
        lines.append(
            f"{r['condition']:<16}{r['done']:>6}{r['failed']:>8}{f(r['satisfaction']):>14}"
            f"{f(r['final_satisfaction']):>12}{f(r['final_clarity']):>15}{r['judged_pairs']:>8}"
            f"{str(r['unrated']) + '/' + str(r['turns']):>15}"
        )
    return "\n".join(lines)
