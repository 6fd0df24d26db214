"""Editing a persona from the New session dialog writes the file; bad values are named and nothing is saved."""

from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from playground import personas
from ui.app import build


def test_edit_a_persona_and_reject_bad_values(qtbot, tmp_path):
    lib = tmp_path / "personas"
    shutil.copytree(personas.DEFAULT_DIR, lib)
    win, controller = build(db_path=str(tmp_path / "p.db"), environ={})
    controller.personas_dir = str(lib)
    controller.closed = True  # no session to stop when the window closes
    qtbot.addWidget(win)
    session = win.dialogs.open_new_session()
    assert session is not None
    session.list.setCurrentRow(0)
    editor = win.dialogs.open_persona_editor(session)
    assert editor is not None
    name = editor.persona.name
    before = (lib / f"{editor.persona.id}.toml").read_text()

    editor.memories.setPlainText("interest | 3 | I like kites.")
    editor.try_save()
    assert "memories.0.weight" in editor.error.text()
    assert (lib / f"{editor.persona.id}.toml").read_text() == before

    editor.memories.setPlainText(
        "interest | 0.8 | I like flying kites on the beach.\nobjective | 0.9 | I want to win a kite contest."
    )
    editor.description.setText("A kite enthusiast.")
    with qtbot.waitSignal(editor.saved, timeout=2000):
        editor.try_save()
    reloaded = personas.load_persona(lib / f"{editor.persona.id}.toml")
    assert reloaded.name == name
    assert reloaded.description == "A kite enthusiast."
    assert [m.text for m in reloaded.memories] == [
        "I like flying kites on the beach.",
        "I want to win a kite contest.",
    ]
    assert "A kite enthusiast." in session.list.item(0).text()
