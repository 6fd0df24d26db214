import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Tests for MemoryPane: per-participant memory rows, retrieval highlights, focus, add/edit/delete.


import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from playground import domain, events
from ui import theme
from ui.bridge import EngineBridge
from ui.panes.memory.memory_edit import MemoryEditDialog
from ui.panes.memory.memory_pane import HUMAN_PLACEHOLDER, MemoryPane
from ui.panes.memory.memory_table import COL_SALIENCY, COL_TEXT, RETRIEVED_BG
from ui.selection import SelectedParticipant


@pytest.fixture
def setup(qtbot):
    bridge = EngineBridge()
    selection = SelectedParticipant()
    pane = MemoryPane(bridge, selection)
    qtbot.addWidget(pane)
    return bridge, selection, pane


def add(bridge, agent, mid, text, kind="fact", weight=1.0, change="added"):
    bridge.dispatch(
        events.MemoryChanged(
            agent=agent,
            change=change,
            memory=domain.MemoryItem(id=mid, kind=kind, text=text, weight=weight),
        )
    )


def retrieve(bridge, agent, hits, step=2):
    stimuli = [
        domain.Stimulus(ref=ref, text="…", saliency=sal, random=rnd) for ref, sal, rnd in hits
    ]
    bridge.dispatch(events.MemoriesRetrieved(agent=agent, stimuli=stimuli, step=step))


def ids(pane):
    return [r["id"] for r in pane.rows()]


def bg(pane, mid):
    row = ids(pane).index(mid)
    brush = pane.table.item(row, COL_TEXT).background()
    return brush.color().name() if brush.style() != Qt.BrushStyle.NoBrush else None


def select_row(pane, mid):
    pane.table.selectRow(ids(pane).index(mid))


def test_only_the_selected_agents_memories_show_and_selection_switches(setup):
    bridge, selection, pane = setup
    add(bridge, "Ana", 1, "I surf.")
    add(bridge, "Ana", 2, "I like tea.", kind="interest", weight=0.6)
    add(bridge, "Ben", 1, "I am a chef.")
    assert pane.rows() == []
    assert not pane.add_button.isEnabled()

    selection.select("Ana")
    assert pane.rows() == [
        {
            "id": 1,
            "kind": "fact",
            "text": "I surf.",
            "weight": 1.0,
            "saliency": None,
            "highlighted": False,
        },
        {
            "id": 2,
            "kind": "interest",
            "text": "I like tea.",
            "weight": 0.6,
            "saliency": None,
            "highlighted": False,
        },
    ]
    assert pane.title_label.text() == "Long-term memory — Ana"
    assert pane.count_label.text().startswith("2 memories")
    assert pane.table.rowCount() == 2
    assert pane.table.item(1, 1).text() == "0.60"
    assert pane.add_button.isEnabled()
    assert not pane.edit_button.isEnabled()
    assert not pane.delete_button.isEnabled()

    selection.select("Ben")
    assert [r["text"] for r in pane.rows()] == ["I am a chef."]
    assert pane.title_label.text() == "Long-term memory — Ben"

    add(bridge, "Ana", 3, "Added while Ben is shown.")
    assert ids(pane) == [1]
    selection.select("Ana")
    assert ids(pane) == [1, 2, 3]


def test_retrieved_rows_are_highlighted_sorted_first_and_replaced_by_the_next_retrieval(setup):
    bridge, selection, pane = setup
    selection.select("Ana")
    for mid in range(1, 6):
        add(bridge, "Ana", mid, f"memory {mid}")
    retrieve(
        bridge,
        "Ana",
        [("memory:4", 0.47, False), ("message:3", 0.9, False), ("memory:2", 0.81, False)],
    )

    rows = pane.rows()
    assert ids(pane) == [2, 4, 1, 3, 5]
    assert [(r["saliency"], r["highlighted"]) for r in rows[:3]] == [
        (0.81, True),
        (0.47, True),
        (None, False),
    ]
    assert pane.table.item(0, COL_SALIENCY).text() == "0.81"
    assert pane.table.item(1, COL_SALIENCY).text() == "0.47"
    assert pane.table.item(2, COL_SALIENCY).text() == ""
    assert bg(pane, 2) == RETRIEVED_BG
    assert bg(pane, 1) is None
    assert "2 retrieved at step 2" in pane.count_label.text()

    retrieve(bridge, "Ana", [("memory:5", 0.3, True)], step=3)
    assert ids(pane) == [5, 1, 2, 3, 4]
    assert [r["highlighted"] for r in pane.rows()] == [True, False, False, False, False]
    assert pane.rows()[0]["saliency"] == 0.3
    assert pane.table.item(0, COL_SALIENCY).text() == "random"  # no cosine recorded: no number
    assert bg(pane, 2) is None
    assert bg(pane, 5) == RETRIEVED_BG

    # Another agent's retrieval leaves Ana's highlight alone.
    retrieve(bridge, "Ben", [("memory:1", 0.9, False)], step=4)
    assert ids(pane) == [5, 1, 2, 3, 4]


