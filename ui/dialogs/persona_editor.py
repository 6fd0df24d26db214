"""The persona editor dialog: a persona file's description, style, facts and weighted memories,
checked against the persona format before it is saved."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from ui.screen_fit import fit_window


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
