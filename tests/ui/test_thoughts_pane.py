"""ThoughtsPane: live bubbles from bridge events, selection, sorting, requests and the popup."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollArea

from playground import domain, events
from ui.bridge import EngineBridge
from ui.panes.decisions.evaluation_popup import EvaluationPopup
from ui.panes.thoughts.thought_bubble import SORT_SCORE
from ui.panes.thoughts.thoughts_pane import ThoughtsPane
from ui.selection import SelectedParticipant


def thought(tid: int, agent: str = "Ana", **kw) -> domain.Thought:
    fields = {
        "text": f"thought number {tid} of {agent}",
        "system": 2,
        "stimuli": ["memory:3", "message:5"],
        "saliency": 0.41,
        "created_step": tid,
        "last_access": tid,
    }
    fields.update(kw)
    return domain.Thought(id=tid, agent=agent, **fields)


def evaluation(tid: int, score: float, step: int = 1, **kw) -> domain.Evaluation:
    fields = {
        "rating": 4,
        "distribution": {1: 0.0, 2: 0.05, 3: 0.2, 4: 0.6, 5: 0.15},
        "reasons_for": ["It answers Bo's question", "Nobody mentioned the budget yet"],
        "reasons_against": ["Ana spoke a moment ago", "It may sound off-topic"],
        "expected": 3.85,
        "silence_factor": 1.0404,
        "method": "logprobs",
    }
    fields.update(kw)
    return domain.Evaluation(thought_id=tid, step=step, score=score, **fields)


@pytest.fixture
def setup(qtbot):
    bridge = EngineBridge()
    selection = SelectedParticipant()
    pane = ThoughtsPane(bridge, selection)
    qtbot.addWidget(pane)
    pane.resize(380, 700)
    pane.show()
    return bridge, selection, pane


def form(bridge: EngineBridge, t: domain.Thought) -> None:
    bridge.dispatch(events.ThoughtFormed(thought=t))


def evaluate(bridge: EngineBridge, agent: str, ev: domain.Evaluation, retained=False) -> None:
    bridge.dispatch(events.ThoughtEvaluated(agent=agent, evaluation=ev, retained=retained))


def ids(pane: ThoughtsPane) -> list[int]:
    return [b.thought_id for b in pane.bubbles()]


def test_shows_only_the_selected_agent_and_switches(setup) -> None:
    bridge, selection, pane = setup
    form(bridge, thought(1, "Ana"))
    assert pane.bubbles() == []  # nobody selected yet
    selection.select("Ana")
    form(bridge, thought(2, "Bo"))
    form(bridge, thought(3, "Ana", text="Budget first"))
    assert ids(pane) == [3, 1]  # newest first
    assert pane.bubbles()[0].text() == "Budget first"
    assert "Ana" in pane.header.title.text()

    selection.select("Bo")
    assert ids(pane) == [2]
    assert "Bo" in pane.header.title.text()
    selection.select("")
    assert pane.bubbles() == []
    assert pane.header.title.text() == "Inner thoughts"


def test_score_badge_updates_and_sort_by_score(setup) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    for tid in (1, 2, 3):
        form(bridge, thought(tid))
    assert [b.score_text() for b in pane.bubbles()] == ["–", "–", "–"]

    evaluate(bridge, "Ana", evaluation(1, 4.123))
    evaluate(bridge, "Ana", evaluation(2, 2.5))
    evaluate(bridge, "Bo", evaluation(3, 5.0))  # another agent's evaluation is not Ana's
    scores = {b.thought_id: b.score_text() for b in pane.bubbles()}
    assert scores == {1: "4.12", 2: "2.50", 3: "–"}

    pane.sort_combo.setCurrentText(SORT_SCORE)
    assert ids(pane) == [1, 2, 3]  # unevaluated last
    evaluate(bridge, "Ana", evaluation(3, 4.5, step=2))
    assert ids(pane) == [3, 1, 2]
    evaluate(bridge, "Ana", evaluation(1, 1.0, step=3), retained=True)
    # Scores of the latest step come first: 1 was re-scored at step 3, the others are older.
    assert ids(pane) == [1, 3, 2]
    assert pane.bubbles()[0]._retained_tag.isVisibleTo(pane.bubbles()[0])
    form(bridge, thought(4))
    assert ids(pane) == [1, 3, 2, 4]

    pane.sort_combo.setCurrentText("Newest first")
    assert ids(pane) == [4, 3, 2, 1]
    # The layout shows the bubbles in the same order, top to bottom.
    QApplication.processEvents()
    tops = [b.y() for b in pane.bubbles()]
    assert tops == sorted(tops)
    assert len(set(tops)) == 4


def test_click_forces_expression_and_delete_button_requests_deletion(setup, qtbot) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    form(bridge, thought(7))
    bubble = pane.bubbles()[0]

    with qtbot.waitSignal(pane.force_express_requested, timeout=1000) as sig:
        qtbot.mouseClick(bubble, Qt.MouseButton.LeftButton)
    assert sig.args == ["Ana", 7]

    with qtbot.waitSignal(pane.delete_requested, timeout=1000) as sig:
        qtbot.mouseClick(bubble.delete_button, Qt.MouseButton.LeftButton)
    assert sig.args == ["Ana", 7]
    assert ids(pane) == [7]  # the engine decides; the bubble goes on ThoughtDeleted

    bridge.dispatch(events.ThoughtDeleted(agent="Ana", thought_id=7))
    assert pane.bubbles() == []


def test_expressed_thought_is_highlighted_and_links_to_its_message(setup, qtbot) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    form(bridge, thought(1))
    form(bridge, thought(2))
    bridge.dispatch(events.ThoughtExpressed(agent="Ana", thought_id=1, message_id=9, forced=True))
    bubble = next(b for b in pane.bubbles() if b.thought_id == 1)
    assert bubble.is_expressed()
    assert bubble.property("expressed") is True
    assert bubble.said_label.isVisibleTo(bubble)
    assert "said in #9" in bubble.said_label.text()
    assert "1 said" in pane.header.count.text()

    with qtbot.waitSignal(pane.message_focus_requested, timeout=1000) as sig:
        bubble.said_label.linkActivated.emit("9")
    assert sig.args == [9]

    # An expressed thought cannot be forced again.
    with qtbot.assertNotEmitted(pane.force_express_requested):
        qtbot.mouseClick(bubble, Qt.MouseButton.LeftButton)

    # The state survives switching participants.
    selection.select("Bo")
    selection.select("Ana")
    assert next(b for b in pane.bubbles() if b.thought_id == 1).is_expressed()


def test_stimulus_focus_highlights_a_thought_and_links_emit_focus(setup, qtbot) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    for tid in range(1, 6):
        form(bridge, thought(tid, stimuli=["memory:3", "thought:1"]))
    selection.focus_stimulus("thought:2")
    highlighted = [b.thought_id for b in pane.bubbles() if b.is_highlighted()]
    assert highlighted == [2]
    selection.focus_stimulus("")
    assert not any(b.is_highlighted() for b in pane.bubbles())

    bubble = pane.bubbles()[0]
    with qtbot.waitSignal(selection.stimulus_focused, timeout=1000) as sig:
        bubble._stimuli.linkHovered.emit("memory:3")
    assert sig.args == ["memory:3"]
    with qtbot.waitSignal(selection.stimulus_focused, timeout=1000) as sig:
        bubble._stimuli.left.emit()
    assert sig.args == [""]
    with qtbot.waitSignal(selection.stimulus_focused, timeout=1000) as sig:
        bubble._stimuli.linkActivated.emit("thought:1")
    assert sig.args == ["thought:1"]
    assert [b.thought_id for b in pane.bubbles() if b.is_highlighted()] == [1]


def test_evaluation_popup_explains_the_score(setup) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    form(bridge, thought(1))
    bubble = pane.bubbles()[0]
    assert bubble.show_evaluation() is None  # not evaluated yet

    evaluate(bridge, "Ana", evaluation(1, 3.2, step=1))
    evaluate(bridge, "Ana", evaluation(1, 4.01, step=3, method="parsed"), retained=True)
    popup = bubble.show_evaluation()
    assert isinstance(popup, EvaluationPopup)
    assert popup.parent() is pane
    assert not popup.isModal()
    text = popup.text()
    for reason in ("It answers Bo's question", "Nobody mentioned the budget yet"):
        assert reason in text
    for reason in ("Ana spoke a moment ago", "It may sound off-topic"):
        assert reason in text
    assert "no logprobs and no samples were used" in text
    assert "1.02^2" in text
    assert "4.01" in text
    assert "step 1 → 3.20 · step 3 → 4.01" in text
    assert "60%" in text


def test_offline_heuristics_are_listed(qtbot) -> None:
    ev = evaluation(
        1,
        3.0,
        method="offline-heuristic",
        heuristics={"relevance": 0.62, "urgency": 0.1},
    )
    popup = EvaluationPopup(thought(1), [ev])
    qtbot.addWidget(popup)
    text = popup.text()
    assert "eight measured signals" in text
    assert "relevance: 0.62" in text
    assert "urgency: 0.10" in text


def test_reset_forgets_everything(setup) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    form(bridge, thought(1))
    pane.reset()
    assert pane.bubbles() == []
    selection.select("Bo")
    selection.select("Ana")
    assert pane.bubbles() == []


def test_hidden_pages_stay_live_and_follow_the_sort_order(setup) -> None:
    bridge, selection, pane = setup
    selection.select("Ana")
    form(bridge, thought(1))
    form(bridge, thought(2))
    selection.select("Bo")
    form(bridge, thought(3))  # Ana's page is hidden but kept up to date
    evaluate(bridge, "Ana", evaluation(1, 4.9))
    bridge.dispatch(events.ThoughtDeleted(agent="Ana", thought_id=2))
    pane.sort_combo.setCurrentText(SORT_SCORE)
    selection.select("Ana")
    assert ids(pane) == [1, 3]
    assert pane.bubbles()[0].score_text() == "4.90"
    assert pane.header.count.text() == "2 thoughts"


def _rebuild(pane: ThoughtsPane, thoughts: list[domain.Thought], evals=(), messages=()) -> None:
    """What a replay jump does: the whole state at a moment, thoughts and messages in bulk."""
    from playground.history.ledger import ThoughtLedger

    ledger = ThoughtLedger()
    ledger.apply([events.ThoughtFormed(thought=t) for t in thoughts])
    ledger.apply([events.ThoughtEvaluated(agent=t.agent, evaluation=e) for t, e in evals])
    pane.begin_rebuild()
    pane.load_thoughts(ledger)
    pane.load_messages(list(messages))
    pane.end_rebuild()


def test_a_replay_jump_keeps_the_bubbles_of_thoughts_still_shown(setup, monkeypatch) -> None:
    from ui.widgets import deferred

    monkeypatch.setattr(deferred, "FILL_DELAY_MS", 60_000)
    _bridge, selection, pane = setup
    selection.select("Ana")
    _rebuild(pane, [thought(t) for t in range(1, 13)])
    before = {b.thought_id: b for b in pane.bubbles()}
    # A step back: the three newest thoughts go; every other bubble keeps its thought.
    _rebuild(pane, [thought(t) for t in range(1, 10)])
    assert ids(pane) == list(range(9, 0, -1))
    assert all(pane.bubble(t) is before[t] for t in range(1, 10))
    # And on again: they come back, in order, in the bubbles that were freed.
    _rebuild(pane, [thought(t) for t in range(1, 13)])
    assert ids(pane) == list(range(12, 0, -1))
    assert all(pane.bubble(t) is before[t] for t in range(1, 10))
    assert [b.text() for b in pane.bubbles()] == [
        f"thought number {t} of Ana" for t in range(12, 0, -1)
    ]
    QApplication.processEvents()
    tops = [b.y() for b in pane.bubbles()]
    assert tops == sorted(tops), "laid out in that order"
    assert len(set(tops)) == 12, "laid out in that order"
    # Sorted by score, where a jump reorders the thoughts that stay: all in the new order.
    pane.sort_combo.setCurrentText(SORT_SCORE)
    scored = [(thought(t), evaluation(t, 1 + t / 10)) for t in range(1, 13)]
    _rebuild(pane, [t for t, _ in scored], scored)
    assert ids(pane) == list(range(12, 0, -1))
    flipped = [(thought(t), evaluation(t, 5 - t / 10)) for t in range(1, 13)]
    _rebuild(pane, [t for t, _ in flipped], flipped)
    assert ids(pane) == list(range(1, 13))
    assert [b.score_text() for b in pane.bubbles()] == [f"{5 - t / 10:.2f}" for t in range(1, 13)]
    QApplication.processEvents()
    tops = [b.y() for b in pane.bubbles()]
    assert tops == sorted(tops)
    assert len(set(tops)) == 12


def test_message_stimuli_are_described_after_a_replay_jump(setup) -> None:
    _bridge, selection, pane = setup
    selection.select("Ana")
    msg = domain.Message(id=5, speaker="Bo", text="Budget first?", step=5, at="")
    _rebuild(pane, [thought(1)], messages=[msg])
    assert pane._describe_ref("message:5") == "message:5 — Bo: Budget first?"
    assert pane._describe_ref("message:6") == ""


def test_the_sampled_method_says_how_many_samples_were_read():
    from ui.panes.decisions.evaluation_popup import method_explanation

    text = method_explanation("sampled", 17)
    assert "sampled" in text
    assert "17 samples were read" in text
    assert "samples were read" not in method_explanation("logprobs")


def test_bubbles_keep_their_x_and_step_clear_of_the_scroll_bar(qtbot) -> None:
    """At the narrowest the window gives it, the pane shows every bubble whole beside the scroll
    bar: its right border, ✕ and "scored at step N", even with four-digit ids (issue 34)."""
    from PySide6.QtCore import QPoint

    from ui.window.window_layout import MIN_THOUGHTS

    bridge, selection = EngineBridge(), SelectedParticipant()
    pane = ThoughtsPane(bridge, selection)
    qtbot.addWidget(pane)
    pane.resize(max(MIN_THOUGHTS, pane.minimumSizeHint().width()), 500)
    pane.show()
    selection.select("Ana")
    for tid in range(9990, 10000):
        form(bridge, thought(tid, created_step=998, last_access=998))
        evaluate(bridge, "Ana", evaluation(tid, 4.25, step=999))
        bridge.dispatch(events.ThoughtExpressed(agent="Ana", thought_id=tid, message_id=998))
    page = pane._stack.currentWidget()
    assert isinstance(page, QScrollArea)
    qtbot.waitUntil(page.verticalScrollBar().isVisible)
    view = page.viewport()
    for bubble in pane.bubbles()[:3]:
        assert bubble.scored_text() == "scored at step 999"
        for part in (bubble, bubble.delete_button, bubble.scored_label):
            right = part.mapTo(view, QPoint(part.width(), 0)).x()
            assert right <= view.width(), (part.objectName(), right, view.width())
