"""The New session dialog: participants from the persona library (or a random 4), an icebreaker,
the proactivity preset, the seed and each participant's turn-taking policy."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import cast

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from playground.settings import Settings
from ui.dialogs.common import ok_cancel, preset_combo
from ui.policies import POLICY_HELP, policy_combo
from ui.screen_fit import fit_window, scrolling_body
from ui.widgets.wheel_guard import guard_wheel


class NewSessionDialog(QDialog):
    """Choose participants from the persona library (or a random 4) and an icebreaker."""

    def __init__(
        self,
        library: list[domain.Persona],
        icebreakers: list[str],
        settings: Settings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New session")
        self.library = library
        # The form scrolls on a short screen; OK / Cancel stay under it (see ui.screen_fit).
        lay, outer = scrolling_body(self)
        lay.addWidget(QLabel("Participants (AI agents from the persona library):"))
        self.list = _PersonaList()
        for p in library:
            item = QListWidgetItem(f"{p.name} — {p.description}")
            item.setData(Qt.ItemDataRole.UserRole, p.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
        lay.addWidget(self.list)
        buttons_row = QHBoxLayout()
        self.random_button = QPushButton("Random 4")
        self.random_button.clicked.connect(self.pick_random)
        self.edit_button = QPushButton("Edit persona…")
        self.edit_button.setToolTip("Edit the highlighted persona's file")
        buttons_row.addWidget(self.random_button)
        buttons_row.addWidget(self.edit_button)
        buttons_row.addStretch(1)
        lay.addLayout(buttons_row)
        form = QFormLayout()
        self.icebreaker = QComboBox()
        self.icebreaker.setEditable(True)
        self.icebreaker.addItem("(no icebreaker: I will start)", "")
        for ib in icebreakers:
            self.icebreaker.addItem(ib, ib)
        self.icebreaker.setCurrentIndex(1 if icebreakers else 0)
        self.preset = preset_combo(settings.preset)
        self.seed = QSpinBox()
        self.seed.setRange(0, 1_000_000)
        self.seed.setValue(settings.engine.seed)
        self.preset.setToolTip(
            "Applies to the Inner Thoughts agents (the baselines have no thoughts)"
        )
        # Where a run stops (the Engine… dialog's Max turns): said before the session starts.
        cap = settings.room.max_turns
        self.turn_cap = QLabel(
            f"{cap} messages (the icebreaker counts); a run stops there · change it under Engine…"
        )
        self.turn_cap.setWordWrap(True)
        self.turn_cap.setToolTip(
            f"The session ends after {cap} messages. Session ▸ Engine… ▸ Max turns sets it for"
            " new sessions."
        )
        form.addRow("Icebreaker", self.icebreaker)
        form.addRow("Proactivity preset", self.preset)
        form.addRow("Seed", self.seed)
        form.addRow("Turn cap", self.turn_cap)
        lay.addLayout(form)
        lay.addWidget(self._build_policies())
        self.buttons = ok_cancel(self)
        outer.addWidget(self.buttons)
        self.list.itemChanged.connect(self._validate)
        self.list.itemChanged.connect(self._refresh_policy_rows)
        self.pick_random()
        # Scrolling the form over a box leaves its value alone (a click gives it the wheel).
        guard_wheel(self.icebreaker, self.preset, self.seed, self.policy_all)
        # Each persona's whole line where the screen allows (the list asks for it), at least
        # the size that suits a small screen.
        fit_window(self, self.sizeHint().expandedTo(QSize(600, 660)))

    # -- turn-taking policies (conditions) --------------------------------------------------------

    def _build_policies(self) -> QGroupBox:
        """One policy per ticked participant, and a quick "All:" choice over them."""
        box = QGroupBox("Turn-taking (condition)")
        col = QVBoxLayout(box)
        top = QHBoxLayout()
        self.policy_all = QComboBox()
        for policy, label in domain.POLICY_LABELS.items():
            self.policy_all.addItem(f"All: {label}", policy)
        self.policy_all.addItem("Mixed: chosen per participant below", "mixed")
        self.policy_all.setToolTip("Give every chosen participant the same policy")
        self.condition = QLabel("")
        self.condition.setStyleSheet("color:#666;")
        top.addWidget(self.policy_all)
        top.addWidget(self.condition, 1)
        col.addLayout(top)
        self.policy_grid = QGridLayout()
        self.policy_grid.setHorizontalSpacing(10)
        self.policy_grid.setVerticalSpacing(2)
        col.addLayout(self.policy_grid)
        #: Each participant's policy, kept by persona id while it is unticked and ticked again.
        self._policies: dict[str, domain.Policy] = {}
        #: The combo of each ticked participant, by persona id.
        self.policy_combos: dict[str, QComboBox] = {}
        self.policy_all.activated.connect(self._apply_all)
        return box

    def _apply_all(self) -> None:
        policy = self.policy_all.currentData()
        if policy == "mixed":
            return
        for pid in self.policy_combos:
            self._policies[pid] = cast(domain.Policy, policy)
        self._refresh_policy_rows()

    def set_all_policies(self, policy: domain.Policy) -> None:
        """Give every chosen participant ``policy`` (the "All:" choice)."""
        self.policy_all.setCurrentIndex(self.policy_all.findData(policy))
        self._apply_all()

    def set_policy(self, name: str, policy: domain.Policy) -> None:
        """Give the ticked participant called ``name`` its own policy.

        Raises:
            PlaygroundError: nobody of that name is ticked.
        """
        from playground import errors

        persona = next((p for p in self.chosen() if p.name == name), None)
        if persona is None:
            raise errors.PlaygroundError(f"{name} is not among the chosen participants")
        self.policy_combos[persona.id].setCurrentIndex(
            self.policy_combos[persona.id].findData(policy)
        )

    def _refresh_policy_rows(self) -> None:
        """Lay out a policy combo for each ticked participant (two per line)."""
        while self.policy_grid.count():
            item = self.policy_grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.policy_combos = {}
        for i, persona in enumerate(self.chosen()):
            policy = self._policies.get(persona.id, "inner-thoughts")
            combo = policy_combo(policy)
            combo.setToolTip(POLICY_HELP[policy])
            combo.currentIndexChanged.connect(
                lambda _i=0, pid=persona.id, c=combo: self._policy_picked(pid, c)
            )
            label = QLabel(persona.name)
            label.setBuddy(combo)
            row, pair = divmod(i, 2)
            self.policy_grid.addWidget(label, row, pair * 2)
            self.policy_grid.addWidget(combo, row, pair * 2 + 1)
            self.policy_combos[persona.id] = combo
            guard_wheel(combo)
        self.policy_grid.setColumnStretch(1, 1)
        self.policy_grid.setColumnStretch(3, 1)
        self._show_condition()

    def _policy_picked(self, pid: str, combo: QComboBox) -> None:
        self._policies[pid] = cast(domain.Policy, combo.currentData())
        combo.setToolTip(POLICY_HELP[combo.currentData()])
        self._show_condition()

    def _show_condition(self) -> None:
        policies = list(self.policies().values())
        condition = domain.condition_of(policies) if policies else ""
        self.policy_all.blockSignals(True)
        self.policy_all.setCurrentIndex(max(0, self.policy_all.findData(condition or "mixed")))
        self.policy_all.blockSignals(False)
        self.condition.setText(f"session condition: {condition}" if condition else "")

    def policies(self) -> dict[str, domain.Policy]:
        """Each chosen participant's turn-taking policy, by name."""
        return {p.name: self._policies.get(p.id, "inner-thoughts") for p in self.chosen()}

    def current_persona(self) -> domain.Persona | None:
        item = self.list.currentItem() or self.list.item(0)
        if item is None:
            return None
        pid = item.data(Qt.ItemDataRole.UserRole)
        return next((p for p in self.library if p.id == pid), None)

    def replace_persona(self, persona: domain.Persona) -> None:
        self.library = [persona if p.id == persona.id else p for p in self.library]
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == persona.id:
                item.setText(f"{persona.name} — {persona.description}")

    def pick_random(self) -> None:
        chosen = set(random.sample(range(self.list.count()), min(4, self.list.count())))
        for i in range(self.list.count()):
            self.list.item(i).setCheckState(
                Qt.CheckState.Checked if i in chosen else Qt.CheckState.Unchecked
            )

    def _validate(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.chosen()))

    def chosen(self) -> list[domain.Persona]:
        ids = {
            self.list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.list.count())
            if self.list.item(i).checkState() == Qt.CheckState.Checked
        }
        return [p for p in self.library if p.id in ids]

    def icebreaker_text(self) -> str | None:
        data = self.icebreaker.currentData()
        text = self.icebreaker.currentText().strip()
        if data == "" and text.startswith("(no icebreaker"):
            return None
        return text or None

    def prefill(
        self,
        people: list[domain.Persona],
        *,
        icebreaker: str | None,
        preset: str | None = None,
        seed: int | None = None,
        policies: Mapping[str, domain.Policy] | None = None,
    ) -> None:
        """Pre-fill from a saved session: exactly ``people`` ticked, using these persona snapshots
        (added to the list when the library no longer has them), the icebreaker, preset, seed and
        each participant's turn-taking policy (by name; a missing one is Inner Thoughts)."""
        wanted_policies = dict(policies or {})
        for persona in people:
            self._policies[persona.id] = wanted_policies.get(persona.name, "inner-thoughts")
        for persona in people:
            if any(p.id == persona.id for p in self.library):
                self.replace_persona(persona)
                continue
            self.library = [*self.library, persona]
            item = QListWidgetItem(f"{persona.name} — {persona.description}")
            item.setData(Qt.ItemDataRole.UserRole, persona.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setToolTip("From the saved session (not in the persona library)")
            self.list.addItem(item)
        wanted = {p.id for p in people}
        for i in range(self.list.count()):
            item = self.list.item(i)
            ticked = item.data(Qt.ItemDataRole.UserRole) in wanted
            item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
        if icebreaker:
            index = self.icebreaker.findData(icebreaker)
            if index < 0:
                self.icebreaker.addItem(icebreaker, icebreaker)
                index = self.icebreaker.count() - 1
            self.icebreaker.setCurrentIndex(index)
        else:
            self.icebreaker.setCurrentIndex(0)
        if preset is not None and self.preset.findData(preset) >= 0:
            self.preset.setCurrentIndex(self.preset.findData(preset))
        if seed is not None:
            self.seed.setValue(seed)


class _PersonaList(QListWidget):
    """The persona list, which asks for the width of its longest line and the height of all its
    lines: the dialog is as big as they need where the screen allows (it scrolls otherwise)."""

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if self.count() == 0:
            return hint
        frame = 2 * self.frameWidth()
        bar = self.verticalScrollBar().sizeHint().width()
        rows = sum(self.sizeHintForRow(i) for i in range(self.count()))
        return QSize(
            max(hint.width(), self.sizeHintForColumn(0) + frame + bar),
            max(hint.height(), rows + frame),
        )
