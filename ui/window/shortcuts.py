"""The main window's keyboard: the Edit, Session, View and Help menus, their shortcuts, F6
between panes, and Help ▸ Keyboard shortcuts.

Every toolbar action is also in the Session menu, so keyboard users and accessibility tools find
it (and its shortcut) there. The shortcuts:

- Ctrl+N: New session…
- Space: Run, or Pause while running (they are never enabled together). Space still types in
  the composer and text fields and still presses a focused button: the key goes to such a
  widget first (:meth:`WindowKeys.eventFilter`).
- Ctrl+.: Stop.
- Ctrl+Z: Edit ▸ Undo (brings back the thought deleted last).
- F6 / Shift+F6: the next / previous pane (memory → conversation → thoughts → decision strip →
  participants → memory…).

The shortcuts dialog is written from the window itself (its menus' and its own actions, and
its key shortcuts, each described by its ``whatsThis``), so it lists what the keys do now.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ui.screen_fit import fit_window

#: Widgets that use the space bar themselves: it types, or presses/opens them.
SPACE_USERS = (QLineEdit, QTextEdit, QPlainTextEdit, QAbstractSpinBox, QAbstractButton, QComboBox)

#: Keys typed into a widget (not shortcuts), for the shortcuts dialog.
OTHER_KEYS = (
    ("Enter", "In the composer: send the message"),
    ("Shift+Enter", "In the composer: a new line"),
    ("Escape", "In a private note: close it unsaved"),
)

_ARROWS = {"Left": "←", "Right": "→", "Up": "↑", "Down": "↓"}


def key_text(keys: QKeySequence) -> str:
    """How the shortcuts dialog writes a key sequence: ``Ctrl+Z``, ``Shift+←``."""
    text = keys.toString(QKeySequence.SequenceFormat.NativeText)
    return "+".join(_ARROWS.get(part, part) for part in text.split("+"))


def _menu_actions(menu_bar: QMenuBar) -> list[tuple[QAction, str]]:
    """Every menu action that has a shortcut, each once (the first menu that holds it), with
    its menu path, in menu order."""
    found: dict[QAction, str] = {}

    def walk(menu: QMenu, path: str) -> None:
        for act in menu.actions():
            sub = act.menu()
            text = act.text().replace("&", "")
            if isinstance(sub, QMenu):
                walk(sub, f"{path} ▸ {text}")
            elif not act.isSeparator() and not act.shortcut().isEmpty():
                found.setdefault(act, path)

    for top in menu_bar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, top.text().replace("&", ""))
    return list(found.items())


def menu_shortcuts(menu_bar: QMenuBar) -> list[tuple[str, str, str]]:
    """Every menu action that has a shortcut: (menu path, action text, keys), in menu order;
    an action in two menus once, under the first."""
    return [
        (path, act.text().replace("&", ""), key_text(act.shortcut()))
        for act, path in _menu_actions(menu_bar)
    ]


def window_shortcuts(window: QWidget) -> list[tuple[str, str, str]]:
    """Every shortcut of ``window``: (keys, what it does, where), each once. The menus' actions
    first (where: the menu), then actions with a shortcut in no menu, then key shortcuts
    (``QShortcut``; what: its ``whatsThis``, where: "")."""
    bar = window.menuBar() if hasattr(window, "menuBar") else None
    menus = _menu_actions(bar) if isinstance(bar, QMenuBar) else []
    listed = {act for act, _path in menus}
    entries = [(key_text(a.shortcut()), a.text().replace("&", ""), path) for a, path in menus]
    for act in window.findChildren(QAction):
        if act not in listed and not act.shortcut().isEmpty():
            listed.add(act)
            entries.append((key_text(act.shortcut()), act.text().replace("&", ""), ""))
    for sc in window.findChildren(QShortcut):
        entries.append((key_text(sc.key()), sc.whatsThis(), ""))
    return entries


class ShortcutsDialog(QDialog):
    """Help ▸ Keyboard shortcuts: every shortcut of the window (see :func:`window_shortcuts`)
    and the keys typed into the composer."""

    def __init__(self, window: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self._entries = window_shortcuts(window)
        rows = [
            (keys, f"{what} ({where})" if where else what) for keys, what, where in self._entries
        ]
        rows += list(OTHER_KEYS)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Keys", "Does"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (keys, does) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(keys))
            self.table.setItem(r, 1, QTableWidgetItem(does))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        note = QLabel(
            "Space runs or pauses the session, except while you type in a text field or a"
            " button has the keyboard focus (then it types, or presses the button)."
        )
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 1)
        lay.addWidget(note)
        lay.addWidget(buttons)
        fit_window(self, (560, 460))

    def entries(self) -> list[tuple[str, str, str]]:
        """The window's shortcuts listed: (keys, what, where) (see :func:`window_shortcuts`)."""
        return list(self._entries)

    def rows(self) -> list[tuple[str, str]]:
        """The listed (keys, what they do), top to bottom."""
        t = self.table
        return [
            (t.item(r, 0).text(), t.item(r, 1).text())  # type: ignore[union-attr]
            for r in range(t.rowCount())
        ]


