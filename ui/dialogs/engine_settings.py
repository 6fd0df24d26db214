"""The Engine settings dialog: the offline engine or an OpenAI-compatible server (with a test
of the connection), the evaluation and rating methods, the pause trigger and the turn cap."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from playground.settings import Settings
from ui.dialogs.common import ok_cancel
from ui.screen_fit import fit_window, scrolling_body


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
        self.max_turns.setSuffix(" messages · lifted once a person joins")
        self.max_turns.setToolTip(
            "A simulation stops after this many messages (the icebreaker counts). Once a person"
            " joins, the conversation runs in real time and lasts until Stop: the cap no longer"
            " applies, and the session's end reason says so."
        )
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
