"""Rating plans for researchers: create one from chosen sessions or an experiment, watch progress."""

from __future__ import annotations

import html
from typing import Any, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.experiments import results
from playground.rating.store import Plan, PlanKind, RatingStore
from playground.report.format import count
from playground.storage import library
from ui.screen_fit import fit_window
from ui.theme import show_warning

KINDS = {"conversation": "Conversation ratings (7 statements)", "pairwise": "Pairwise preference"}


class PlanProgress(QFrame):
    """One plan: its name, kind and a progress bar per rater."""

    def __init__(self, plan: Plan, progress: dict[str, tuple[int, int]]) -> None:
        super().__init__()
        self.plan = plan
        self.setObjectName("plan")
        self.setStyleSheet("#plan { border:1px solid #ddd; border-radius:4px; background:white; }")
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 6, 8, 6)
        source = plan.source or {}
        where = (
            f"experiment {source['experiment']}"
            if source.get("experiment")
            else f"{len(source.get('sessions') or [])} sessions"
        )
        head = QLabel(
            f"<b>{html.escape(plan.name)}</b> · {KINDS.get(plan.kind, plan.kind).lower()} · "
            f"{plan.per_rater} per rater · seed {plan.seed} · {html.escape(where)}"
        )
        head.setWordWrap(True)
        grid.addWidget(head, 0, 0, 1, 3)
        self.bars: dict[str, QProgressBar] = {}
        for row, rater in enumerate(plan.raters, start=1):
            done, total = progress.get(rater, (0, 0))
            grid.addWidget(QLabel(html.escape(rater)), row, 0)
            bar = QProgressBar()
            bar.setRange(0, max(1, total))
            bar.setValue(done)
            bar.setFormat(f"{done} / {total}")
            bar.setAccessibleName(f"{rater}: {done} of {total} done")
            grid.addWidget(bar, row, 1)
            self.bars[rater] = bar
        grid.setColumnStretch(1, 1)