class WindowKeys(QObject):
    """Adds the Session, View and Help menus and the window's shortcuts to ``window``.

    Args:
        window: The main window (its toolbar actions, panes and pace combo exist already).
    """

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = w = window
        self.dialog: ShortcutsDialog | None = None
        w.act_new.setShortcut(QKeySequence.StandardKey.New)
        # Run and Pause share Space: only one of them is enabled at any time.
        w.act_run.setShortcut(QKeySequence(Qt.Key.Key_Space))
        w.act_pause.setShortcut(QKeySequence(Qt.Key.Key_Space))
        w.act_stop.setShortcut(QKeySequence("Ctrl+."))
        for act in (w.act_new, w.act_run, w.act_pause, w.act_stop):
            w.addAction(act)  # shortcuts work wherever the focus is in the window
        bar = w.menuBar()
        after_file = bar.actions()[1] if len(bar.actions()) > 1 else None
        self.session_menu = session = QMenu("&Session", w)
        session.addAction(w.act_new)
        session.addSeparator()
        for act in (w.act_run, w.act_pause, w.act_step, w.act_stop):
            session.addAction(act)
        session.addSeparator()
        self.speed_menu = session.addMenu("Speed")
        self._speed = QActionGroup(self)
        for i in range(w.pace.count()):
            act = self.speed_menu.addAction(w.pace.itemText(i))
            act.setCheckable(True)
            act.setData(w.pace.itemData(i))
            self._speed.addAction(act)
            act.triggered.connect(lambda _=False, i=i: w.pace.setCurrentIndex(i))
        w.pace.currentIndexChanged.connect(self._sync_speed)
        self._sync_speed(w.pace.currentIndex())
        session.addSeparator()
        session.addAction(w.act_join)
        session.addAction(w.act_invite)
        w.participants_menu.setTitle("Participants")
        session.addMenu(w.participants_menu)
        session.addAction(w.act_engine)
        self.view_menu = view = QMenu("&View", w)
        self.act_next_pane = view.addAction("Next pane")
        self.act_next_pane.setShortcut(QKeySequence(Qt.Key.Key_F6))
        self.act_next_pane.triggered.connect(lambda: self.cycle(1))
        self.act_previous_pane = view.addAction("Previous pane")
        self.act_previous_pane.setShortcut(QKeySequence("Shift+F6"))
        self.act_previous_pane.triggered.connect(lambda: self.cycle(-1))
        bar.insertMenu(after_file, session)
        bar.insertMenu(after_file, view)
        self.help_menu = QMenu("&Help", w)
        self.act_shortcuts = self.help_menu.addAction("Keyboard shortcuts…")
        self.act_shortcuts.setShortcut(QKeySequence.StandardKey.HelpContents)
        self.act_shortcuts.triggered.connect(self.show_shortcuts)
        w.installEventFilter(self)

    def add_edit_menu(self, *actions: QAction) -> QMenu:
        """The Edit menu (after File) with ``actions``, e.g. Undo (Ctrl+Z)."""
        self.edit_menu = edit = QMenu("&Edit", self.window)
        for act in actions:
            edit.addAction(act)
        self.window.menuBar().insertMenu(self.session_menu.menuAction(), edit)
        return edit

    def add_help_menu(self) -> None:
        """Put the Help menu last on the menu bar (call after every other menu is added)."""
        bar = self.window.menuBar()
        bar.removeAction(self.help_menu.menuAction())
        bar.addMenu(self.help_menu)

    def _sync_speed(self, index: int) -> None:
        acts = self._speed.actions()
        if 0 <= index < len(acts):
            acts[index].setChecked(True)

    # -- keys ------------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Give Space to the focused widget when it uses it (typing, pressing a button): a
        ShortcutOverride the focused widget left unclaimed reaches the window, and claiming it
        here sends the key to that widget instead of to Run/Pause."""
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Space
            and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            and isinstance(QApplication.focusWidget(), SPACE_USERS)
        ):
            event.accept()
            return True
        return super().eventFilter(watched, event)

    def panes(self) -> list[tuple[QWidget, list[QWidget]]]:
        """The panes F6 goes through, in order, each with the widgets that take its focus
        (the first one shown and enabled does)."""
        w = self.window
        thoughts_page = w.thoughts._stack.currentWidget()
        return [
            (w.memory, [w.memory.table, w.memory.add_button]),
            (w.conversation, [w.conversation.list, w.conversation.composer]),
            (w.thoughts, [thoughts_page, w.thoughts.sort_combo]),
            (w.decisions, [w.decisions.table]),
            (w.participants, [w.participants]),
        ]

    def current_pane(self) -> int | None:
        """Which pane (index into :meth:`panes`) holds the keyboard focus, if any."""
        focus = QApplication.focusWidget()
        for i, (pane, _targets) in enumerate(self.panes()):
            if focus is not None and (focus is pane or pane.isAncestorOf(focus)):
                return i
        return None

    def cycle(self, step: int) -> QWidget | None:
        """Move the keyboard focus to the next (``step`` 1) or previous (-1) pane; the widget
        that got it."""
        panes = self.panes()
        now = self.current_pane()
        start = (-1 if step > 0 else 0) if now is None else now
        for k in range(1, len(panes) + 1):
            _pane, targets = panes[(start + step * k) % len(panes)]
            for target in targets:
                if target is not None and target.isVisible() and target.isEnabled():
                    if target.focusPolicy() == Qt.FocusPolicy.NoFocus:
                        target.setFocusPolicy(Qt.FocusPolicy.TabFocus)
                    target.setFocus(Qt.FocusReason.ShortcutFocusReason)
                    return target
        return None

    def show_shortcuts(self) -> ShortcutsDialog:
        """Help ▸ Keyboard shortcuts (non-modal)."""
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = ShortcutsDialog(self.window, self.window)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog
