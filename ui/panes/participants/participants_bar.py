"""The participants bar: colour, avatar initial, kind, turn-taking policy and live state of
everyone in the room."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ui import theme
from ui.bridge import EngineBridge
from ui.policies import POLICY_HELP, POLICY_TAGS, policy_label
from ui.proactivity_text import preset_of, thresholds
from ui.selection import SelectedParticipant

STATE_TEXT = {
    "idle": "idle",
    "thinking": "thinking…",
    "wants_to_speak": "wants to speak",
    "speaking": "speaking",
}
KIND_TEXT = {"ai": "AI", "human": "human", "simulated": "simulated user"}
#: The bar's height: the chips and room for the horizontal scroll bar under them.
TALL = 64
SIMULATED_HELP = (
    "{} is a STORM simulated user: it plays a private profile and keeps a hidden state"
    " (satisfaction, intent clarity, emotion, intent) that only you see. It answers when"
    " addressed by name, and otherwise speaks with its speak probability."
)


class ParticipantChip(QFrame):
    clicked = Signal(str)

    def __init__(self, name: str, kind: str, color: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.color = color
        self.setObjectName("chip")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 4, 10, 4)
        avatar = QLabel(name[:1].upper())
        avatar.setFixedSize(30, 30)
        avatar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        avatar.setStyleSheet(
            f"background:{color}; color:white; border-radius:15px; font-weight:bold; font-size:14px;"
        )
        row.addWidget(avatar)
        col = QVBoxLayout()
        col.setSpacing(0)
        self.kind = kind
        # A name is text, whatever it holds: a person in a browser chooses their own.
        self.title = QLabel(
            f"<b>{html.escape(name)}</b>"
            f" <span style='color:#666'>· {KIND_TEXT.get(kind, kind)}</span>"
        )
        self.state_label = QLabel("idle")
        self.state_label.setStyleSheet("color:#666; font-size:11px;")
        head = QHBoxLayout()
        head.setSpacing(4)
        head.addWidget(self.title)
        #: The AI participant's turn-taking policy as a small tag ("IT", "NS", "R").
        self.policy_tag = QLabel("")
        self.policy_tag.setStyleSheet(
            "color:#444; background:#eceff1; border:1px solid #b0bec5; border-radius:3px;"
            " font-size:10px; font-weight:bold; padding:0 3px;"
        )
        self.policy_tag.setVisible(False)
        head.addWidget(self.policy_tag)
        head.addStretch(1)
        col.addLayout(head)
        foot = QHBoxLayout()
        foot.setSpacing(6)
        foot.addWidget(self.state_label)
        #: The AI participant's proactivity preset, or "custom" (thresholds in the tooltip).
        self.preset_label = QLabel("")
        self.preset_label.setStyleSheet("color:#78909c; font-size:10px;")
        self.preset_label.setVisible(False)
        foot.addWidget(self.preset_label)
        foot.addStretch(1)
        col.addLayout(foot)
        row.addLayout(col)
        self.policy = ""
        self.proactivity: dict[str, object] = {}
        self.remote = False
        self.set_selected(False)

    def set_remote(self) -> None:
        """A person in a browser (an invited seat): tagged, and whether they are connected."""
        self.remote = True
        self.title.setText(
            f"<b>{html.escape(self.name)}</b> <span style='color:#666'>· remote human</span>"
        )
        self.set_presence(False)

    def set_presence(self, online: bool) -> None:
        self.state_label.setText("online" if online else "offline")
        self.state_label.setStyleSheet(
            f"color:{'#2e7d32' if online else '#9e9e9e'}; font-size:11px;"
        )

    def set_policy(self, policy: str) -> None:
        """Show the AI participant's turn-taking policy (a tag, and the chip's tooltip)."""
        self.policy = policy
        self.policy_tag.setText(POLICY_TAGS.get(policy, policy))
        self.policy_tag.setVisible(self.kind == "ai" and bool(policy))
        if self.kind == "simulated":  # its own turn taking: addressed, else a probability
            self.policy_tag.setText("SU")
            self.policy_tag.setVisible(True)
        self._update_tip()

    def set_proactivity(self, proactivity: dict[str, object]) -> None:
        """Show the AI participant's proactivity: preset (or custom) on the chip, thresholds in
        the tooltip."""
        self.proactivity = dict(proactivity)
        self.preset_label.setText(preset_of(proactivity) if proactivity else "")
        self.preset_label.setVisible(self.kind == "ai" and bool(proactivity))
        self._update_tip()

    def _update_tip(self) -> None:
        policy = self.policy
        tip = f"{self.name} — {policy_label(policy)}\n{POLICY_HELP.get(policy, '')}"
        if self.proactivity:
            name = preset_of(self.proactivity)
            unused = "" if policy in ("", "inner-thoughts") else " (not used by this policy)"
            tip += (
                f"\nProactivity{unused}: {'custom' if name == 'custom' else name + ' preset'}"
                f"\n{thresholds(self.proactivity)}"
            )
        if self.kind == "simulated":
            tip = SIMULATED_HELP.format(self.name)
        self.setToolTip(tip if self.kind in ("ai", "simulated") else "")
        self.policy_tag.setToolTip(tip if self.kind in ("ai", "simulated") else "")
        self.preset_label.setToolTip(tip if self.kind == "ai" else "")

    def set_state(self, state: str) -> None:
        self.state = state
        self.state_label.setText(STATE_TEXT.get(state, state))
        color = {"thinking": "#b26a00", "wants_to_speak": "#2e7d32", "speaking": "#c62828"}.get(
            state, "#666"
        )
        self.state_label.setStyleSheet(
            f"color:{color}; font-size:11px; font-weight:{'bold' if state != 'idle' else 'normal'};"
        )

    def set_selected(self, on: bool) -> None:
        border = self.color if on else "#d0d0d0"
        self.setStyleSheet(
            f"#chip {{ border:2px solid {border}; border-radius:8px; background:{'#f4f8ff' if on else 'white'}; }}"
        )

    def mousePressEvent(self, event) -> None:
        self.clicked.emit(self.name)


class ParticipantsBar(QScrollArea):
    """Everyone in the room; clicking a participant makes the side panes follow them."""

    def __init__(
        self, bridge: EngineBridge, selection: SelectedParticipant, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.selection = selection
        self.chips: dict[str, ParticipantChip] = {}
        self.colors: dict[str, str] = {}
        self._stale: set[str] = set()
        inner = QWidget()
        self.row = QHBoxLayout(inner)
        self.row.setContentsMargins(4, 4, 4, 4)
        self.row.addStretch(1)
        self.setWidget(inner)
        self.setWidgetResizable(True)
        self.setFixedHeight(TALL)
        self._compact = False  # see set_compact
        self._chip_height: int | None = None
        inner.installEventFilter(self)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bridge.participant_joined.connect(self._joined)
        bridge.participant_left.connect(self._left)
        bridge.state_changed.connect(self._state)
        bridge.presence_changed.connect(self._presence)
        bridge.policy_changed.connect(self._policy)
        bridge.proactivity_changed.connect(self._proactivity)
        selection.changed.connect(self._selected)

    # -- height ----------------------------------------------------------------------------------

    def set_compact(self, on: bool) -> None:
        """Compact (a short window): as tall as the chips, and the scroll bar's room only while
        they overflow; else :data:`TALL`, the scroll bar's room always kept."""
        self._compact = on
        self._fit_height()

    def _fit_height(self) -> None:
        inner = self.widget()
        if not self._compact or inner is None:
            self.setFixedHeight(TALL)
            return
        # A row of chips, whether or not there are chips yet: the bar keeps its height while a
        # replay rebuilds them or a session starts (the panes under it do not jump).
        if self._chip_height is None:
            probe = ParticipantChip("M", "ai", "#000000")
            probe.set_policy("inner-thoughts")
            self._chip_height = probe.sizeHint().height()
            probe.deleteLater()
        margins = self.row.contentsMargins()
        height = self._chip_height + margins.top() + margins.bottom() + 2 * self.frameWidth()
        if inner.sizeHint().width() > self.viewport().width():
            height += self.horizontalScrollBar().sizeHint().height()
        self.setFixedHeight(min(TALL, height))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest and watched is self.widget():
            self._fit_height()  # chips came or went
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._compact and event.size().width() != event.oldSize().width():
            self._fit_height()

    def reset(self) -> None:
        for chip in self.chips.values():
            self.row.removeWidget(chip)
            chip.deleteLater()
        self.chips.clear()
        self.colors.clear()
        self._stale = set()

    def begin_rebuild(self) -> None:
        """A replay jumps: chips of participants who still exist afterwards are kept."""
        self._stale = set(self.chips)

    def end_rebuild(self) -> None:
        for name in self._stale:
            self._left(name)
        self._stale = set()

    def _joined(self, e) -> None:
        color = (
            theme.HUMAN_COLOR if e.participant_kind == "human" else theme.color_for(e.color_index)
        )
        old = self.chips.get(e.name) if e.name in self._stale else None
        if old is not None and (old.color, old.kind) == (color, e.participant_kind):
            self._stale.discard(e.name)  # the same participant, seen again by a replay jump
            old.set_policy(e.policy)  # as it joined; a later change follows
            old.set_proactivity(e.proactivity or {})
            return
        if e.name in self.chips:  # another participant of that name: a chip of its own
            self._stale.discard(e.name)
            self._drop(e.name)
        self.colors[e.name] = color
        chip = ParticipantChip(e.name, e.participant_kind, color)
        chip.set_policy(e.policy)
        chip.set_proactivity(e.proactivity or {})
        if getattr(e, "remote", False):
            chip.set_remote()
        chip.clicked.connect(self.selection.select)
        self.chips[e.name] = chip
        self.row.insertWidget(self.row.count() - 1, chip)
        if not self.selection.name and e.participant_kind == "ai":
            self.selection.select(e.name)
        chip.set_selected(self.selection.name == e.name)

    def _drop(self, name: str) -> None:
        chip = self.chips.pop(name, None)
        if chip is not None:
            self.row.removeWidget(chip)
            chip.deleteLater()

    def _left(self, name: str) -> None:
        self._drop(name)
        if self.selection.name == name:
            self.selection.select(next(iter(self.chips), ""))

    def _state(self, name: str, state: str) -> None:
        if name in self.chips:
            self.chips[name].set_state(state)

    def _presence(self, name: str, online: bool) -> None:
        if name in self.chips:
            self.chips[name].set_presence(online)

    def _policy(self, name: str, policy: str) -> None:
        if name in self.chips:
            self.chips[name].set_policy(policy)

    def _proactivity(self, name: str, proactivity: dict[str, object]) -> None:
        if name in self.chips:
            self.chips[name].set_proactivity(proactivity)

    def _selected(self, name: str) -> None:
        for n, chip in self.chips.items():
            chip.set_selected(n == name)