def test_retrieval_for_a_hidden_agent_shows_when_selected(setup):
    bridge, selection, pane = setup
    add(bridge, "Ana", 1, "a")
    add(bridge, "Ana", 2, "b")
    retrieve(bridge, "Ana", [("memory:2", 0.5, False)])
    selection.select("Ana")
    assert ids(pane) == [2, 1]
    assert pane.rows()[0]["highlighted"]


def test_edit_and_delete_events_update_rows(setup):
    bridge, selection, pane = setup
    selection.select("Ana")
    add(bridge, "Ana", 1, "I surf.")
    add(bridge, "Ana", 2, "I like tea.")
    add(bridge, "Ana", 3, "I run.")
    retrieve(bridge, "Ana", [("memory:3", 0.5, False)])
    select_row(pane, 2)

    add(bridge, "Ana", 2, "I love green tea.", kind="interest", weight=0.4, change="edited")
    assert ids(pane) == [3, 1, 2]
    assert pane.rows()[2] == {
        "id": 2,
        "kind": "interest",
        "text": "I love green tea.",
        "weight": 0.4,
        "saliency": None,
        "highlighted": False,
    }
    assert pane.selected_id() == 2

    add(bridge, "Ana", 3, "I run marathons.", change="edited")
    assert pane.rows()[0]["text"] == "I run marathons."
    assert pane.rows()[0]["highlighted"]

    add(bridge, "Ana", 1, "I surf.", change="deleted")
    assert ids(pane) == [3, 2]
    assert pane.count_label.text().startswith("2 memories")
    add(bridge, "Ana", 3, "I run marathons.", change="deleted")
    assert ids(pane) == [2]
    assert pane.table.rowCount() == 1


def test_add_dialog_emits_add_requested_and_needs_text(setup, qtbot):
    _bridge, selection, pane = setup
    selection.select("Ana")
    dialog = pane.open_add_dialog()
    assert isinstance(dialog, MemoryEditDialog)
    assert [dialog.kind_combo.itemText(i) for i in range(dialog.kind_combo.count())] == [
        "fact",
        "objective",
        "interest",
        "knowledge",
        "experience",
    ]
    assert dialog.weight_spin.value() == 1.0
    assert dialog.weight_spin.minimum() == 0.0
    assert dialog.weight_spin.maximum() == 1.0
    assert dialog.weight_spin.singleStep() == 0.05
    assert not dialog.ok_button.isEnabled()
    dialog.text_edit.setPlainText("   \n ")
    assert not dialog.ok_button.isEnabled()

    dialog.kind_combo.setCurrentText("objective")
    dialog.text_edit.setPlainText("  Win the debate.  ")
    dialog.weight_spin.setValue(0.75)
    assert dialog.ok_button.isEnabled()
    with qtbot.waitSignal(pane.add_requested, timeout=1000) as blocker:
        dialog.accept()
    assert blocker.args == ["Ana", "objective", "Win the debate.", 0.75]


def test_empty_add_dialog_does_not_emit(setup, qtbot):
    _bridge, selection, pane = setup
    selection.select("Ana")
    dialog = pane.open_add_dialog()
    with qtbot.assertNotEmitted(pane.add_requested):
        dialog.accept()
    assert dialog.isVisible()


def test_edit_dialog_emits_edit_requested_with_the_rows_id(setup, qtbot):
    bridge, selection, pane = setup
    selection.select("Ana")
    add(bridge, "Ana", 1, "I surf.")
    add(bridge, "Ana", 7, "I like tea.", kind="interest", weight=0.6)
    assert pane.open_edit_dialog() is None
    assert not pane.edit_button.isEnabled()

    select_row(pane, 7)
    assert pane.edit_button.isEnabled()
    dialog = pane.open_edit_dialog()
    assert dialog is not None
    assert dialog.kind_combo.currentText() == "interest"
    assert dialog.text_edit.toPlainText() == "I like tea."
    assert dialog.weight_spin.value() == pytest.approx(0.6)
    dialog.text_edit.setPlainText("I like green tea.")
    dialog.weight_spin.setValue(0.9)
    with qtbot.waitSignal(pane.edit_requested, timeout=1000) as blocker:
        dialog.accept()
    assert blocker.args == ["Ana", 7, "interest", "I like green tea.", 0.9]


