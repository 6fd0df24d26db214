"""The memory table's Weight column: hidden in a narrow pane, shown in a wide one, and at any one
width either shown or hidden for good (it once came and went at the same width)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from playground import domain, events
from ui.bridge import EngineBridge
from ui.panes.memory.memory_pane import MemoryPane
from ui.panes.memory.memory_table import COL_TEXT, COL_WEIGHT, MIN_TEXT_WIDTH
from ui.selection import SelectedParticipant


def test_the_weight_column_is_steady_at_every_width(qtbot):
    bridge, selection = EngineBridge(), SelectedParticipant()
    pane = MemoryPane(bridge, selection)
    qtbot.addWidget(pane)
    bridge.dispatch(events.ParticipantJoined(name="Ana", participant_kind="ai"))
    selection.select("Ana")
    for i in range(1, 6):
        bridge.dispatch(
            events.MemoryChanged(
                agent="Ana",
                change="added",
                memory=domain.MemoryItem(id=i, kind="fact", text=f"memory {i} " * 8, weight=0.5),
            )
        )
    pane.show()
    table = pane.table
    flips = []
    hidden_at: dict[int, bool] = {}
    for width in range(180, 480, 2):
        pane.resize(width, 400)
        QApplication.processEvents()
        hidden_at[width] = table.isColumnHidden(COL_WEIGHT)
        for height in (410, 420, 400):  # the same width again: nothing may change
            pane.resize(width, height)
            QApplication.processEvents()
            if table.isColumnHidden(COL_WEIGHT) != hidden_at[width]:
                flips.append(width)
    assert not flips, f"the Weight column came and went at widths {flips[:5]}"
    assert hidden_at[180]
    assert not hidden_at[478]
    # Growing, it shows once (and only once); the text keeps its minimum all along.
    states = [hidden_at[w] for w in sorted(hidden_at)]
    assert states == sorted(states, reverse=True), "hidden, then shown, as the pane widens"
    for width in range(180, 480, 2):
        pane.resize(width, 400)
        QApplication.processEvents()
        if not table.isColumnHidden(COL_WEIGHT):
            assert table.columnWidth(COL_TEXT) >= MIN_TEXT_WIDTH
