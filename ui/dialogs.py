"""Dialogs: new session, engine settings (with test connection), participant proactivity and
turn-taking policy, joining."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from playground import domain, factory
from playground.settings import PRESETS, ProactivitySettings, Settings
from ui.policies import POLICY_HELP, POLICY_LABELS, policy_combo
from ui.screen_fit import fit_window, scrolling_body

PRESET_LABELS = {
    "simulation": "Simulation default (paper)",
    "non-stop-chatter": "Non-stop chatter",
    "active-contributor": "Active contributor",
    "selective-participant": "Selective participant",
}


def ok_cancel(dialog: QDialog) -> QDialogButtonBox:
    """OK / Cancel wired to the dialog's accept / reject."""
    buttons = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
    )
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons


def preset_combo(current: str = "simulation", *, custom: bool = False) -> QComboBox:
    combo = QComboBox()
    for key, label in PRESET_LABELS.items():
        combo.addItem(label, key)
    if custom:
        combo.addItem("Custom", "custom")
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


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
        self.list = QListWidget()
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
        fit_window(self, (600, 660))

    # -- turn-taking policies (conditions) --------------------------------------------------------

    def _build_policies(self) -> QGroupBox:
        """One policy per ticked participant, and a quick "All:" choice over them."""
        box = QGroupBox("Turn-taking (condition)")
        col = QVBoxLayout(box)
        top = QHBoxLayout()
        self.policy_all = QComboBox()
        for policy, label in POLICY_LABELS.items():
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
        self.policy_grid.setColumnStretch(1, 1)
        self.policy_grid.setColumnStretch(3, 1)
        self._show_condition()

    def _policy_picked(self, pid: str, combo: QComboBox) -> None:
        self._policies[pid] = cast(domain.Policy, combo.currentData())
        combo.setToolTip(POLICY_HELP[combo.currentData()])
        self._show_condition()

    def _show_condition(self) -> None:
        policies = list(self.policies().values())
        condition = factory.condition_of(policies) if policies else ""
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


