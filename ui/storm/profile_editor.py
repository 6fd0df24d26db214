"""The simulated-user profile editor: a dialog over one profile's fields; Save writes its TOML file.

Each field has an error line under it. A bad value (a name with a space, an attribute line with
no ``=``, an "unknown" entry naming no attribute, a value the profile model refuses, or a field
the file writer refuses) is shown there, in red, and nothing is written; the dialog stays open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.domain.simulated_user import CATEGORIES, UserProfile
from ui.screen_fit import fit_window

ERROR_STYLE = "color:#c62828;"
#: Fields written as ``key = value`` lines.
MAPPINGS = ("base", "traits", "context", "task.attributes")
#: Fields written one item per line.
LISTS = ("task.requirements", "task.success_criteria", "unknown", "examples")
LABELS = {
    "id": "Profile id (file name)",
    "name": "Name",
    "description": "Description",
    "task.category": "Task category",
    "task.task": "Task",
    "task.attributes": "Task attributes (key = value)",
    "task.requirements": "Requirements (one per line)",
    "task.success_criteria": "Success criteria (one per line)",
    "difficulty": "Difficulty (style, length, content, tone: 1–5)",
    "uncertainty": "Uncertainty (%)",
    "unknown": "Unknown to the user (section.key, one per line)",
    "base": "Base profile (key = value)",
    "traits": "Behavioural traits (key = value)",
    "context": "Context (key = value)",
    "examples": "Example messages (one per line)",
}


class FieldError(ValueError):
    """A field's text cannot be read (``field``: the editor's dotted field name)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def parse_mapping(field: str, text: str) -> dict[str, str]:
    """``key = value`` lines as a dict. Raises FieldError naming the line that is not one."""
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise FieldError(field, f"line {n}: write “key = value” (got {line.strip()!r})")
        out[key.strip().replace(" ", "_")] = value.strip()
    return out


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _field_of(loc: tuple[Any, ...]) -> str:
    """The editor field a pydantic error location belongs to."""
    parts = [str(p) for p in loc if not isinstance(p, int)]
    if not parts:
        return ""
    if parts[0] == "task" and len(parts) > 1:
        return f"task.{parts[1]}"
    return parts[0]


