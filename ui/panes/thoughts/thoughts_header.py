"""The thoughts pane's header: whose thoughts, how many, in which order; and what an empty page says.

The title names the participant shown (an AI agent's inner thoughts, or a simulated user's inner
state); the line below counts their thoughts (how many were said, how many of them are shown) or
a simulated user's turns, beside the sort menu. An AI agent's empty page says why it is empty: a
human has no inner thoughts in the engine, a baseline policy forms none, or none came yet.
"""

from __future__ import annotations

from operator import attrgetter

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QSizePolicy, QWidget

from playground import domain, events
from ui.panes.thoughts.thought_bubble import (
    BASELINE_PLACEHOLDER,
    EMPTY_PLACEHOLDER,
    HUMAN_PLACEHOLDER,
    SORT_NEWEST,
    SORT_SCORE,
    SORT_SCORE_HELP,
)
from ui.panes.thoughts.thought_page import AgentPage
from ui.policies import policy_label
from ui.widgets.elided_label import ElidedLabel


class ThoughtsHeader:
    """The header's widgets (laid out by the pane) and the participants' kinds and policies.

    Args:
        parent: The pane the widgets belong to.

    Attributes:
        title: The participant shown (elided, with a tooltip, when narrow).
        count: How many thoughts (or a simulated user's turns).
        sort_combo: "Newest first" or "Highest score".
    """

    def __init__(self, parent: QWidget) -> None:
        self.title = ElidedLabel("", parent)
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.title.setFont(font)
        self.count = QLabel(parent)
        self.count.setStyleSheet("color: #607d8b;")
        self.count.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.count.setWordWrap(True)  # beside the sort menu: wraps rather than being cut
        self.sort_combo = QComboBox(parent)
        self.sort_combo.addItems([SORT_NEWEST, SORT_SCORE])
        self.sort_combo.setItemData(0, "Newest thought first", Qt.ItemDataRole.ToolTipRole)
        self.sort_combo.setItemData(1, SORT_SCORE_HELP, Qt.ItemDataRole.ToolTipRole)
        self.sort_combo.setToolTip(f"Order of the thoughts.\n{SORT_NEWEST}; or\n{SORT_SCORE_HELP}")
        self._humans: set[str] = set()
        self._policies: dict[str, str] = {}

    @property
    def by_score(self) -> bool:
        """Sorted by score (else newest first)."""
        return self.sort_combo.currentText() == SORT_SCORE

    def forget(self) -> None:
        """Nobody has joined yet (a new session, or a replay rebuilding its moment)."""
        self._humans = set()
        self._policies = {}

    def joined(self, e: events.ParticipantJoined) -> None:
        if e.participant_kind == "human":
            self._humans.add(e.name)
        else:
            self._humans.discard(e.name)
            self._policies[e.name] = e.policy

    def policy_changed(self, name: str, policy: str) -> None:
        self._policies[name] = policy

    def show_simulated(self, name: str, turns: int) -> None:
        """A simulated user's page: its turns, no sort."""
        self.sort_combo.setVisible(False)
        self.title.setText(f"Inner state — {name} (simulated user)")
        self.count.setText(
            f"{turns} turn{'' if turns == 1 else 's'} · satisfaction and clarity 0–1"
        )

    def show_thoughts(
        self, name: str, thoughts: dict[int, domain.Thought], page: AgentPage | None
    ) -> None:
        """``name``'s thoughts ("" for nobody), and why their ``page`` (if made) is empty."""
        self.sort_combo.setVisible(True)
        self.title.setText(f"Inner thoughts — {name}" if name else "Inner thoughts")
        if page is None:
            self.count.setText("")
            return
        n = len(thoughts)
        said = n - list(map(attrgetter("expressed_in"), thoughts.values())).count(None)
        noun = "thought" if n == 1 else "thoughts"
        shown = len(page.bubbles)
        self.count.setText(
            f"{n} {noun}"
            + (f" · {said} said" if said else "")
            + (f" · top {shown} shown" if shown < n else "")
        )
        human = name in self._humans and n == 0
        # A baseline agent's policy, as the menus name it (lower case: it is mid-sentence).
        policy = self._policies.get(name, "inner-thoughts")
        label = policy_label(policy).lower() if policy in ("next-speaker", "reactive") else ""
        page.placeholder.setText(
            HUMAN_PLACEHOLDER
            if human
            else BASELINE_PLACEHOLDER.format(name, label)
            if label and n == 0
            else EMPTY_PLACEHOLDER
        )
