"""The window names a persona file it cannot decode in its banner, and stays usable."""

from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from playground import personas
from ui.app import build


def test_an_undecodable_persona_file_is_named_in_the_banner(qtbot, tmp_path):
    lib = tmp_path / "personas"
    shutil.copytree(personas.DEFAULT_DIR, lib)
    victim = sorted(p for p in lib.glob("*.toml") if p.name != personas.ICEBREAKERS)[0]
    victim.write_bytes(victim.read_text().encode("utf-16"))
    win, controller = build(db_path=str(tmp_path / "p.db"), environ={})
    controller.personas_dir = str(lib)
    controller.closed = True  # no session to stop when the window closes
    qtbot.addWidget(win)

    assert win.dialogs.open_new_session() is None
    assert f"{victim}: is UTF-16 text" in win.banner.text()

    win.hide_error()
    win.dialogs.fill_add_menu()  # the "Add participant" menu reads the library too
    assert f"{victim}: is UTF-16 text" in win.banner.text()
    assert win.banner.isVisibleTo(win)
