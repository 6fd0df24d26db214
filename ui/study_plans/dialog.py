"""The New study plan dialog: ``playground study new``'s options, checked before it closes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from ui.dialogs.common import error_and_buttons, intro_label, keep, kept, show_error
from ui.dialogs.common import spin_box as _spin
from ui.dialogs.invite import EXPOSED, HOSTS
from ui.screen_fit import fit_window
from ui.study_plans.run import DEFAULT_PORT, Options

#: QSettings group of the values last started (the dialog opens with them; Resume serves at the
#: address and port last chosen, so that the links stay the same).
SETTINGS_GROUP = "study_plans/new"
#: The longest wait for everyone's answers after a conversation (``playground study``'s).
REVIEW_MINUTES = 15.0


def remembered() -> tuple[str, int, float]:
    """The address, port and review minutes last started with (127.0.0.1, 8765 and 15 the
    first time): Resume uses them."""
    saved = kept(SETTINGS_GROUP)
    host = saved.get("host", HOSTS[0][1])
    port = saved.get("port", str(DEFAULT_PORT))
    review = saved.get("review_minutes", str(REVIEW_MINUTES))
    if host not in {h for _, h in HOSTS}:
        host = HOSTS[0][1]
    ok_port = port.isdigit() and 0 < int(port) < 65536
    ok_review = review.replace(".", "", 1).isdigit() and float(review) > 0
    return (
        host,
        int(port) if ok_port else DEFAULT_PORT,
        float(review) if ok_review else REVIEW_MINUTES,
    )


class NewStudyPlanDialog(QDialog):
    """People, group, seed, minutes, the show-thoughts condition and where to serve a new plan.

    Args:
        creator: saves the plan for the options and returns its id; its ``PlaygroundError`` (too
            few personas, a database that cannot be written) is shown in the dialog, which stays
            open.
        engine_label: the window's engine, which the plan's conversations use.
        personas: how many personas the window's library holds.
    """

    def __init__(
        self,
        creator: Callable[[Options], str],
        *,
        engine_label: str,
        personas: int,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New study plan")
        self.creator = creator
        self.plan_id: str | None = None
        self.chosen: Options | None = None
        lay = QVBoxLayout(self)
        lay.addWidget(
            intro_label(
                "The same people have three conversations, each with one AI agent under one"
                " proactivity style, in the group's counter-balanced order; after each one"
                " everybody reviews it and rates its agent, and at the end says which agent had"
                " which style. Each person gets one link for the whole plan."
            )
        )
        form = QFormLayout()
        self.humans = _spin(1, 50, 2, " people")
        self.group = _spin(0, 10_000, 0)
        self.group.setToolTip(
            "The group's number picks its order of the three conditions (six orders: group 6"
            " has group 0's order again)"
        )
        self.seed = _spin(0, 2**31 - 1, 0)
        self.seed.setToolTip("Draws which persona plays which condition")
        self.minutes = _minutes(10.0, " min per conversation")
        self.review_minutes = _minutes(REVIEW_MINUTES, " min at most")
        self.review_minutes.setToolTip(
            "The next conversation starts when everyone has answered, or after this long"
        )
        self.show_thoughts = QCheckBox("Show the agents' thoughts on people's pages")
        self.show_thoughts.setToolTip(
            "A condition of its own, saved with the plan: each page shows the agents' thoughts"
            " as they form"
        )
        self.host = QComboBox()
        for label, host in HOSTS:
            self.host.addItem(label, host)
        self.port = _spin(1, 65535, DEFAULT_PORT)
        self.port.setToolTip("Resume serves on the same port, so that the links stay the same")
        self.where = QLabel("")
        self.where.setWordWrap(True)
        for label, field in (
            ("People", self.humans),
            ("Group", self.group),
            ("Seed", self.seed),
            ("Conversation", self.minutes),
            ("Review", self.review_minutes),
            ("", self.show_thoughts),
            ("Serve to", self.host),
            ("Port", self.port),
            ("", self.where),
        ):
            form.addRow(label, field)
        engine = QLabel(f"{engine_label} (the window's engine, set under Engine…)")
        engine.setWordWrap(True)
        form.addRow("Engine", engine)
        agents = QLabel(f"3 agents drawn from the persona library ({personas} personas)")
        form.addRow("Agents", agents)
        lay.addLayout(form)
        self.error, self.buttons = error_and_buttons(self, lay, "Start")
        self.host.currentIndexChanged.connect(self._where)
        self._restore()
        self._where()
        fit_window(self, (560, self.sizeHint().height()))

    def _where(self) -> None:
        exposed = self.host.currentData() != HOSTS[0][1]
        self.where.setText(EXPOSED if exposed else "Only browsers on this computer can join.")
        self.where.setStyleSheet("color:#b26a00;" if exposed else "color:#555;")

    def _restore(self) -> None:
        """The values last started, where there are any."""
        host, port, _ = remembered()
        self.host.setCurrentIndex(max(0, self.host.findData(host)))
        self.port.setValue(port)
        saved = kept(SETTINGS_GROUP)
        for key, spin in self._spins().items():
            value = saved.get(key, "")
            if not value.replace(".", "", 1).isdigit():
                continue
            if isinstance(spin, QDoubleSpinBox):
                spin.setValue(float(value))
            else:
                spin.setValue(int(float(value)))
        self.show_thoughts.setChecked(saved.get("show_thoughts", "") == "true")

    def _remember(self, opts: Options) -> None:
        keep(
            SETTINGS_GROUP,
            {key: spin.value() for key, spin in self._spins().items()}
            | {
                "show_thoughts": "true" if opts.show_thoughts else "false",
                "host": opts.host,
                "port": opts.port,
            },
        )

    def _spins(self) -> dict[str, QSpinBox | QDoubleSpinBox]:
        return {
            "humans": self.humans,
            "group": self.group,
            "seed": self.seed,
            "minutes": self.minutes,
            "review_minutes": self.review_minutes,
        }

    def options(self) -> Options:
        return Options(
            humans=self.humans.value(),
            group=self.group.value(),
            seed=self.seed.value(),
            minutes=self.minutes.value(),
            review_minutes=self.review_minutes.value(),
            show_thoughts=self.show_thoughts.isChecked(),
            host=str(self.host.currentData()),
            port=self.port.value(),
        )

    def accept(self) -> None:
        """Close only once the plan is saved; otherwise say what is wrong."""
        opts = self.options()
        try:
            self.plan_id = self.creator(opts)
        except errors.PlaygroundError as exc:
            self.plan_id = None
            show_error(self.error, str(exc))
            return
        self.chosen = opts
        self.error.hide()
        self._remember(opts)
        super().accept()


def _minutes(value: float, suffix: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(2)
    box.setRange(0.01, 24 * 60)
    box.setSingleStep(1.0)
    box.setValue(value)
    box.setSuffix(suffix)
    return box