class EngineSettingsDialog(QDialog):
    """Offline engine or an OpenAI-compatible server; a typed key stays in memory only."""

    test_requested = Signal(dict)

    def __init__(
        self, settings: Settings, *, key_from_env: bool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Engine settings")
        lay, outer = scrolling_body(self)
        form = QFormLayout()
        self.engine = QComboBox()
        self.engine.addItem("Offline engine (no language model, no network)", "offline")
        self.engine.addItem("OpenAI-compatible server", "openai")
        self.engine.setCurrentIndex(self.engine.findData(settings.engine.engine))
        self.base_url = QLineEdit(settings.llm.base_url or "")
        self.base_url.setPlaceholderText(
            "https://api.openai.com/v1 · http://localhost:11434/v1 (Ollama) …"
        )
        self.model = QLineEdit(settings.llm.model)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(
            "taken from OPENAI_API_KEY" if key_from_env else "not needed for local servers"
        )
        self.mode = QComboBox()
        self.mode.addItem("Per thought (as in the paper)", "per-thought")
        self.mode.addItem("Batched (one evaluation call per agent, cheaper)", "batched")
        self.mode.setCurrentIndex(self.mode.findData(settings.engine.evaluation_mode))
        self.rating = QComboBox()
        self.rating.addItem("Auto: logprobs where the server gives them, else sampled", "auto")
        self.rating.addItem("Logprobs of the rating token", "logprobs")
        self.rating.addItem(
            f"Sampled ({settings.engine.rating_samples} ratings, G-Eval)", "sampled"
        )
        self.rating.addItem("Parsed rating only (cheapest)", "parsed")
        self.rating.setCurrentIndex(self.rating.findData(settings.engine.rating_method))
        self.llm_concurrency = QLineEdit(
            "auto" if settings.llm.adaptive_concurrency else str(settings.llm.concurrency)
        )
        self.llm_concurrency.setToolTip(
            "auto: start at 2 calls in flight for a server on this machine or network and adapt"
            " to what it sustains; a number fixes it"
        )
        self.pins = QLineEdit(",".join(f"{k}={v}" for k, v in settings.llm.pins.items()))
        self.pins.setPlaceholderText(
            "learned from the server (e.g. structured=json_object, logprobs=no)"
        )
        self.pins.setToolTip(
            "Capabilities to fix instead of learning them: structured, tokens, temperature,"
            " logprobs, n, seed"
        )
        self.pause_seconds = QDoubleSpinBox()
        self.pause_seconds.setRange(1, 600)
        self.pause_seconds.setValue(settings.room.pause_seconds)
        self.pause_seconds.setSuffix(" s")
        self.max_turns = QSpinBox()
        self.max_turns.setRange(1, 10_000)
        self.max_turns.setValue(settings.room.max_turns)
        form.addRow("Engine", self.engine)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key", self.api_key)
        form.addRow("Evaluation", self.mode)
        form.addRow("Rating distribution", self.rating)
        form.addRow("Calls in flight", self.llm_concurrency)
        form.addRow("Pinned capabilities", self.pins)
        form.addRow("Pause trigger after", self.pause_seconds)
        form.addRow("Max turns", self.max_turns)
        lay.addLayout(form)
        self.applies_note = QLabel(
            "Changes apply to the next new session. The session on screen keeps the engine it"
            " started with (the status bar names it)."
        )
        self.applies_note.setWordWrap(True)
        self.applies_note.setStyleSheet("color:#8a4b00;")
        lay.addWidget(self.applies_note)
        row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(lambda: self.test_requested.emit(self.overrides()))
        self.result_label = QLabel("")
        self.result_label.setWordWrap(True)
        row.addWidget(self.test_button)
        row.addWidget(self.result_label, 1)
        lay.addLayout(row)
        note = QLabel(
            "A key typed here is kept in memory for this run only; it is never written to the session database."
        )
        note.setWordWrap(True)
        note.setStyleSheet("color:#666; font-size:11px;")
        lay.addWidget(note)
        buttons = ok_cancel(self)
        outer.addWidget(buttons)
        self.engine.currentIndexChanged.connect(self._toggle)
        self._toggle()
        fit_window(self, (600, 440))

    def _toggle(self) -> None:
        remote = self.engine.currentData() == "openai"
        for w in (
            self.base_url,
            self.model,
            self.api_key,
            self.mode,
            self.rating,
            self.llm_concurrency,
            self.pins,
            self.test_button,
        ):
            w.setEnabled(remote)

    def overrides(self) -> dict[str, object]:
        return {
            "engine": self.engine.currentData(),
            "base_url": self.base_url.text().strip() or None,
            "model": self.model.text().strip(),
            "api_key": self.api_key.text().strip() or None,
            "evaluation_mode": self.mode.currentData(),
            "rating_method": self.rating.currentData(),
            "llm_concurrency": self.llm_concurrency.text().strip() or "auto",
            "pins": self.pins.text().strip() or None,
            "pause_seconds": self.pause_seconds.value(),
            "max_turns": self.max_turns.value(),
        }

    def show_result(self, text: str, ok: bool) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet(f"color:{'#2e7d32' if ok else '#c62828'};")


class ParticipantSettingsDialog(QDialog):
    """An AI participant's turn-taking policy, and its proactivity: a preset, or custom values
    for the three layers of proactivity and interruption (used by the Inner Thoughts policy)."""

    def __init__(
        self,
        name: str,
        current: ProactivitySettings,
        parent: QWidget | None = None,
        *,
        policy: domain.Policy = "inner-thoughts",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Participant settings — {name}")
        lay, outer = scrolling_body(self)
        top = QFormLayout()
        self.policy = policy_combo(policy)
        self.policy.setToolTip("How this participant takes turns; it applies from the next trigger")
        top.addRow("Turn-taking policy", self.policy)
        self.policy_help = QLabel("")
        self.policy_help.setWordWrap(True)
        self.policy_help.setStyleSheet("color:#666; font-size:11px;")
        top.addRow(self.policy_help)
        lay.addLayout(top)
        self.proactivity_box = QGroupBox("Proactivity (Inner Thoughts)")
        lay.addWidget(self.proactivity_box)
        form = QFormLayout(self.proactivity_box)
        match = next((k for k, v in PRESETS.items() if v == current), "custom")
        self.preset = preset_combo(match, custom=True)
        self.system1_prob = self._spin(0, 1, 0.05, current.system1_prob)
        self.im_threshold = self._spin(1, 5, 0.05, current.im_threshold)
        self.interrupt_threshold = self._spin(1, 5, 0.05, current.interrupt_threshold)
        self.proactive_tone = QCheckBox("restyle utterances assertively")
        self.proactive_tone.setChecked(current.proactive_tone)
        self.system1_count = QSpinBox()
        self.system1_count.setRange(0, 5)
        self.system1_count.setValue(current.system1_count)
        self.system2_count = QSpinBox()
        self.system2_count.setRange(0, 5)
        self.system2_count.setValue(current.system2_count)
        form.addRow("Preset", self.preset)
        form.addRow("system1Prob (overt)", self._with_slider(self.system1_prob))
        form.addRow("imThreshold (covert)", self._with_slider(self.im_threshold))
        form.addRow("interruptThreshold", self._with_slider(self.interrupt_threshold))
        form.addRow("proactiveTone (tonal)", self.proactive_tone)
        form.addRow("System-1 thoughts per trigger", self.system1_count)
        form.addRow("System-2 thoughts per trigger", self.system2_count)
        buttons = ok_cancel(self)
        outer.addWidget(buttons)
        self.preset.currentIndexChanged.connect(self._apply_preset)
        self.policy.currentIndexChanged.connect(self._show_policy)
        self._show_policy()
        fit_window(self, self.sizeHint())

    def _show_policy(self) -> None:
        policy = self.policy_value()
        text = POLICY_HELP[policy]
        if policy != "inner-thoughts":
            text += " The proactivity settings below are kept, and apply if it returns to Inner Thoughts."
        self.policy_help.setText(text)

    def policy_value(self) -> domain.Policy:
        """The chosen turn-taking policy."""
        return cast(domain.Policy, self.policy.currentData())

    def _with_slider(self, spin: QDoubleSpinBox) -> QWidget:
        """A slider beside the spin box, kept in step with it (hundredths)."""
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        slider = QSlider(Qt.Orientation.Horizontal)
        slider.setRange(round(spin.minimum() * 100), round(spin.maximum() * 100))
        slider.setValue(round(spin.value() * 100))
        slider.valueChanged.connect(lambda v: spin.setValue(v / 100))
        spin.valueChanged.connect(lambda v: slider.setValue(round(v * 100)))
        spin.slider = slider  # type: ignore[attr-defined]
        row.addWidget(slider, 1)
        row.addWidget(spin)
        return box

    @staticmethod
    def _spin(lo: float, hi: float, step: float, value: float) -> QDoubleSpinBox:
        s = QDoubleSpinBox()
        s.setRange(lo, hi)
        s.setSingleStep(step)
        s.setDecimals(2)
        s.setValue(value)
        return s

    def _apply_preset(self) -> None:
        p = PRESETS.get(self.preset.currentData())
        if p is None:
            return
        self.system1_prob.setValue(p.system1_prob)
        self.im_threshold.setValue(p.im_threshold)
        self.interrupt_threshold.setValue(p.interrupt_threshold)
        self.proactive_tone.setChecked(p.proactive_tone)
        self.system1_count.setValue(p.system1_count)
        self.system2_count.setValue(p.system2_count)

    def value(self) -> ProactivitySettings:
        return ProactivitySettings(
            system1_prob=self.system1_prob.value(),
            im_threshold=self.im_threshold.value(),
            interrupt_threshold=self.interrupt_threshold.value(),
            proactive_tone=self.proactive_tone.isChecked(),
            system1_count=self.system1_count.value(),
            system2_count=self.system2_count.value(),
        )


class JoinDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Join the conversation")
        lay = QFormLayout(self)
        self.name = QLineEdit("Me")
        lay.addRow("Your name", self.name)
        hint = QLabel(
            "The conversation switches to real time: every message you send triggers the agents; "
            "after a pause they may speak up on their own."
        )
        hint.setWordWrap(True)
        lay.addRow(hint)
        buttons = ok_cancel(self)
        lay.addRow(buttons)
        fit_window(self, self.sizeHint())


class PersonaEditorDialog(QDialog):
    """Edit a persona file: description, style, five facts, and weighted memories.

    Memories are one per line as ``kind | weight | text`` (kinds: objective, interest, knowledge,
    experience). A value the persona format rejects is reported with its field; nothing is saved.
    """

    saved = Signal(object)  # domain.Persona

    def __init__(
        self, persona: domain.Persona, save: object, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        from PySide6.QtWidgets import QPlainTextEdit

        self.setWindowTitle(f"Edit persona — {persona.name}")
        self.persona = persona
        self._save = save
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.description = QLineEdit(persona.description)
        self.style_edit = QLineEdit(persona.style)
        self.facts = QPlainTextEdit("\n".join(persona.facts))
        self.memories = QPlainTextEdit(
            "\n".join(f"{m.kind} | {m.weight:g} | {m.text}" for m in persona.memories)
        )
        form.addRow("Description", self.description)
        form.addRow("Speaking style", self.style_edit)
        form.addRow("Facts (one per line)", self.facts)
        form.addRow("Memories (kind | weight | text)", self.memories)
        lay.addLayout(form)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color:#c62828;")
        lay.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.try_save)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        fit_window(self, (640, 520))

    def edited(self) -> domain.Persona:
        from pydantic import ValidationError

        from playground import errors

        memories = []
        for n, line in enumerate(self.memories.toPlainText().splitlines(), start=1):
            if not line.strip():
                continue
            parts = [p.strip() for p in line.split("|", 2)]
            if len(parts) != 3:
                raise errors.PersonaError(
                    self.persona.id, f"memories line {n}", "write it as kind | weight | text"
                )
            try:
                memories.append({"kind": parts[0], "weight": float(parts[1]), "text": parts[2]})
            except ValueError:
                raise errors.PersonaError(
                    self.persona.id, f"memories line {n}", f"weight {parts[1]!r} is not a number"
                ) from None
        data = {
            **self.persona.model_dump(),
            "description": self.description.text().strip(),
            "style": self.style_edit.text().strip(),
            "facts": [f.strip() for f in self.facts.toPlainText().splitlines() if f.strip()],
            "memories": memories,
        }
        try:
            return domain.Persona.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise errors.PersonaError(
                self.persona.id, ".".join(str(p) for p in first["loc"]), first["msg"]
            ) from exc

    def try_save(self) -> None:
        from playground import errors

        try:
            persona = self.edited()
            self._save(persona)  # type: ignore[operator]
        except errors.PlaygroundError as exc:
            self.error.setText(str(exc))
            return
        self.saved.emit(persona)
        self.accept()
