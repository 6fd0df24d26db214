"""Sorting thoughts by score never ranks a stale score as if it were current: each bubble says
the step its score is from, and the sort says what it sorts by."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from playground import domain, events
from playground.history.ledger import ThoughtLedger
from ui.bridge import EngineBridge
from ui.panes.thoughts.thought_bubble import SORT_SCORE, SORT_SCORE_HELP
from ui.panes.thoughts.thoughts_pane import ThoughtsPane
from ui.selection import SelectedParticipant


def thought(tid: int) -> domain.Thought:
    return domain.Thought(
        id=tid, agent="Ana", text=f"thought {tid}", system=2, created_step=1, last_access=1
    )


def evaluation(tid: int, score: float, step: int) -> domain.Evaluation:
    return domain.Evaluation(
        thought_id=tid,
        step=step,
        rating=4,
        distribution={4: 1.0},
        reasons_for=[],
        reasons_against=[],
        expected=4.0,
        silence_factor=1.0,
        score=score,
        method="logprobs",
    )


@pytest.fixture
def pane(qtbot):
    bridge = EngineBridge()
    selection = SelectedParticipant()
    p = ThoughtsPane(bridge, selection)
    qtbot.addWidget(p)
    p.resize(320, 700)
    p.show()
    selection.select("Ana")
    return bridge, p


def ids(p: ThoughtsPane) -> list[int]:
    return [b.thought_id for b in p.bubbles()]


def test_current_scores_come_first_and_each_bubble_says_its_step(pane) -> None:
    bridge, p = pane
    for tid in (1, 2, 3, 4):
        bridge.dispatch(events.ThoughtFormed(thought=thought(tid)))
    # Step 3: thought 1 scored high. Step 7: thoughts 2 and 3 scored lower; 4 never scored.
    for tid, score, step in ((1, 4.9, 3), (2, 3.1, 7), (3, 3.5, 7)):
        bridge.dispatch(
            events.ThoughtEvaluated(agent="Ana", evaluation=evaluation(tid, score, step))
        )
    p.sort_combo.setCurrentText(SORT_SCORE)
    assert p.sort_combo.currentText() == SORT_SCORE
    assert "latest step" in SORT_SCORE
    assert ids(p) == [3, 2, 1, 4], "step 7's scores first; step 3's 4.90 is not ranked as current"
    said = {b.thought_id: b.scored_text() for b in p.bubbles()}
    assert said == {1: "scored at step 3", 2: "scored at step 7", 3: "scored at step 7", 4: ""}
    assert "earlier step" in SORT_SCORE_HELP
    assert p.sort_combo.itemData(1, 3) == SORT_SCORE_HELP  # Qt.ToolTipRole: the sort explains
    # Thought 1 re-scored at a new step: now it is current, the others are stale.
    bridge.dispatch(events.ThoughtEvaluated(agent="Ana", evaluation=evaluation(1, 2.0, 9)))
    assert ids(p) == [1, 3, 2, 4]
    assert p.bubble(1).scored_text() == "scored at step 9"


def test_a_replay_jump_sorts_the_same_way(pane) -> None:
    _bridge, p = pane
    p.sort_combo.setCurrentText(SORT_SCORE)
    ledger = ThoughtLedger()
    ledger.apply([events.ThoughtFormed(thought=thought(t)) for t in (1, 2, 3, 4)])
    ledger.apply(
        [
            events.ThoughtEvaluated(agent="Ana", evaluation=evaluation(t, s, st))
            for t, s, st in ((1, 4.9, 3), (2, 3.1, 7), (3, 3.5, 7))
        ]
    )
    p.begin_rebuild()
    p.load_thoughts(ledger)
    p.end_rebuild()
    assert ids(p) == [3, 2, 1, 4]
    assert p.bubble(1).scored_text() == "scored at step 3"