def test_edit_dialog_keeps_an_engine_kind(setup, qtbot):
    bridge, selection, pane = setup
    selection.select("Ana")
    add(bridge, "Ana", 3, "I said hi.", kind="utterance")
    select_row(pane, 3)
    dialog = pane.open_edit_dialog()
    assert dialog.kind_combo.currentText() == "utterance"
    with qtbot.waitSignal(pane.edit_requested, timeout=1000) as blocker:
        dialog.accept()
    assert blocker.args == ["Ana", 3, "utterance", "I said hi.", 1.0]


def test_double_click_opens_the_edit_dialog(setup, qtbot):
    bridge, selection, pane = setup
    selection.select("Ana")
    add(bridge, "Ana", 4, "I surf.")
    select_row(pane, 4)
    pane.table.itemDoubleClicked.emit(pane.table.item(0, COL_TEXT))
    assert pane._dialog is not None
    assert pane._dialog.text_edit.toPlainText() == "I surf."


def test_delete_emits_delete_requested_only_with_a_selection(setup, qtbot):
    bridge, selection, pane = setup
    selection.select("Ana")
    add(bridge, "Ana", 1, "I surf.")
    add(bridge, "Ana", 2, "I like tea.")
    assert not pane.delete_button.isEnabled()
    select_row(pane, 2)
    assert pane.delete_button.isEnabled()
    with qtbot.waitSignal(pane.delete_requested, timeout=1000) as blocker:
        qtbot.mouseClick(pane.delete_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["Ana", 2]
    assert ids(pane) == [1, 2]  # the pane waits for the engine's memory_changed

    add(bridge, "Ana", 2, "I like tea.", change="deleted")
    assert ids(pane) == [1]
    assert not pane.delete_button.isEnabled()


def test_human_participant_shows_the_placeholder(setup):
    bridge, selection, pane = setup
    bridge.dispatch(events.ParticipantJoined(name="Hana", participant_kind="human"))
    bridge.dispatch(events.ParticipantJoined(name="Ana", participant_kind="ai"))
    add(bridge, "Ana", 1, "I surf.")
    selection.select("Hana")
    assert pane.stack.currentWidget() is pane.placeholder
    assert pane.placeholder.text() == HUMAN_PLACEHOLDER
    assert pane.rows() == []
    assert not pane.add_button.isEnabled()
    assert not pane.edit_button.isEnabled()
    assert not pane.delete_button.isEnabled()
    assert pane.open_edit_dialog() is None

    selection.select("Ana")
    assert pane.stack.currentWidget() is pane.table
    assert ids(pane) == [1]
    assert pane.add_button.isEnabled()


def test_stimulus_focus_highlights_the_row_and_clears(setup):
    bridge, selection, pane = setup
    selection.select("Ana")
    for mid in range(1, 4):
        add(bridge, "Ana", mid, f"memory {mid}")
    retrieve(bridge, "Ana", [("memory:2", 0.6, False)])

    selection.focus_stimulus("memory:3")
    assert pane.focused_id == 3
    assert bg(pane, 3) == QColor(theme.HIGHLIGHT_BG).name()

    selection.focus_stimulus("memory:2")
    assert bg(pane, 2) == QColor(theme.HIGHLIGHT_BG).name()
    assert bg(pane, 3) is None

    selection.focus_stimulus("")
    assert pane.focused_id is None
    assert bg(pane, 2) == RETRIEVED_BG  # the retrieval highlight stays
    assert pane.rows()[0]["highlighted"]

    selection.focus_stimulus("memory:99")  # not this agent's
    assert pane.focused_id is None


def test_focus_scrolls_the_row_into_view(setup, qtbot):
    bridge, selection, pane = setup
    pane.resize(360, 400)
    pane.show()
    qtbot.waitExposed(pane)
    selection.select("Ana")
    for mid in range(1, 201):
        add(bridge, "Ana", mid, f"memory number {mid} with some words to wrap around")
    selection.focus_stimulus("memory:180")
    row = ids(pane).index(180)
    qtbot.waitUntil(
        lambda: (
            pane.table.viewport()
            .rect()
            .contains(pane.table.visualItemRect(pane.table.item(row, COL_TEXT)).center())
        ),
        timeout=2000,
    )


def test_reset_forgets_everything(setup):
    bridge, selection, pane = setup
    selection.select("Ana")
    add(bridge, "Ana", 1, "I surf.")
    pane.reset()
    assert pane.rows() == []
    assert pane.title_label.text() == "Long-term memory — Ana"
    add(bridge, "Ana", 2, "New session.")
    assert ids(pane) == [2]


def test_a_thousand_memories_show_and_re_sort_by_retrieval(setup, qtbot):
    """How fast: bench/bench_memory_pane.py (target under 3 s)."""
    bridge, selection, pane = setup
    pane.resize(360, 700)
    pane.show()
    qtbot.waitExposed(pane)
    for mid in range(1, 1001):
        add(bridge, "Ana", mid, f"Memory {mid}: a sentence long enough to wrap in a narrow pane.")
    selection.select("Ana")
    qtbot.wait(1)
    assert pane.table.rowCount() == 1000

    add(bridge, "Ana", 1001, "One more.")
    retrieve(bridge, "Ana", [(f"memory:{m}", m / 1000, False) for m in (10, 500, 990)])
    retrieve(bridge, "Ana", [(f"memory:{m}", m / 1000, False) for m in (20, 600)])
    qtbot.wait(1)
    assert ids(pane)[:3] == [600, 20, 1]


def test_rows_are_re_measured_when_the_memory_column_changes_width(setup, qtbot):
    bridge, selection, pane = setup
    pane.resize(360, 500)
    pane.show()
    qtbot.waitExposed(pane)
    selection.select("Ana")
    add(bridge, "Ana", 1, "A long memory that wraps over several lines in a narrow pane. " * 3)
    narrow = pane.table.rowHeight(0)
    pane.resize(1200, 500)
    qtbot.waitUntil(lambda: pane.table.rowHeight(0) < narrow, timeout=2000)


def test_a_random_pull_with_a_tiny_negative_cosine_reads_0_00_not_minus(setup):
    bridge, selection, pane = setup
    add(bridge, "Ana", 1, "I surf.")
    selection.select("Ana")
    stimuli = [domain.Stimulus(ref="memory:1", text="…", saliency=0.1, random=True, cosine=-0.001)]
    bridge.dispatch(events.MemoriesRetrieved(agent="Ana", stimuli=stimuli, step=2))
    assert pane.table.item(0, COL_SALIENCY).text() == "random\ncos 0.00"
    assert "cosine to the latest utterance 0.00)" in pane.table.item(0, COL_TEXT).toolTip()


def test_the_memory_text_has_the_width_kind_and_saliency_do_not_need(setup):
    """At the pane's narrowest (1024 px window), Kind and Saliency are as wide as what they show
    and the memory text has the rest: more than either, and more than the two together once a
    wider kind leaves the table (issue 34: the text had about 110 px of 264)."""
    from PySide6.QtWidgets import QApplication

    from ui.panes.memory.memory_table import COL_KIND
    from ui.window.window_layout import MIN_MEMORY

    bridge, selection, pane = setup
    pane.resize(MIN_MEMORY, 600)
    pane.show()
    selection.select("Ana")
    add(bridge, "Ana", 1, "I study octopus behaviour at a small research station.")
    add(bridge, "Ana", 2, "I want to find someone to go surfing with.", kind="objective")
    retrieve(bridge, "Ana", [("memory:1", 0.28, False)])
    QApplication.processEvents()
    header = pane.table.horizontalHeader()
    kind, sal, text = (header.sectionSize(c) for c in (COL_KIND, COL_SALIENCY, COL_TEXT))
    metrics = pane.table.fontMetrics()
    assert (
        metrics.horizontalAdvance("objective") < kind <= metrics.horizontalAdvance("objective") + 12
    )
    assert sal <= max(map(metrics.horizontalAdvance, ("Sal.", "0.28"))) + 12
    assert text > kind + sal, (kind, sal, text)

    add(bridge, "Ana", 3, "Octopuses can open jars.", kind="experience")  # a wider kind arrives
    assert header.sectionSize(COL_KIND) > metrics.horizontalAdvance("experience")
    retrieve(bridge, "Ana", [("memory:2", 0.2, True)])  # a random pull: "random"
    sal = header.sectionSize(COL_SALIENCY)
    assert sal > metrics.horizontalAdvance("random")
    selection.select("")
    selection.select("Ana")  # shown anew: sized to what is shown now
    assert header.sectionSize(COL_SALIENCY) == sal
    retrieve(bridge, "Ana", [("memory:1", 0.31, False)], step=3)  # the random pull is gone
    assert (
        header.sectionSize(COL_SALIENCY)
        <= max(map(metrics.horizontalAdvance, ("Sal.", "0.31"))) + 12
    )
