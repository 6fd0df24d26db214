"""The window's STORM parts on their own: a simulated user's hidden-state bubbles and sparkline,
its private profile in the left pane, the profile editor refusing bad values, and the STORM view
over hand-made rows in a real database."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPlainTextEdit

from playground import domain, errors, events
from playground.domain.simulated_user import HiddenState, TaskProfile, UserProfile
from playground.storage import open_database
from tests.support import qt
from tests.ui.storm_rows import Dialogue, write
from ui.bridge import EngineBridge
from ui.panes.hidden_state.hidden_state_pane import MARKER
from ui.panes.memory.memory_pane import MemoryPane
from ui.panes.memory.profile_view import UNKNOWN_MARK
from ui.panes.thoughts.thoughts_pane import ThoughtsPane
from ui.selection import SelectedParticipant
from ui.storm.profile_editor import ProfileEditorDialog
from ui.storm.view import ALL_MODELS, DIALOGUE_COLUMNS, TABLE_COLUMNS, StormWindow


def _profile() -> UserProfile:
    return UserProfile(
        id="mara-1",
        name="Mara",
        task=TaskProfile(
            category="technology", task="Buy a smartphone", attributes={"budget": "$300"}
        ),
        base={"age_group": "30s", "tech_experience": "beginner"},
        unknown=["base.tech_experience"],
        uncertainty=40,
    )


@pytest.fixture
def panes(qtbot):
    bridge, selection = EngineBridge(), SelectedParticipant()
    thoughts, memory = ThoughtsPane(bridge, selection), MemoryPane(bridge, selection)
    for w in (thoughts, memory):
        qtbot.addWidget(w)
        w.resize(380, 700)
        w.show()
    return bridge, selection, thoughts, memory


def _turn(bridge: EngineBridge, turn: int, **state: Any) -> None:
    mid = 10 + turn
    bridge.dispatch(
        events.MessagePosted(
            message=domain.Message(
                id=mid, speaker="Mara", text=f"message {turn}", kind="simulated", step=mid,
                at="2025-05-01T10:00:00",
            )
        )
    )  # fmt: skip
    bridge.dispatch(
        events.HiddenStateRecorded(
            participant="Mara", message_id=mid, turn=turn, step=mid, state=HiddenState(**state)
        )
    )


def test_a_simulated_users_hidden_state_shows_as_marked_bubbles_with_a_growing_sparkline(panes):
    bridge, selection, thoughts, _memory = panes
    bridge.dispatch(
        events.ParticipantJoined(name="Mara", participant_kind="simulated", profile=_profile())
    )
    bridge.dispatch(events.ParticipantJoined(name="Ana", participant_kind="ai"))
    selection.select("Mara")
    hidden = thoughts.hidden
    assert thoughts._stack.currentWidget() is hidden
    assert hidden.banner.text() == MARKER
    assert hidden.banner.isVisible()
    _turn(bridge, 0, clarity=0.2, satisfaction=0.4, inner_thoughts="Which phone? No idea.",
          satisfaction_explanation="nothing useful yet", clarity_explanation="vague need",
          emotion="confused", intent="ask", emotion_source="keywords")  # fmt: skip
    assert hidden.sparkline.point_count() == 1
    _turn(bridge, 1, clarity=0.6, satisfaction_missing=True, intent="compare")
    assert hidden.sparkline.point_count() == 2
    # the missing satisfaction is a gap in the sparkline, not the stored placeholder 0.5
    assert hidden.sparkline.values() == ([0.4, None], [0.2, 0.6])
    newest, first = (c.text() for c in hidden.cards())
    assert "Turn 1" in newest
    assert "“message 1”" in newest
    assert "Satisfaction 0.5 (missing)" in newest
    assert "Turn 0" in first
    assert "Which phone? No idea." in first
    assert "Satisfaction 0.40 — nothing useful yet" in first
    assert "Clarity 0.20 — vague need" in first
    assert "Emotion confused (from keywords)" in first
    assert "Intent ask" in first
    assert "(from keywords)" not in first.split("Intent")[1]
    assert thoughts.header.title.text() == "Inner state — Mara (simulated user)"
    selection.select("Ana")  # an agent: thoughts, no hidden state
    assert thoughts._stack.currentWidget() is not hidden
    assert thoughts.sort_combo.isVisible()


def test_a_simulated_users_left_pane_shows_its_profile_with_unknown_attributes_marked(panes):
    bridge, selection, _thoughts, memory = panes
    bridge.dispatch(
        events.ParticipantJoined(name="Mara", participant_kind="simulated", profile=_profile())
    )
    selection.select("Mara")
    assert memory.stack.currentWidget() is memory.profile_view
    assert memory.title_label.text() == "Private profile — Mara (simulated user)"
    text = memory.profile_view.text()
    assert "Buy a smartphone" in text
    assert "budget" in text
    assert "$300" in text
    assert f"beginner ({UNKNOWN_MARK})" in text
    assert f"30s ({UNKNOWN_MARK})" not in text
    assert memory.buttons_row.isHidden(), "no memory to add to"


def text_input(dlg: ProfileEditorDialog, key: str) -> QPlainTextEdit:
    """The dialog's text field for ``key`` (the dialog holds its inputs as plain widgets)."""
    widget = dlg.inputs[key]
    assert isinstance(widget, QPlainTextEdit), key
    return widget


