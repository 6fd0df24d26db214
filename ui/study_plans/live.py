"""The running plan's panel: the current conversation and its phase, where the page is served,
and each person's link (Copy), name, browser and whether they have answered."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QGroupBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QVBoxLayout,
)

from ui.dialogs.invite import EXPOSED
from ui.study_plans.run import Live, Person
from ui.widgets.tool_window import fit_height, read_only_item, read_only_table

PEOPLE_COLUMNS = ["Person", "Name", "Browser", "Questions", "", "Link"]
#: The columns of text (the other one holds Copy link).
TEXT_COLUMNS = (0, 1, 2, 3, 5)
GREEN, GREY, ORANGE = "#2e7d32", "#666666", "#b26a00"
#: People shown without scrolling (more scroll).
VISIBLE_PEOPLE = 8


def phase_text(live: Live, review_minutes: float) -> str:
    """One line: which conversation, its condition and agent, and what happens now."""
    if live.position is None:
        return (
            "Stopping: the conversation is being saved and every browser told…"
            if live.phase == "stopping"
            else "Starting: loading the embedding model and seating the agent…"
        )
    head = (
        f"Conversation {live.position} of {live.of} · {live.condition} · agent {live.agent}"
        f" · topic: {live.topic}"
    )
    named = [p for p in live.people if p.name is not None]
    answered = sum(bool(p.answered) for p in named)
    if live.phase == "talking":
        left = live.seconds_left or 0.0
        now = f"talking, about {int(left // 60)}:{int(left % 60):02d} left"
        if not named:
            now += " (nobody has joined yet)"
    elif live.phase == "review":
        what = "review, rating and the final questions" if live.last else "review and rating"
        now = (
            f"{what}: {answered} of {len(named)} people have answered (at most"
            f" {review_minutes:g} min)"
        )
    elif live.phase == "moving on":
        now = "everyone has answered: " + (
            "the plan is ending" if live.last else "the next conversation is starting"
        )
    else:
        now = "stopping: the conversation is being saved and every browser told"
    return f"{head} — {now}"


class LivePanel(QGroupBox):
    """What the window shows of the plan running in it (hidden when none runs)."""

    def __init__(self) -> None:
        super().__init__("Running")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 6)
        self.now = QLabel("")
        self.now.setWordWrap(True)
        self.now.setStyleSheet("font-weight:600;")
        self.where = QLabel("")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.people = read_only_table(PEOPLE_COLUMNS, None)
        self.people.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        header = self.people.horizontalHeader()
        header.setStretchLastSection(True)  # the link last: the buttons stay in view
        header.setSectionResizeMode(PEOPLE_COLUMNS.index("Link"), QHeaderView.ResizeMode.Stretch)
        self.people.setToolTip(
            "Give each person their own link: it stays the same for the whole plan"
        )
        for w in (self.now, self.where, self.people):
            lay.addWidget(w)
        self._links: list[str] = []

    def show_live(self, live: Live, review_minutes: float) -> None:
        self.setTitle(f"Running — {live.plan_id}")
        self.now.setText(phase_text(live, review_minutes))
        if live.origin:
            where = f"Serving at {live.origin}: one link per person, for every conversation."
            self.where.setText(f"{where} {EXPOSED}" if live.exposed else where)
        else:
            self.where.setText("The links appear once the page is served.")
        self.where.setStyleSheet(f"color:{ORANGE if live.exposed else GREY};")
        links = [p.link for p in live.people]
        if links != self._links:
            self._links = links
            self.people.setRowCount(len(live.people))
            for i, p in enumerate(live.people):
                copy = QPushButton("Copy link")
                copy.setToolTip(p.link)
                copy.clicked.connect(lambda _=False, link=p.link: copy_link(link))
                self.people.setCellWidget(i, PEOPLE_COLUMNS.index(""), copy)
        for i, p in enumerate(live.people):
            self._fill(i, p)
        # Every person in view up to VISIBLE_PEOPLE (a scroll bar beyond): the plans table above
        # takes the rest of the height.
        fit_height(self.people, max(1, min(len(live.people), VISIBLE_PEOPLE)))

    def _fill(self, i: int, p: Person) -> None:
        if p.answered is None:
            answered, color = ("—" if p.name is None else "after the conversation"), GREY
        elif p.answered:
            answered, color = "answered", GREEN
        else:
            answered, color = "not yet", ORANGE
        cells = [
            (str(p.number), None),
            (p.name or "not joined yet", None if p.name else GREY),  # as typed: plain text
            (_online(p), GREEN if p.online else GREY),
            (answered, color),
            (p.link, None),
        ]
        for col, (text, colour) in zip(TEXT_COLUMNS, cells, strict=True):
            item = read_only_item(text)
            item.setToolTip(text)
            if colour is not None:
                item.setForeground(QColor(colour))
            self.people.setItem(i, col, item)

    def clear(self) -> None:
        self._links = []
        self.people.setRowCount(0)
        self.now.setText("")
        self.where.setText("")


def copy_link(link: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(link)


def _online(p: Person) -> str:
    """Online or not; a link open in more than one window says so (it may be shared)."""
    if not p.online:
        return "offline"
    return "online" if p.pages < 2 else f"online · open in {p.pages} windows"
