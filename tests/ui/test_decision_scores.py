"""The decision strip's score column says which score it shows: the best thought's against the
threshold, and the chosen thought's too when a System-1 reply was drawn below the best."""

from __future__ import annotations

from playground import domain, events
from ui.bridge import EngineBridge
from ui.panes.decisions.decision_strip import BEST, DecisionStrip


def _decision(**kw: object) -> domain.Decision:
    base: dict[str, object] = {
        "agent": "Ana", "step": 3, "trigger": "new_message", "action": "speak", "thought_id": 2,
        "threshold": 3.95, "turn_type": "open",
    }  # fmt: skip
    return domain.Decision(**{**base, **kw})


def _cells(qtbot, *decisions: domain.Decision) -> list[str]:
    bridge = EngineBridge()
    strip = DecisionStrip(bridge)
    qtbot.addWidget(strip)
    bridge.dispatch(events.TriggerFired(trigger="new_message", message_id=2, generation=1, step=3))
    for d in decisions:
        bridge.dispatch(events.DecisionMade(decision=d, step=3))
    return [row[BEST] for row in strip.rows()]


def test_a_drawn_system1_reply_shows_the_best_score_and_the_chosen_one_labelled(qtbot):
    drawn = _decision(
        score=2.0, best_score=3.9,
        reason="best score 3.90 < imThreshold 3.95; System-1 reply drawn (p=1): thought #2, score 2.00",
    )  # fmt: skip
    best = _decision(thought_id=1, score=4.2, best_score=4.2, reason="best score 4.20 ≥ imThreshold 3.95")  # fmt: skip
    assert _cells(qtbot, drawn, best) == ["best 3.90 / 3.95 · chosen 2.00", "4.20 / 3.95"]


def test_a_recording_without_the_best_score_labels_a_system1_score_as_chosen(qtbot):
    """Decisions recorded before the best score was kept: ``score`` is the best one, except for a
    drawn System-1 reply (its reason gives the best)."""
    old_draw = _decision(score=1.8, reason="best score 3.62 < imThreshold 3.95; System-1 reply drawn (p=0.1)")  # fmt: skip
    old_silent = _decision(
        action="silent", thought_id=None, score=3.62,
        reason="best score 3.62 < imThreshold 3.95; no System-1 reply drawn (p=0.1)",
    )  # fmt: skip
    assert _cells(qtbot, old_draw, old_silent) == ["chosen 1.80 / 3.95", "3.62 / 3.95"]