def test_the_profile_editor_refuses_bad_values_next_to_their_fields_and_saves_good_ones(qtbot):
    written: list[UserProfile] = []
    dlg = ProfileEditorDialog(_profile(), written.append)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.name_edit.setText("Mara Lee")  # a name with a space
    dlg.try_save()
    assert dlg.isVisible()
    assert not written
    assert dlg.errors["name"].isVisible()
    assert dlg.errors["name"].text()
    assert not dlg.errors["base"].isVisible()
    dlg.name_edit.setText("Mara")
    text_input(dlg, "base").setPlainText("age_group = 30s\ntech experience beginner")
    dlg.try_save()
    assert "line 2" in dlg.errors["base"].text()
    assert not dlg.errors["name"].isVisible()
    text_input(dlg, "base").setPlainText("age_group = 30s\ntech_experience = beginner")
    text_input(dlg, "unknown").setPlainText("base.shoe_size")
    dlg.try_save()
    assert "base.shoe_size" in dlg.errors["unknown"].text()
    assert not written
    text_input(dlg, "unknown").setPlainText("base.tech_experience")
    dlg.task.setText("")
    dlg.try_save()
    assert dlg.errors["task.task"].isVisible()
    assert not written
    dlg.task.setText("Buy a tablet")
    dlg.try_save()
    assert not dlg.isVisible()
    assert written[-1].task.task == "Buy a tablet"
    assert written[-1].unknown == ["base.tech_experience"]


def test_the_profile_editor_shows_a_file_error_at_the_field_the_writer_names(qtbot):
    def refuse(p: UserProfile) -> None:
        raise errors.ProfileError(
            "personas/users/mara-1.toml", "task.attributes.budget", "too long"
        )

    dlg = ProfileEditorDialog(_profile(), refuse)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.try_save()
    assert dlg.isVisible()
    assert dlg.errors["task.attributes"].text() == "personas/users/mara-1.toml: too long"


DIALOGUES = [
    Dialogue("s-a", "m1", 0, True, [(0.6, 0.2), (0.8, 0.5), (0.9, 0.9)]),
    Dialogue("s-b", "m1", 0, False, [(0.5, 0.1), (0.6, 0.3)], judged=["improve"]),
    Dialogue(
        "s-c", "m1", 40, False, [(0.4, 0.3), (0.7, 0.6), (0.8, 0.6)], ["improve", "not change"]
    ),
    Dialogue("s-d", "m2", 0, False, [(0.9, 0.5), (0.9, 0.5)], judged=["not change"]),
]


class _Controller:
    """What the STORM window asks of the main window's controller: the database."""

    def __init__(self, path: Path) -> None:
        self.db_path = path
        self._db = open_database(path)

    def database(self) -> Any:
        return self._db


