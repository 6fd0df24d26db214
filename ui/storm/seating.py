"""Choosing simulated users: the New session dialog's "Simulated users" box, the Generate…
dialog (a profile from the paper's pools by seed, task, difficulty and uncertainty) and
Participants ▸ Add simulated user….

Saved profiles come from ``<personas>/users``; a generated one can be used at once and is saved
there too (so it can be edited and picked again). A profile file that cannot be read is named in
the box, in red, and the others stay usable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
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

from playground import errors
from playground.domain.simulated_user import UNCERTAINTIES, UserProfile
from ui.dialogs.common import intro_label, ok_cancel
from ui.screen_fit import fit_window, preferred_size
from ui.session.simulated import DEFAULT_SPEAK_PROBABILITY, SimulatedSeat

if TYPE_CHECKING:
    from ui.session.controller import SessionController

SPEAK_HELP = (
    "Turn taking of simulated users: one answers whenever a message addresses it by name;"
    " after any other message it speaks with this probability."
)
RANDOM = "(random)"
#: Profiles a pick list shows without scrolling (each on as many lines as its text needs).
ROWS_SHOWN = 6


def describe(profile: UserProfile) -> str:
    """One line for a list: name, task, difficulty level and uncertainty."""
    return (
        f"{profile.name} — {profile.task.task} ({profile.task.category}) ·"
        f" difficulty {profile.difficulty.level} · uncertainty {profile.uncertainty}%"
    )


def known_tasks() -> list[str]:
    """The paper's 15 tasks (appendix I), for the Generate… dialog."""
    from playground.storm import profiles

    return [task for _category, task in profiles.all_tasks()]


def speak_spin(value: float = DEFAULT_SPEAK_PROBABILITY) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(0.0, 1.0)
    spin.setSingleStep(0.05)
    spin.setDecimals(2)
    spin.setValue(value)
    spin.setToolTip(SPEAK_HELP)
    return spin


class GenerateProfileDialog(QDialog):
    """Generate a profile from the pools: seed, task, difficulty 1–5 and uncertainty.

    Args:
        generate: ``generate(seed, task=..., difficulty=..., uncertainty=...)`` (the
            controller's ``simulated.generate_profile``).
        save: writes the generated profile (None: it is not saved).
        seed: the first seed offered.
        parent: Optional parent widget.

    Attributes:
        profile: the generated profile, once OK succeeded.
    """

    def __init__(
        self,
        generate: Callable[..., UserProfile],
        save: Callable[[UserProfile], object] | None = None,
        *,
        seed: int = 0,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate a simulated user")
        self._generate = generate
        self._save = save
        self.profile: UserProfile | None = None
        self.seed = QSpinBox()
        self.seed.setRange(0, 1_000_000)
        self.seed.setValue(seed)
        self.task = QComboBox()
        self.task.setEditable(True)  # a task of one's own is taken as free text
        self.task.addItem(RANDOM)
        with contextlib.suppress(ImportError, AttributeError):  # else free text only
            self.task.addItems(known_tasks())
        self.task.setToolTip("One of the paper's 15 tasks, or a task of your own")
        self.difficulty = QComboBox()
        self.difficulty.addItem(RANDOM, None)
        for level in range(1, 6):
            self.difficulty.addItem(str(level), level)
        self.difficulty.setToolTip("1: precise and complete … 5: vague and indirect")
        self.uncertainty = QComboBox()
        for u in UNCERTAINTIES:
            self.uncertainty.addItem(f"{u} %", u)
        self.uncertainty.setToolTip("The share of profile attributes unknown to the user")
        self.save_box = QCheckBox("Save it to the profiles folder")
        self.save_box.setChecked(save is not None)
        self.save_box.setEnabled(save is not None)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#c62828;")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow("Seed", self.seed)
        form.addRow("Task", self.task)
        form.addRow("Difficulty", self.difficulty)
        form.addRow("Uncertainty", self.uncertainty)
        self.buttons = ok_cancel(self, self.try_generate)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.save_box)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        fit_window(self, (460, 0))

    def try_generate(self) -> None:
        """Generate (and save); a problem is said in the dialog, which stays open."""
        task = self.task.currentText().strip()
        try:
            profile = self._generate(
                self.seed.value(),
                task=None if task in ("", RANDOM) else task,
                difficulty=self.difficulty.currentData(),
                uncertainty=int(self.uncertainty.currentData()),
            )
            if self._save is not None and self.save_box.isChecked():
                self._save(profile)
        except errors.PlaygroundError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.profile = profile
        self.accept()


