"""The window's keyboard: Ctrl+N, Space (run / pause), Ctrl+. (stop), F6 between panes, the
menus that hold every toolbar action, and Help ▸ Keyboard shortcuts. Keys go through Qt's
shortcut machinery (QTest key clicks on an active window), as a person's would."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolBar

from playground.embedding.cache import CachingEmbedder
from tests.ui.conftest import until
from ui.app import build
from ui.dialogs.new_session import NewSessionDialog
from ui.window.shortcuts import ShortcutsDialog, menu_shortcuts

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "keys.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    return win, controller


async def _active(win) -> None:
    win.raise_()
    win.activateWindow()
    await until(lambda: QApplication.activeWindow() is win, what="the window to be active")


async def _session(controller, n: int = 3):
    room = await controller.new_session(controller.library()[:n], icebreaker="Weekend plans?")
    assert room is not None
    return room


def _press(key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None, "no widget to type into"
    QTest.keyClick(target, key, modifier)


async def test_the_menu_bar_holds_every_toolbar_action_with_its_shortcut(window):
    win, controller = window
    in_menus = set()
    for top in win.menuBar().actions():
        stack = [top.menu()]
        while stack:
            menu = stack.pop()
            for act in menu.actions():
                in_menus.add(act)
                if act.menu() is not None:
                    stack.append(act.menu())
    for tb in win.findChildren(QToolBar):
        for act in tb.actions():
            if act.isSeparator():
                continue
            widget = tb.widgetForAction(act)
            if act in in_menus:
                continue
            # The speed combo and the Participants button are widgets: their menus are there.
            assert widget is win.pace or widget is win.participants_button, act.text()
    assert win.participants_menu.menuAction() in in_menus
    speeds = [a.text() for a in win.keys.speed_menu.actions()]
    assert speeds == [win.pace.itemText(i) for i in range(win.pace.count())]
    listed = {text: keys for _path, text, keys in menu_shortcuts(win.menuBar())}
    assert listed["New session…"] == "Ctrl+N"
    assert listed["Run"] == "Space"
    assert listed["Pause"] == "Space"
    assert listed["Stop"] == "Ctrl+."
    assert listed["Next pane"] == "F6"
    assert listed["Previous pane"] == "Shift+F6"
    titles = [a.text().replace("&", "") for a in win.menuBar().actions()]
    assert titles[:4] == ["File", "Edit", "Session", "View"]
    assert titles[-1] == "Help"
    await controller.shutdown()


async def test_help_lists_the_keyboard_shortcuts(window):
    win, controller = window
    win.keys.act_shortcuts.trigger()
    dlg = win.keys.dialog
    assert isinstance(dlg, ShortcutsDialog)
    assert dlg.isVisible()
    rows = dict(dlg.rows())
    assert rows["Ctrl+N"].startswith("New session")
    assert rows["Ctrl+."].startswith("Stop")
    assert rows["F6"].startswith("Next pane")
    assert any(k == "Space" and d.startswith(("Run", "Pause")) for k, d in dlg.rows())
    assert any(keys == "Shift+Enter" for keys, _ in dlg.rows())
    dlg.close()
    await controller.shutdown()


async def test_ctrl_n_space_and_ctrl_period_drive_the_session(window):
    win, controller = window
    await _active(win)
    win.conversation.list.setFocus()
    _press(Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    await until(
        lambda: (
            isinstance(QApplication.activeModalWidget(), NewSessionDialog)
            or any(isinstance(w, NewSessionDialog) and w.isVisible() for w in win.children())
        ),
        what="the New session dialog",
    )
    for w in win.findChildren(NewSessionDialog):
        w.reject()
    room = await _session(controller)
    await _active(win)
    win.conversation.list.setFocus()
    assert win.act_run.isEnabled()
    _press(Qt.Key.Key_Space)
    await until(lambda: win.act_pause.isEnabled(), what="Space to start the run")
    await until(lambda: len(room.messages) >= 2, what="messages while running")
    _press(Qt.Key.Key_Space)
    await until(lambda: win.act_run.isEnabled(), what="Space to pause")
    _press(Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: room.status == "interrupted", what="Ctrl+. to stop")
    await controller.shutdown()


async def test_space_presses_a_focused_button_and_types_in_the_composer(window):
    win, controller = window
    room = await _session(controller)
    await _active(win)
    # A focused button takes Space (it presses it): Run is not triggered.
    assert win.act_run.isEnabled()
    add = win.memory.add_button
    add.setFocus()
    await until(lambda: QApplication.focusWidget() is add, what="the Add button's focus")
    _press(Qt.Key.Key_Space)
    await until(lambda: win.memory._dialog is not None, what="Space to press Add…")
    win.memory._dialog.reject()
    await asyncio.sleep(0.1)
    assert not win.act_pause.isEnabled(), "Space did not run"
    assert win.act_run.isEnabled(), "Space did not run"
    # The composer (a person in the room): Space types a space.
    await controller.join_as_human("Zoe")
    await _active(win)
    composer = win.conversation.composer
    composer.setFocus()
    await until(lambda: QApplication.focusWidget() is composer, what="the composer's focus")
    QTest.keyClicks(composer, "hi there")
    assert composer.toPlainText() == "hi there", "Space typed a space"
    assert room.status == "running"
    await controller.shutdown()


async def test_f6_cycles_the_panes_and_shift_f6_goes_back(window):
    win, controller = window
    await _session(controller)
    win.act_step.trigger()
    await until(lambda: win.thoughts.bubbles(), what="thought bubbles")
    await _active(win)
    win.memory.table.setFocus()
    await until(lambda: QApplication.focusWidget() is win.memory.table, what="memory focus")
    order = [win.memory, win.conversation, win.thoughts, win.decisions, win.participants]
    seen = []
    for _ in range(len(order)):
        _press(Qt.Key.Key_F6)
        focus = QApplication.focusWidget()
        seen.append(next(p for p in order if p is focus or p.isAncestorOf(focus)))
    assert seen == order[1:] + order[:1], "memory → conversation → thoughts → strip → chips"
    _press(Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    focus = QApplication.focusWidget()
    assert win.participants is focus or win.participants.isAncestorOf(focus)
    await controller.shutdown()


def _key_text(seq) -> str:
    from ui.window.shortcuts import key_text

    return key_text(seq)


async def test_the_shortcuts_listed_are_the_ones_registered(window):
    """Help ▸ Keyboard shortcuts lists every shortcut the window has, once each: the menus'
    (an action in two menus once), the window's own actions and its key shortcuts (replay,
    decision strip)."""
    from PySide6.QtGui import QAction, QShortcut

    win, controller = window
    dlg = win.keys.show_shortcuts()
    rows = dlg.rows()
    keys = [k for k, _ in rows]
    assert keys.count("Ctrl+Shift+D") == 1, "STORM dialogues… (in two menus) is listed once"
    assert "Ctrl+Z" in keys, "Edit ▸ Undo"
    assert "Shift+←" in keys, "replay: a message back / on"
    assert "Shift+→" in keys, "replay: a message back / on"
    assert len(rows) == len(set(rows)), "a shortcut is listed twice"
    assert all(what for _keys, what in rows), "every shortcut says what it does"
    registered = sorted(
        [
            (_key_text(a.shortcut()), a.text().replace("&", ""))
            for a in set(win.findChildren(QAction))
            if not a.shortcut().isEmpty()
        ]
        + [(_key_text(s.key()), s.whatsThis()) for s in win.findChildren(QShortcut)]
    )
    listed = sorted((keys, what) for keys, what, _where in dlg.entries())
    assert listed == registered
    dlg.close()
    await controller.shutdown()


async def test_edit_undo_brings_back_a_deleted_thought(window):
    win, controller = window
    edit = next(a.menu() for a in win.menuBar().actions() if a.text().replace("&", "") == "Edit")
    undo = next(a for a in edit.actions() if a.shortcut().toString() == "Ctrl+Z")
    assert undo is win.undo.action
    assert not undo.isEnabled()
    await _session(controller)
    win.act_step.trigger()
    await until(lambda: win.thoughts.bubbles(), what="thought bubbles")
    await until(lambda: win.act_run.isEnabled(), what="the step to end")
    bubble = win.thoughts.bubbles()[0]
    agent, tid = bubble.thought.agent, bubble.thought_id
    bubble.delete_button.click()
    await until(lambda: win.thoughts.bubble(tid) is None, what="the bubble to go")
    assert undo.isEnabled()
    undo.trigger()
    await until(lambda: win.thoughts.bubble(tid) is not None, what="the thought to come back")
    assert win.thoughts.bubble(tid).thought.agent == agent
    await controller.shutdown()