class ProfileEditorDialog(QDialog):
    """Edit one simulated user's profile; Save validates it and writes it with ``save``.

    Args:
        profile: The profile to start from.
        save: Writes the edited profile (``profiles.save_profile`` in the window). It may raise
            :class:`errors.ProfileError` (shown next to its field) or another
            :class:`errors.PlaygroundError` (shown under the form).
        parent: Optional parent widget.

    Attributes:
        inputs: The input widget of each field, by dotted name.
        errors: The error line of each field, by dotted name.
    """

    saved = Signal(object)  # the UserProfile written

    def __init__(
        self,
        profile: UserProfile,
        save: Callable[[UserProfile], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Simulated user — {profile.name}")
        self.profile = profile
        self._save = save
        self.inputs: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.id_edit = QLineEdit(profile.id)
        self.name_edit = QLineEdit(profile.name)
        self.description = self._text(profile.description, 2)
        self.category = QComboBox()
        self.category.setEditable(True)
        self.category.addItems(list(CATEGORIES))
        self.category.setCurrentText(profile.task.category)
        self.task = QLineEdit(profile.task.task)
        d = profile.difficulty
        self.difficulty = {k: self._spin(1, 5, getattr(d, k)) for k in type(d).model_fields}
        diff = QWidget()
        row = QHBoxLayout(diff)
        row.setContentsMargins(0, 0, 0, 0)
        for k, spin in self.difficulty.items():
            row.addWidget(QLabel(k))
            row.addWidget(spin)
        row.addStretch(1)
        self.uncertainty = self._spin(0, 100, profile.uncertainty)
        mapping_values = {
            "base": profile.base,
            "traits": profile.traits,
            "context": profile.context,
            "task.attributes": profile.task.attributes,
        }
        list_values = {
            "task.requirements": profile.task.requirements,
            "task.success_criteria": profile.task.success_criteria,
            "unknown": profile.unknown,
            "examples": profile.examples,
        }
        widgets: dict[str, QWidget] = {
            "id": self.id_edit,
            "name": self.name_edit,
            "description": self.description,
            "task.category": self.category,
            "task.task": self.task,
            "difficulty": diff,
            "uncertainty": self.uncertainty,
        }
        for key, values in mapping_values.items():
            widgets[key] = self._text("\n".join(f"{k} = {v}" for k, v in values.items()), 3)
        for key, items in list_values.items():
            widgets[key] = self._text("\n".join(items), 3)
        order = [
            "id",
            "name",
            "description",
            "task.category",
            "task.task",
            "task.attributes",
            "task.requirements",
            "task.success_criteria",
            "difficulty",
            "uncertainty",
            "unknown",
            "base",
            "traits",
            "context",
            "examples",
        ]
        for key in order:
            error = QLabel("")
            error.setStyleSheet(ERROR_STYLE)
            error.setWordWrap(True)
            error.hide()
            cell = QWidget()
            col = QVBoxLayout(cell)
            col.setContentsMargins(0, 0, 0, 0)
            col.setSpacing(1)
            col.addWidget(widgets[key])
            col.addWidget(error)
            form.addRow(LABELS[key], cell)
            self.inputs[key] = widgets[key]
            self.errors[key] = error
        inner = QWidget()
        inner.setLayout(form)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inner)
        self.general_error = QLabel("")
        self.general_error.setStyleSheet(ERROR_STYLE)
        self.general_error.setWordWrap(True)
        self.general_error.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.try_save)
        self.buttons.rejected.connect(self.reject)
        note = QLabel("Saved to the profile's TOML file; it applies to new sessions.")
        note.setStyleSheet("color:#666;")
        lay = QVBoxLayout(self)
        lay.addWidget(scroll, 1)
        lay.addWidget(self.general_error)
        lay.addWidget(note)
        lay.addWidget(self.buttons)
        fit_window(self, (620, 640))

    @staticmethod
    def _text(value: str, rows: int) -> QPlainTextEdit:
        edit = QPlainTextEdit(value)
        edit.setTabChangesFocus(True)
        edit.setFixedHeight(edit.fontMetrics().lineSpacing() * rows + 12)
        return edit

    @staticmethod
    def _spin(lo: int, hi: int, value: int) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(lo, hi)
        spin.setValue(value)
        return spin

    def _plain(self, key: str) -> str:
        widget = self.inputs[key]
        assert isinstance(widget, QPlainTextEdit)
        return widget.toPlainText()

    # -- validation ------------------------------------------------------------------------------

    def edited(self) -> UserProfile:
        """The profile as edited.

        Raises:
            FieldError: a field's text cannot be read.
            ValidationError: the profile model refuses a value.
        """
        mappings = {key: parse_mapping(key, self._plain(key)) for key in MAPPINGS}
        lists = {key: _lines(self._plain(key)) for key in LISTS}
        known = {
            f"{section}.{k}"
            for section, values in (
                ("base", mappings["base"]),
                ("traits", mappings["traits"]),
                ("context", mappings["context"]),
                ("task", mappings["task.attributes"]),
            )
            for k in values
        }
        for entry in lists["unknown"]:
            if entry not in known:
                raise FieldError(
                    "unknown",
                    f"{entry!r} names no attribute of this profile (write section.key, e.g."
                    " base.age_group)",
                )
        data = self.profile.model_dump()
        data.update(
            id=self.id_edit.text().strip(),
            name=self.name_edit.text().strip(),
            description=self.description.toPlainText().strip(),
            base=mappings["base"],
            traits=mappings["traits"],
            context=mappings["context"],
            difficulty={k: s.value() for k, s in self.difficulty.items()},
            uncertainty=self.uncertainty.value(),
            unknown=lists["unknown"],
            examples=lists["examples"],
        )
        data["task"] = {
            "category": self.category.currentText().strip(),
            "task": self.task.text().strip(),
            "attributes": mappings["task.attributes"],
            "requirements": lists["task.requirements"],
            "success_criteria": lists["task.success_criteria"],
        }
        return UserProfile.model_validate(data)

    def show_error(self, field: str, message: str) -> None:
        """Show ``message`` next to ``field`` (under the form when the field is not shown)."""
        label = self.errors.get(field)
        if label is None:
            label = self.general_error
            message = f"{field}: {message}" if field else message
        label.setText(message)
        label.show()

    def clear_errors(self) -> None:
        for label in [*self.errors.values(), self.general_error]:
            label.clear()
            label.hide()

    def try_save(self) -> None:
        """Validate and write; on any problem say what and where, and stay open."""
        self.clear_errors()
        try:
            profile = self.edited()
        except FieldError as exc:
            self.show_error(exc.field, str(exc))
            return
        except ValidationError as exc:
            for err in exc.errors():
                self.show_error(_field_of(tuple(err["loc"])), err["msg"])
            return
        try:
            self._save(profile)
        except errors.ProfileError as exc:
            self.show_error(_field_of(tuple(exc.field.split("."))), f"{exc.path}: {exc.reason}")
            return
        except errors.PlaygroundError as exc:
            self.show_error("", str(exc))
            return
        self.profile = profile
        self.saved.emit(profile)
        self.accept()
