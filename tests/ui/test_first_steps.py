"""What a person meets first: the empty window says how to begin, the New session dialog shows
the turn cap a session stops at, and the New experiment dialog opens with the values last
launched (kept in QSettings, which the tests keep in a folder of their own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel

from playground import personas
from playground.settings import load_settings
from tests.ui.conftest import app_window
from ui.dialogs.new_session import NewSessionDialog
from ui.experiments.dialog import NewExperimentDialog
from ui.experiments.launch import plan_new


@pytest.mark.asyncio
async def test_the_empty_window_says_how_to_begin(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "e.db", minilm)
    hints = [
        label
        for label in win.conversation.findChildren(QLabel)
        if label.isVisible() and "Start a new session (Ctrl+N)" in label.text()
    ]
    assert hints, "the empty window says nothing about how to begin"
    hint = hints[0]
    assert "open a saved one" in hint.text()
    assert hint.geometry() == win.conversation.list.viewport().rect()  # over the empty list
    room = await controller.new_session(controller.library()[:2], icebreaker="Hi all")
    assert room is not None
    assert not hint.isVisible(), "the hint goes with the first message"
    await controller.shutdown()


def test_the_new_session_dialog_shows_the_turn_cap(qtbot):
    settings = load_settings({}, {"engine": "offline", "max_turns": 23})
    lib = personas.load_personas()
    dlg = NewSessionDialog(lib, personas.load_icebreakers(), settings)
    qtbot.addWidget(dlg)
    dlg.show()
    caps = [w for w in dlg.findChildren(QLabel) if w.isVisible() and "23 messages" in w.text()]
    assert caps, "the dialog does not say where a session stops"
    assert "Engine…" in caps[0].text()


def _dialog(qtbot) -> NewExperimentDialog:
    base = load_settings({}, {"engine": "offline"})
    dlg = NewExperimentDialog(
        lambda o: plan_new(o, base, {}),
        personas_dir=str(personas.DEFAULT_DIR),
        server_label="m @ local",
    )
    qtbot.addWidget(dlg)
    return dlg


def test_the_new_experiment_dialog_remembers_what_was_launched_last(qtbot):
    assert Path(QSettings().fileName()).is_relative_to(_settings_dir()), "tests keep their own"
    first = _dialog(qtbot)
    defaults = first.options()
    for c, box in first.conditions.items():
        box.setChecked(c == "reactive")
    first.conversations.setValue(7)
    first.agents.setValue(3)
    first.turns.setValue(9)
    first.seed.setValue(42)
    first.concurrency.setValue(2)
    first.name.setText("pilot-2")
    first.accept()
    assert first.plan is not None, first.error.text()
    again = _dialog(qtbot)
    assert again.options() == first.options() != defaults
    # Cancelled values are not kept.
    again.seed.setValue(5)
    again.reject()
    third = _dialog(qtbot)
    assert third.seed.value() == 42


def _settings_dir() -> Path:
    import tempfile

    return Path(tempfile.gettempdir())