class RatingPlanDialog(QDialog):
    """Create a rating plan (who rates what, reproducibly from a seed) and see every plan's progress."""

    plan_created = Signal(object)  # Plan

    def __init__(self, db: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Rating plans")
        fit_window(self, (1100, 720))
        self.db = db
        self.store = RatingStore(db)
        lay = QVBoxLayout(self)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(self._build_form())
        split.addWidget(self._build_plans())
        split.setSizes([560, 520])
        lay.addWidget(split, 1)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(close)
        lay.addLayout(row)
        self.refresh()

    # -- the form -------------------------------------------------------------------------------------

    def _build_form(self) -> QWidget:
        box = QGroupBox("New plan")
        lay = QVBoxLayout(box)
        form = QFormLayout()
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. pilot study, week 1")
        form.addRow("Name", self.name)
        self.kind = QComboBox()
        for key, label in KINDS.items():
            self.kind.addItem(label, key)
        form.addRow("Kind", self.kind)
        self.raters = QLineEdit()
        self.raters.setPlaceholderText("comma-separated names, e.g. ana, ben, chloe")
        form.addRow("Raters", self.raters)
        self.per_rater = QSpinBox()
        self.per_rater.setRange(1, 10_000)
        self.per_rater.setValue(10)
        self.per_rater.setToolTip("Conversations (or pairs) each rater gets")
        form.addRow("Items per rater", self.per_rater)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2_147_483_647)
        self.seed.setToolTip("The same seed and sessions always give the same plan")
        form.addRow("Seed", self.seed)
        lay.addLayout(form)

        src = QHBoxLayout()
        self.from_sessions = QRadioButton("Chosen sessions")
        self.from_experiment = QRadioButton("Every session of an experiment")
        self.source_group = QButtonGroup(self)
        self.source_group.addButton(self.from_sessions)
        self.source_group.addButton(self.from_experiment)
        self.from_sessions.setChecked(True)
        src.addWidget(self.from_sessions)
        src.addWidget(self.from_experiment)
        src.addStretch(1)
        lay.addLayout(src)
        self.experiment = QComboBox()
        self.experiment.setEditable(True)
        for eid, name in results.experiment_names(self.db):
            self.experiment.addItem(f"{eid}" + (f" — {name}" if name else ""), eid)
        self.experiment.setEnabled(False)
        lay.addWidget(self.experiment)
        self.sessions = QListWidget()
        for s in library.sessions_with_messages(self.db):
            when = str(s["created_at"])[:16].replace("T", " ")
            item = QListWidgetItem(
                f"{when} · {s['condition'] or '(no condition)'} · {s['messages']} messages · "
                f"{s['participants'] or ''}  [{s['id']}]"
            )
            item.setData(Qt.ItemDataRole.UserRole, s["id"])
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.sessions.addItem(item)
        lay.addWidget(self.sessions, 1)
        row = QHBoxLayout()
        self.all_button = QPushButton("Select all")
        self.all_button.clicked.connect(lambda: self._check_all(True))
        self.none_button = QPushButton("Select none")
        self.none_button.clicked.connect(lambda: self._check_all(False))
        self.count_label = QLabel("")
        row.addWidget(self.all_button)
        row.addWidget(self.none_button)
        row.addWidget(self.count_label, 1)
        lay.addLayout(row)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        lay.addWidget(self.message)
        self.create_button = QPushButton("Create plan")
        self.create_button.clicked.connect(self.create_plan)
        lay.addWidget(self.create_button, 0, Qt.AlignmentFlag.AlignRight)
        self.from_experiment.toggled.connect(self._source_changed)
        self.sessions.itemChanged.connect(lambda _i: self._count())
        self._count()
        return box

    def _source_changed(self, experiment: bool) -> None:
        self.experiment.setEnabled(experiment)
        self.sessions.setEnabled(not experiment)
        self.all_button.setEnabled(not experiment)  # they act on the list: they go with it
        self.none_button.setEnabled(not experiment)

    def _check_all(self, on: bool) -> None:
        state = Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
        for i in range(self.sessions.count()):
            self.sessions.item(i).setCheckState(state)

    def _count(self) -> None:
        self.count_label.setText(f"{len(self.checked())} of {self.sessions.count()} chosen")

    def checked(self) -> list[str]:
        """The ids of the ticked sessions."""
        return [
            str(self.sessions.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.sessions.count())
            if self.sessions.item(i).checkState() == Qt.CheckState.Checked
        ]

    def check(self, session_ids: list[str]) -> None:
        """Tick these sessions (and only these)."""
        for i in range(self.sessions.count()):
            item = self.sessions.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in session_ids
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _experiment_id(self) -> str:
        i = self.experiment.currentIndex()
        if i >= 0 and self.experiment.itemText(i) == self.experiment.currentText():
            return str(self.experiment.itemData(i))
        return self.experiment.currentText().strip()

    def create_plan(self) -> Plan | None:
        """Create the plan from the form; errors are shown in the dialog."""
        raters = [r.strip() for r in self.raters.text().split(",") if r.strip()]
        try:
            if self.from_experiment.isChecked():
                experiment = self._experiment_id()
                if not experiment:
                    raise errors.PlaygroundError("choose an experiment")
                sessions = None
            else:
                experiment = None
                sessions = self.checked()
                if not sessions:
                    raise errors.PlaygroundError("tick at least one session")
            plan = self.store.create_plan(
                self.name.text(),
                cast(PlanKind, self.kind.currentData()),
                raters,
                self.per_rater.value(),
                sessions=sessions,
                experiment=experiment,
                seed=self.seed.value(),
            )
        except errors.PlaygroundError as exc:
            show_warning(self.message, str(exc))
            return None
        self.message.setStyleSheet("color:#2e7d32;")
        self.message.setText(
            f"Created “{plan.name}”: {count(len(plan.raters), 'rater')} × "
            + count(plan.per_rater, "conversation" if plan.kind == "conversation" else "pair")
            + "."
        )
        self.refresh()
        self.plan_created.emit(plan)
        return plan

    # -- existing plans ---------------------------------------------------------------------------------

    def _build_plans(self) -> QWidget:
        box = QGroupBox("Plans and progress")
        lay = QVBoxLayout(box)
        top = QHBoxLayout()
        top.addWidget(QLabel("Done per rater (recomputed from the database):"), 1)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        top.addWidget(refresh)
        lay.addLayout(top)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        inner = QWidget()
        self._plans_layout = QVBoxLayout(inner)
        self._plans_layout.addStretch(1)
        scroll.setWidget(inner)
        lay.addWidget(scroll, 1)
        self.plan_widgets: dict[int, PlanProgress] = {}
        return box

    def refresh(self) -> None:
        """Re-read every plan and its progress."""
        for w in self.plan_widgets.values():
            w.deleteLater()
        self.plan_widgets = {}
        for plan in sorted(self.store.plans(), key=lambda p: p.id, reverse=True):
            w = PlanProgress(plan, self.store.progress(plan.id))
            self._plans_layout.insertWidget(self._plans_layout.count() - 1, w)
            self.plan_widgets[plan.id] = w
        self._empty(not self.plan_widgets)

    def _empty(self, empty: bool) -> None:
        label = getattr(self, "_empty_label", None)
        if label is None:
            label = QLabel("No plan yet: create one on the left.")
            label.setStyleSheet("color:#666;")
            self._plans_layout.insertWidget(0, label)
            self._empty_label = label
        label.setVisible(empty)