def test_the_storm_view_shows_a_curve_per_group_and_a_table_2_row_per_assistant_and_uncertainty(
    qtbot, tmp_path
):
    controller = _Controller(tmp_path / "storm.db")
    write(controller.database(), DIALOGUES)
    opened: list[tuple[str, str]] = []
    view = StormWindow(controller, lambda db, sid: opened.append((db, sid)))
    qtbot.addWidget(view)
    view.show()
    assert view.dialogues.rowCount() == 4
    assert view.table.rowCount() == 3  # m1 (0%), m1 (40%), m2 (0%)
    labels = [qt.cell(view.table, r, 0).text() for r in range(3)]
    assert labels == ["m1 (0%)", "m1 (40%)", "m2 (0%)"]
    assert view.model.currentText() == ALL_MODELS
    assert view.group_curve_count() == 4  # m1 0% w/ and w/o, m1 40% w/o, m2 0% w/o
    view.model.setCurrentText("m2")
    assert view.group_curve_count() == 1
    col = TABLE_COLUMNS.index
    # m1 (0%): average satisfaction with profile (0.6+0.8+0.9)/3, without (0.5+0.6)/2.
    assert qt.cell(view.table, 0, col("Avg sat. w/")).text() == "0.77"
    assert qt.cell(view.table, 0, col("Avg sat. w/o")).text() == "0.55"
    clarify = float(qt.cell(view.table, 0, col("Clarify w/o")).text())
    ssa = float(qt.cell(view.table, 0, col("SSA w/o")).text())
    assert ssa == pytest.approx(0.7 * 7.75 * 0.55 + 0.3 * clarify, abs=0.01)
    view.dialogues.selectRow(2)  # s-c
    assert view.selected_session() == "s-c"
    assert view.curve.point_count() == 3
    assert view.curve.values() == ([0.4, 0.7, 0.8], [0.3, 0.6, 0.6])
    view.open_selected()
    assert opened == [(str(tmp_path / "storm.db"), "s-c")]


def test_the_storm_view_leaves_unreadable_turns_out_and_says_how_many(qtbot, tmp_path):
    # Neither dialogue was ever rated above its first turn; counting the unreadable turns as
    # 0.5 showed "Improved 100.0%" for this row.
    controller = _Controller(tmp_path / "storm.db")
    write(
        controller.database(),
        [
            Dialogue("s-x", "m1", 0, False, [(0.3, 0.2), (None, 0.3), (None, 0.4)]),
            Dialogue("s-y", "m1", 0, False, [(0.4, 0.2), (None, 0.3), (0.4, 0.4)]),
        ],
    )
    view = StormWindow(controller, lambda *_: None)
    qtbot.addWidget(view)
    col = TABLE_COLUMNS.index
    improved = qt.cell(view.table, 0, col("Improved w/o"))
    assert improved.text() == "0.0%"
    assert improved.toolTip().startswith("Over 1 of 2 dialogues (with two rated turns or more)")
    assert "unrated in 3 of 6 user turns" in improved.toolTip()
    assert qt.cell(view.table, 0, col("Avg sat. w/o")).text() == "0.35"  # (0.3 + 0.4) / 2
    assert qt.cell(view.table, 0, col("Unrated turns w/ · w/o")).text() == "– · 3/6"
    unrated = DIALOGUE_COLUMNS.index("Unrated")
    assert [qt.cell(view.dialogues, r, unrated).text() for r in range(2)] == ["2/3", "1/3"]
    view.dialogues.selectRow(0)  # s-x: the unreadable turns are gaps in its curve
    assert view.curve.values() == ([0.3, None, None], [0.2, 0.3, 0.4])
    assert view.group_curve_count() == 1


def test_the_storm_view_says_when_the_database_cannot_be_read(qtbot, tmp_path):
    controller = _Controller(tmp_path / "storm.db")
    write(controller.database(), DIALOGUES[:1])
    view = StormWindow(controller, lambda *_: None)
    qtbot.addWidget(view)
    assert view.table.rowCount() == 1
    controller.database().execute("DROP TABLE storm_dialogues")
    view.refresh()
    assert view.status.text().startswith("STORM report:")
    assert "storm_dialogues" in view.status.text()
    assert view.table.rowCount() == 1, "what was shown stays"


def test_table_2_opens_whole_at_1024_from_its_first_column(qtbot, tmp_path):
    """At 1024×700 Table 2 shows every column, headers whole, and nothing to scroll sideways:
    it used to open scrolled right with its first header cut (issue 34, point 8)."""
    controller = _Controller(tmp_path / "storm.db")
    write(controller.database(), DIALOGUES)
    view = StormWindow(controller, lambda *_: None)
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    qtbot.waitExposed(view)
    table = view.table
    bar = table.horizontalScrollBar()
    assert bar.maximum() == 0
    assert bar.value() == 0
    header = table.horizontalHeader()
    metrics = header.fontMetrics()
    for col in range(table.columnCount()):
        label = qt.header(table, col).text()
        widest = max(metrics.horizontalAdvance(line) for line in label.split("\n"))
        assert header.sectionSize(col) >= widest, label
    assert header.sectionViewportPosition(0) == 0
    last = table.columnCount() - 1
    assert (
        header.sectionViewportPosition(last) + header.sectionSize(last) <= table.viewport().width()
    )
