"""Why nobody spoke: what the decisions of a run of silent steps showed.

The room notes every decision and refusal in a :class:`SilentRun` and starts afresh at each
message; a loop that ends the session after silent steps gives :meth:`SilentRun.explain` as the
end reason, which the window shows in full when :func:`explains_silence`.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground import domain

#: How an end after silent steps starts (after their number); :meth:`SilentRun.explain`.
SILENT_STEPS = "silent steps in a row"
#: What a session that went quiet for lack of motivation suggests changing.
QUIET_ADVICE = (
    "try a more talkative preset (active-contributor), lower the thresholds, or a stronger model"
)


@dataclass
class SilentRun:
    """Why nobody has spoken since the last message: what the decisions of the silent steps
    showed. The room notes every decision and refusal and starts afresh at each message; a loop
    that ends the session after silent steps gives :meth:`explain` as the end reason.

    Attributes:
        best: the Inner Thoughts decision whose score came closest to its threshold (the
            largest score minus threshold; the higher score on a tie).
        reached: a decision's score reached its threshold (so the threshold is not why nobody
            spoke).
        refused: thought drafts refused as empty or placeholder text.
        unspoken: utterances refused as empty or placeholder text (not posted).
        failed: agents whose thoughts could not be formed or rated at a step (see the errors).
    """

    best: domain.Decision | None = None
    reached: bool = False
    refused: int = 0
    unspoken: int = 0
    failed: int = 0

    def note(self, d: domain.Decision) -> None:
        """Take one agent's decision at a silent step into account (its best score: a drawn
        System-1 reply's own score is lower)."""
        score = _best(d)
        if d.policy != "inner-thoughts" or score is None or d.threshold is None:
            return
        if score >= d.threshold:
            self.reached = True
        b = self.best
        if b is None or (score - d.threshold, score) > (
            (_best(b) or 0.0) - (b.threshold or 0.0),
            _best(b) or 0.0,
        ):
            self.best = d

    def explain(self, steps: int) -> str:
        """The end reason after ``steps`` silent steps in a row, with why nobody spoke, e.g.
        ``4 silent steps in a row: no thought's motivation reached the threshold (best 3.10
        against 3.95); try a more talkative preset (active-contributor), lower the thresholds,
        or a stronger model``."""
        head = f"{steps} {SILENT_STEPS}"
        if self.unspoken:
            return (
                f"{head}: the model's messages were unusable ({_count(self.unspoken, 'message')}"
                " refused as empty or placeholder text, such as '...'); try a stronger model"
            )
        if self.best is None:
            if self.refused:
                return (
                    f"{head}: every thought the model formed was unusable"
                    f" ({_count(self.refused, 'thought')} refused as empty or placeholder text,"
                    " such as '...'), so none could be rated; try a stronger model"
                )
            if self.failed:
                return (
                    f"{head}: no thought could be formed or rated ({_count(self.failed, 'failure')},"
                    " see the errors); check the model server, or try a stronger model"
                )
            return head
        if self.reached:
            return head
        b = self.best
        refused = (
            f"; {_count(self.refused, 'other thought')} refused as empty or placeholder text"
            if self.refused
            else ""
        )
        return (
            f"{head}: no thought's motivation reached the threshold (best {_best(b) or 0.0:.2f}"
            f" against {b.threshold or 0.0:.2f}){refused}; {QUIET_ADVICE}"
        )


def _best(d: domain.Decision) -> float | None:
    """A decision's best score (``score`` for one recorded before the best was kept)."""
    return d.best_score if d.best_score is not None else d.score


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def explains_silence(reason: str) -> bool:
    """True for an end reason that says why nobody spoke (:meth:`SilentRun.explain` said more
    than the bare ``N silent steps in a row``): the window shows it in full."""
    return f"{SILENT_STEPS}: " in reason
