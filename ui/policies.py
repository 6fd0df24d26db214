"""The turn-taking policies (conditions) of AI participants in the window: their names, a combo
box to choose one, and the Participants menu entry that changes the selected participant's."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QComboBox, QMenu

from playground import domain

#: The short tag on a participant chip and in the decision strip.
POLICY_TAGS: dict[str, str] = {"inner-thoughts": "IT", "next-speaker": "NS", "reactive": "R"}
#: One sentence each, for tooltips (docs/spec.md §1.9.1).
POLICY_HELP: dict[str, str] = {
    "inner-thoughts": (
        "Inner Thoughts: forms thoughts after every trigger and speaks when its intrinsic"
        " motivation passes its thresholds."
    ),
    "next-speaker": (
        "Next-speaker prediction (baseline): a predictor reads the last 5 messages and the names"
        " and predicts who speaks next (a name or “anyone”); the agent given the turn answers"
        " from its static persona."
    ),
    "reactive": "Reactive (baseline): answers only when addressed by name.",
}


def policy_label(policy: str) -> str:
    """The menus' name of ``policy`` (:data:`playground.domain.POLICY_LABELS`); a value that is
    no policy (``human``, ``simulated``, ``""``) as it is."""
    for known in domain.POLICIES:
        if known == policy:
            return domain.POLICY_LABELS[known]
    return policy


def policy_combo(current: str = "inner-thoughts") -> QComboBox:
    """A combo box of the three policies (``currentData()`` is the policy) set to ``current``."""
    combo = QComboBox()
    for policy in domain.POLICIES:
        combo.addItem(domain.POLICY_LABELS[policy], policy)
        combo.setItemData(combo.count() - 1, POLICY_HELP[policy], Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


class PolicyMenu(QObject):
    """Participants ▸ "Turn-taking policy of the selected participant": one checkable entry per
    policy, the selected AI participant's own checked; choosing one changes it in the room
    (from the next trigger).

    Args:
        parent_menu: the menu the submenu is added to.
        window: the main window (its ``controller``, ``selection`` and ``spawn``).
    """

    def __init__(self, parent_menu: QMenu, window: Any) -> None:
        super().__init__(parent_menu)
        self.window = window
        self.menu = parent_menu.addMenu("Turn-taking policy of the selected participant")
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self.actions: dict[str, QAction] = {}
        for policy in domain.POLICIES:
            act = self.menu.addAction(domain.POLICY_LABELS[policy])
            act.setCheckable(True)
            act.setToolTip(POLICY_HELP[policy])
            act.setData(policy)
            self.group.addAction(act)
            self.actions[policy] = act
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self.refresh)
        parent_menu.aboutToShow.connect(self.refresh)
        self.group.triggered.connect(self._chosen)

    def _agent(self) -> Any:
        room = self.window.controller.room
        name = self.window.selection.name
        if room is None or room.status != "running" or name not in {a.name for a in room.agents}:
            return None
        return room.agent(name)

    def refresh(self) -> None:
        """Check the selected AI participant's policy; disabled when none is selected."""
        agent = self._agent()
        self.menu.setEnabled(agent is not None)
        for policy, act in self.actions.items():
            act.setChecked(agent is not None and agent.policy == policy)

    def _chosen(self, act: QAction) -> None:
        agent = self._agent()
        if agent is None:
            self.window.show_error("Select an AI participant of the live session first.")
            return
        if act.data() != agent.policy:
            self.window.spawn(
                self.window.controller.room_commands.set_policy(agent.name, act.data())
            )
