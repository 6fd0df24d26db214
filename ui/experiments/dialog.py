"""The New experiment dialog: ``playground experiment``'s options, checked before it closes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from playground import domain, errors, personas
from ui.dialogs.common import error_and_buttons, keep, kept, show_error
from ui.dialogs.common import spin_box as _spin
from ui.experiments.launch import EngineChoice, Options, Plan
from ui.screen_fit import fit_window

CONDITION_TEXT: dict[str, str] = {
    "inner-thoughts": "Inner Thoughts (the paper's simulation settings)",
    "next-speaker": "Next-speaker prediction (the baseline)",
    "reactive": "Reactive: answers only when addressed by name",
}
DEFAULT_CONDITIONS = ("inner-thoughts", "next-speaker")
#: QSettings group of the values last launched (the dialog opens with them).
SETTINGS_GROUP = "experiments/new"


class NewExperimentDialog(QDialog):
    """Conditions, sizes, seed, personas, concurrency, name and engine of a new experiment.

    It opens with the values last launched (kept in ``QSettings``; a cancelled dialog keeps
    nothing).

    Args:
        planner: turns the options into a :class:`Plan`; its ``PlaygroundError`` (a bad persona
            directory, too many agents, a bad engine setting) is shown in the dialog, which
            stays open.
        personas_dir: the directory offered first.
        server_label: how the window's OpenAI-compatible engine is named (model @ server).
        engine: the engine chosen first.
    """

    def __init__(
        self,
        planner: Callable[[Options], Plan],
        *,
        personas_dir: str,
        server_label: str,
        engine: EngineChoice = "offline",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New experiment")
        self.planner = planner
        self.plan: Plan | None = None
        lay = QVBoxLayout(self)
        intro = QLabel(
            "Every condition runs on the same draws of participants, initiator and icebreaker"
            " (a paired design). The same options give the same experiment: launching it again"
            " skips the conversations already finished."
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)

        form = QFormLayout()
        conds = QVBoxLayout()
        self.conditions: dict[domain.Policy, QCheckBox] = {}
        for c in domain.POLICIES:
            box = QCheckBox(CONDITION_TEXT.get(c, c))
            box.setChecked(c in DEFAULT_CONDITIONS)
            self.conditions[c] = box
            conds.addWidget(box)
        form.addRow("Conditions", conds)
        self.conversations = _spin(1, 100_000, 50, " per condition")
        self.agents = _spin(1, 100, 4, " per conversation")
        self.turns = _spin(1, 10_000, 15, " messages")
        self.seed = _spin(0, 2**31 - 1, 1)
        form.addRow("Conversations", self.conversations)
        form.addRow("Agents", self.agents)
        form.addRow("Turns", self.turns)
        form.addRow("Seed", self.seed)
        prow = QHBoxLayout()
        self.personas_dir = QLineEdit(personas_dir)
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        prow.addWidget(self.personas_dir, 1)
        prow.addWidget(self.browse)
        form.addRow("Personas", prow)
        self.personas_info = QLabel("")
        self.personas_info.setWordWrap(True)
        form.addRow("", self.personas_info)
        self.concurrency = _spin(1, 256, 8, " conversations at once")
        form.addRow("Concurrency", self.concurrency)
        self.name = QLineEdit()
        self.name.setPlaceholderText("optional label, e.g. pilot-1")
        form.addRow("Name", self.name)
        self.engine = QComboBox()
        self.engine.addItem("Offline engine (no language model)", "offline")
        self.engine.addItem(f"{server_label} (the window's engine, set under Engine…)", "openai")
        self.engine.setCurrentIndex(self.engine.findData(engine))
        form.addRow("Engine", self.engine)
        lay.addLayout(form)

        self.error, self.buttons = error_and_buttons(self, lay, "Launch")
        self.personas_dir.editingFinished.connect(self._check_personas)
        self._restore()
        self._check_personas()
        fit_window(self, (620, self.sizeHint().height()))

    def _restore(self) -> None:
        """Show the values last launched, where there are any (a number out of range is
        clamped; an unknown engine or condition is ignored)."""
        saved = kept(SETTINGS_GROUP)
        if "conditions" not in saved:
            return
        chosen = saved["conditions"].split(",")
        for c, box in self.conditions.items():
            box.setChecked(c in chosen)
        for key, spin in self._spins().items():
            value = saved.get(key, "")
            if value.lstrip("-").isdigit():
                spin.setValue(int(value))
        self.personas_dir.setText(saved.get("personas_dir", self.personas_dir.text()))
        self.name.setText(saved.get("name", ""))
        engine = self.engine.findData(saved.get("engine", ""))
        if engine >= 0:
            self.engine.setCurrentIndex(engine)

    def _remember(self, opts: Options) -> None:
        """Keep ``opts`` for the next New experiment dialog."""
        keep(
            SETTINGS_GROUP,
            {"conditions": ",".join(opts.conditions)}
            | {key: spin.value() for key, spin in self._spins().items()}
            | {"personas_dir": opts.personas_dir, "name": opts.name or "", "engine": opts.engine},
        )

    def _spins(self) -> dict[str, QSpinBox]:
        return {
            "conversations": self.conversations,
            "agents": self.agents,
            "turns": self.turns,
            "seed": self.seed,
            "concurrency": self.concurrency,
        }

    def options(self) -> Options:
        return Options(
            conditions=tuple(c for c, box in self.conditions.items() if box.isChecked()),
            conversations=self.conversations.value(),
            agents=self.agents.value(),
            turns=self.turns.value(),
            seed=self.seed.value(),
            personas_dir=self.personas_dir.text().strip(),
            concurrency=self.concurrency.value(),
            name=self.name.text().strip() or None,
            engine=self.engine.currentData(),
        )

    def accept(self) -> None:
        """Close only when the options make an experiment; otherwise say what is wrong."""
        opts = self.options()
        if not opts.conditions:
            self._fail("Choose at least one condition.")
            return
        try:
            self.plan = self.planner(opts)
        except errors.PlaygroundError as exc:
            self._fail(str(exc))
            return
        self.error.hide()
        self._remember(opts)
        super().accept()

    def _fail(self, text: str) -> None:
        self.plan = None
        show_error(self.error, text)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Persona directory", self.personas_dir.text())
        if path:
            self.personas_dir.setText(path)
            self._check_personas()

    def _check_personas(self) -> None:
        """Say how many personas the directory holds and cap Agents to it."""
        path = self.personas_dir.text().strip()
        try:
            n = len(personas.load_personas(path))
            m = len(personas.load_icebreakers(path))
        except errors.PlaygroundError as exc:
            self.personas_info.setStyleSheet("color:#c62828;")
            self.personas_info.setText(str(exc))
            return
        self.personas_info.setStyleSheet("color:#555;")
        self.personas_info.setText(
            f"{n} personas (each gets 2 facts borrowed from the others), {m} icebreakers"
        )
        self.agents.setMaximum(max(1, n))
