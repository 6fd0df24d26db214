"""The Participant settings dialog: an AI participant's turn-taking policy and its proactivity
(a preset, or custom values for the layers of proactivity and interruption)."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QWidget,
)

from playground import domain
from playground.settings import PRESETS, ProactivitySettings
from ui.dialogs.common import ok_cancel, preset_combo
from ui.policies import POLICY_HELP, policy_combo
from ui.screen_fit import fit_window, scrolling_body


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