class SimulatedUsersBox(QGroupBox):
    """New session ▸ Simulated users: tick saved profiles, or generate one; speak probability.

    Args:
        controller: the session controller: its simulated users' profiles and its settings.
        parent: Optional parent widget.
    """

    def __init__(self, controller: SessionController, parent: QWidget | None = None) -> None:
        super().__init__("Simulated users (STORM profiles, optional)", parent)
        self.controller = controller
        self.profiles: dict[str, UserProfile] = {}
        self.list = QListWidget()
        self.list.setToolTip("Tick the simulated users who join the room with the agents")
        # Whole descriptions, wrapped to the list's width (never cut, never scrolled sideways).
        self.list.setWordWrap(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        rows = self.list.fontMetrics().lineSpacing() + 6
        self.list.setMinimumHeight(rows * ROWS_SHOWN + 6)
        self.generate_button = QPushButton("Generate…")
        self.generate_button.setToolTip(
            "Draw a profile from the paper's pools (seed, task, difficulty, uncertainty)"
        )
        self.generate_button.clicked.connect(lambda: self.open_generate())
        room = getattr(getattr(controller, "settings", None), "room", None)
        self.speak = speak_spin(
            getattr(room, "simulated_speak_probability", DEFAULT_SPEAK_PROBABILITY)
        )
        self.error = QLabel("")
        self.error.setStyleSheet("color:#c62828;")
        self.error.setWordWrap(True)
        self.error.hide()
        row = QHBoxLayout()
        row.addWidget(self.generate_button)
        row.addStretch(1)
        row.addWidget(QLabel("Speak probability"))
        row.addWidget(self.speak)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 6)
        lay.addWidget(self.list)
        lay.addLayout(row)
        lay.addWidget(self.error)
        self.dialog: GenerateProfileDialog | None = None
        self.reload()

    def reload(self) -> None:
        """List the saved profiles again (a bad file is named; the rest stay listed)."""
        try:
            found = self.controller.simulated.user_profiles()
        except errors.PlaygroundError as exc:
            found = []
            self.error.setText(f"Profiles: {exc}")
            self.error.show()
        for profile in found:
            self.add_profile(profile, checked=False)

    def add_profile(self, profile: UserProfile, *, checked: bool = True) -> None:
        """List ``profile`` (replacing one with its id) and tick it when ``checked``."""
        self.profiles[profile.id] = profile
        text = describe(profile)
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == profile.id:
                item.setText(text)
                item.setToolTip(text)
                if checked:
                    item.setCheckState(Qt.CheckState.Checked)
                    self._show(item)
                return
        item = QListWidgetItem(text)
        item.setToolTip(text)
        item.setData(Qt.ItemDataRole.UserRole, profile.id)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.list.addItem(item)
        if checked:  # one just generated: in view, and the current row
            self._show(item)

    def _show(self, item: QListWidgetItem) -> None:
        self.list.setCurrentItem(item)
        self.list.scrollToItem(item)

    def set_checked(self, profile_id: str, on: bool = True) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == profile_id:
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def seats(self) -> list[SimulatedSeat]:
        """The ticked profiles, each with the speak probability."""
        p = round(self.speak.value(), 2)
        return [
            SimulatedSeat(self.profiles[self.list.item(i).data(Qt.ItemDataRole.UserRole)], p)
            for i in range(self.list.count())
            if self.list.item(i).checkState() == Qt.CheckState.Checked
        ]

    def open_generate(self) -> GenerateProfileDialog:
        c = self.controller
        dlg = GenerateProfileDialog(
            c.simulated.generate_profile,
            c.simulated.save_profile,
            seed=self.list.count(),
            parent=self,
        )
        dlg.accepted.connect(lambda: self.add_profile(dlg.profile) if dlg.profile else None)
        self.dialog = dlg
        dlg.open()
        return dlg


def attach_to_new_session(dialog: QDialog, controller: SessionController) -> SimulatedUsersBox:
    """Put a :class:`SimulatedUsersBox` into the New session dialog, above its buttons."""
    box = SimulatedUsersBox(controller, dialog)
    lay = getattr(dialog, "body", None) or dialog.layout()  # in its scrolling form, if any
    buttons = getattr(dialog, "buttons", None)
    if isinstance(lay, QVBoxLayout):
        at = lay.indexOf(buttons) if isinstance(buttons, QWidget) else -1
        lay.insertWidget(at if at >= 0 else lay.count(), box)
    wanted = preferred_size(dialog)
    fit_window(dialog, (wanted.width(), wanted.height() + box.sizeHint().height() // 2))
    return box


class AddSimulatedUserDialog(QDialog):
    """Participants ▸ Add simulated user…: a saved or generated profile, and its speak
    probability.

    Args:
        controller: as for :class:`SimulatedUsersBox`.
        parent: Optional parent widget.
    """

    def __init__(self, controller: SessionController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a simulated user")
        self.users = SimulatedUsersBox(controller, self)
        self.users.setTitle("Profile (tick one or more)")
        self.buttons = ok_cancel(self, self._ok)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#c62828;")
        self.error.hide()
        lay = QVBoxLayout(self)
        lay.addWidget(
            intro_label(
                "The simulated user joins the live session now; its profile and hidden state are"
                " shown to you only."
            )
        )
        lay.addWidget(self.users)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        fit_window(self, (560, 0))

    def seats(self) -> list[SimulatedSeat]:
        return self.users.seats()

    def _ok(self) -> None:
        if not self.seats():
            self.error.setText("Tick a profile, or generate one.")
            self.error.show()
            return
        self.accept()
