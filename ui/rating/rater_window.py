"""The rater's window: sign in once, pick a plan, work through the assignments blind, resume later."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from playground import errors
from playground.rating.store import CONVERSATION_METRICS, Assignment, Plan, RatingStore
from ui.rating.blind_view import BlindConversationView, load_blind_messages, resolve_session
from ui.rating.forms import LikertForm
from ui.rating.pairwise import PairwiseView
from ui.widgets.tool_window import ToolWindow

#: The sign-in page with no plan to choose: what a researcher or a rater does instead.
NO_PLAN = (
    "There is no rating plan yet. A researcher creates one under <b>Rating ▸ Rating plans…</b>"
    " (the sessions to rate and who rates them). To rate one saved session now, outside any"
    " plan, choose it in the session library (<b>File ▸ Open session…</b>) and press"
    " <b>Rate blind…</b>."
)
KIND_LABELS = {"conversation": "conversation ratings", "pairwise": "pairwise preference"}
#: Around a rating scale in the side pane: its left margin, the form's frame and inner margin.
SCALE_MARGINS = 16
INSTRUCTIONS = (
    "Read the conversation as it is typed. Flag any message where the turn-taking felt unnatural. "
    "Then say how much you agree with each statement, from 1 (strongly disagree) to 7 (strongly agree)."
)


class RaterWindow(ToolWindow):
    """Blind rating: a rater's own assignments one by one, never anyone else's answers.

    Everything lives in the database, so a rater who signs in again resumes at their first
    unfinished assignment. :meth:`rate_session` rates one chosen session outside any plan.
    """

    task_done = Signal()  # an assignment (or a single session) was saved
    plans_requested = Signal()  # "Rating plans…" on the sign-in page (there is no plan yet)
    library_requested = Signal()  # "Session library…": rate one session with its Rate blind…

    def __init__(self, db: Any, parent: QWidget | None = None, *, cps: int | None = None) -> None:
        super().__init__("Blind rating", (1200, 800), parent)
        self.db = db
        self.store = RatingStore(db)
        self.rater: str | None = None
        self.plan: Plan | None = None
        self.assignment: Assignment | None = None
        self.single: str | None = None  # a session rated outside any plan
        self._sessions: list[str] = []  # what is on screen: one session, or the pair in order

        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        self.header = QWidget()
        hl = QHBoxLayout(self.header)
        hl.setContentsMargins(0, 0, 0, 0)
        self.who = QLabel("")
        hl.addWidget(self.who, 1)
        self.position = QLabel("")
        self.position.setStyleSheet("font-weight:bold;")
        hl.addWidget(self.position)
        self.progress = QProgressBar()
        self.progress.setFixedWidth(220)
        self.progress.setFormat("%v of %m done")
        hl.addWidget(self.progress)
        self.switch_button = QPushButton("Change rater or plan…")
        self.switch_button.clicked.connect(self.sign_out)
        hl.addWidget(self.switch_button)
        self.header.hide()
        lay.addWidget(self.header)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color:#b71c1c; background:#fdecea; padding:4px;")
        self.error.hide()
        lay.addWidget(self.error)
        self.stack = QStackedWidget()
        lay.addWidget(self.stack, 1)
        self._build_sign_in()
        self._build_conversation(cps)
        self.pairwise = PairwiseView(cps=cps)
        self.pairwise.submitted.connect(self._submit_pair)
        self.pairwise.mark_changed.connect(self._mark)
        self.stack.addWidget(self.pairwise)
        self._build_done()
        self.refresh_plans()

    # -- pages ---------------------------------------------------------------------------------------

    def _build_sign_in(self) -> None:
        page = QWidget()
        outer = QVBoxLayout(page)
        outer.addStretch(1)
        box = QWidget()
        box.setMaximumWidth(560)
        bl = QVBoxLayout(box)
        title = QLabel("<h2>Blind rating</h2>")
        bl.addWidget(title)
        self.intro = QLabel(
            "You will read conversations between several participants, typed at human speed, "
            "and rate how natural they felt. Your answers are saved as you go: you can stop and "
            "come back later with the same name."
        )
        self.intro.setWordWrap(True)
        bl.addWidget(self.intro)
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("your name or rater id")
        self.name_edit.returnPressed.connect(self.start_clicked)
        form.addRow("Name or id", self.name_edit)
        self.plan_combo = QComboBox()
        form.addRow("Rating plan", self.plan_combo)
        self._sign_in_form = form
        bl.addLayout(form)
        bl.addWidget(self._build_no_plan())
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start_clicked)
        bl.addWidget(self.start_button, 0, Qt.AlignmentFlag.AlignRight)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(box, 2)
        row.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)
        self.sign_in_page = page
        self.stack.addWidget(page)

    def _build_no_plan(self) -> QWidget:
        """What to do when there is no plan yet: the two ways to rating (shown instead of an
        empty plan list and a Start that could only fail)."""
        self.no_plan = QWidget()
        nl = QVBoxLayout(self.no_plan)
        nl.setContentsMargins(0, 6, 0, 6)
        text = QLabel(NO_PLAN)
        text.setWordWrap(True)
        nl.addWidget(text)
        buttons = QHBoxLayout()
        self.plans_button = QPushButton("Rating plans…")
        self.plans_button.setToolTip("Rating ▸ Rating plans…: choose sessions and raters")
        self.plans_button.clicked.connect(self.plans_requested.emit)
        self.library_button = QPushButton("Session library…")
        self.library_button.setToolTip("File ▸ Open session…: choose a session, then Rate blind…")
        self.library_button.clicked.connect(self.library_requested.emit)
        buttons.addWidget(self.plans_button)
        buttons.addWidget(self.library_button)
        buttons.addStretch(1)
        nl.addLayout(buttons)
        self.no_plan.hide()
        return self.no_plan

    def _build_conversation(self, cps: int | None) -> None:
        self.blind = BlindConversationView(cps=cps)
        self.blind.mark_changed.connect(lambda mid, on, c: self._mark(0, mid, on, c))
        self.blind.finished.connect(self._update_submit)
        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(6, 0, 0, 0)
        instructions = QLabel(INSTRUCTIONS)
        instructions.setWordWrap(True)
        sl.addWidget(instructions)
        self.form = LikertForm(CONVERSATION_METRICS)
        self.form.changed.connect(self._update_submit)
        sl.addWidget(self.form, 1)
        row = QHBoxLayout()
        self.form_hint = QLabel("")
        self.form_hint.setWordWrap(True)
        self.form_hint.setStyleSheet("color:#555;")
        row.addWidget(self.form_hint, 1)
        self.submit_button = QPushButton("Submit ratings")
        self.submit_button.clicked.connect(self._submit_ratings)
        row.addWidget(self.submit_button)
        sl.addLayout(row)
        # The 1–7 scales are never cut off (at 1024 px the side's share was narrower than they):
        # the side is as wide as a scale, its margins and the form's scroll bar.
        scale = max((r.minimumSizeHint().width() for r in self.form.rows.values()), default=0)
        bar = self.form.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        side.setMinimumWidth(scale + bar + SCALE_MARGINS)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.blind)
        split.addWidget(side)
        split.setStretchFactor(0, 5)
        split.setStretchFactor(1, 4)
        split.setChildrenCollapsible(False)
        self.conversation_page = split
        self.stack.addWidget(split)

    def _build_done(self) -> None:
        page = QWidget()
        pl = QVBoxLayout(page)
        pl.addStretch(1)
        self.thanks = QLabel("")
        self.thanks.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.thanks.setWordWrap(True)
        pl.addWidget(self.thanks)
        again = QPushButton("Rate something else…")
        again.clicked.connect(self.sign_out)
        pl.addWidget(again, 0, Qt.AlignmentFlag.AlignCenter)
        pl.addStretch(2)
        self.done_page = page
        self.stack.addWidget(page)

    # -- signing in and choosing work ------------------------------------------------------------------

    def refresh_plans(self) -> None:
        """List the plans to choose from (names and kinds only)."""
        current = self.plan_combo.currentData()
        self.plan_combo.clear()
        for p in self.store.plans():
            self.plan_combo.addItem(f"{p.name} ({KIND_LABELS.get(p.kind, p.kind)})", p.id)
        if current is not None and self.plan_combo.findData(current) >= 0:
            self.plan_combo.setCurrentIndex(self.plan_combo.findData(current))
        self._show_no_plan()

    def sign_out(self) -> None:
        """Back to the sign-in page (the name stays filled in)."""
        self.blind.stop()
        for v in self.pairwise.views:
            v.stop()
        self.single = None
        self.assignment = None
        self.header.hide()
        self._show_sign_in()

    def _show_sign_in(self) -> None:
        self.refresh_plans()
        single = self.single is not None
        self.plan_combo.setEnabled(not single)
        self.intro.setText(
            "You will rate one conversation, typed at human speed. Your answers are saved."
            if single
            else "You will read conversations between several participants, typed at human "
            "speed, and rate how natural they felt. Your answers are saved as you go: you can "
            "stop and come back later with the same name."
        )
        self.clear_error()
        self.stack.setCurrentWidget(self.sign_in_page)

    def _show_no_plan(self) -> None:
        """With no plan to choose (and no single session to rate), the ways to one instead of
        the plan list and Start."""
        none = self.single is None and self.plan_combo.count() == 0
        self.no_plan.setVisible(none)
        self._sign_in_form.setRowVisible(self.plan_combo, not none)
        self.start_button.setEnabled(not none)

    def start_clicked(self) -> None:
        plan_id = self.plan_combo.currentData()
        self.start(self.name_edit.text(), None if self.single else plan_id)

    def start(self, rater: str, plan_id: int | None = None) -> None:
        """Sign in as ``rater`` and go to their next assignment in the plan (or the single session)."""
        try:
            self.rater = self.store.ensure_rater(rater)
            self.name_edit.setText(self.rater)
            if self.single is None:
                if plan_id is None:
                    raise errors.PlaygroundError(
                        "there is no rating plan to choose: create one under Rating ▸ Rating"
                        " plans…, or rate one session with Rate blind… in the session library"
                    )
                plan = self.store.plan(plan_id)
                if self.rater not in plan.raters:
                    raise errors.PlaygroundError(
                        f"{self.rater!r} is not a rater of the plan {plan.name!r}"
                    )
                self.plan = plan
        except errors.PlaygroundError as exc:
            self.show_error(str(exc))
            return
        self.clear_error()
        self.header.show()
        if self.single is not None:
            self._show_single()
        else:
            self.advance()

    def rate_session(self, session_id: str) -> None:
        """Rate one chosen session outside any plan (signing in first if needed)."""
        try:
            sid = resolve_session(self.db, session_id)
        except errors.PlaygroundError as exc:
            self.show_error(str(exc))
            return
        self.single = sid
        self.plan = None
        self.assignment = None
        if self.rater is None:
            self.header.hide()
            self._show_sign_in()
        else:
            self.header.show()
            self._show_single()

    def advance(self) -> None:
        """Show the rater's first unfinished assignment, or the thank-you page."""
        assert self.plan is not None
        assert self.rater is not None
        done, total = self.store.progress(self.plan.id).get(self.rater, (0, 0))
        self.who.setText(
            f"Rater: <b>{html.escape(self.rater)}</b> · plan: {html.escape(self.plan.name)}"
        )
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)
        self.progress.show()
        a = self.store.next_assignment(self.plan.id, self.rater)
        self.assignment = a
        if a is None:
            self.position.setText(f"{done} of {total}")
            noun = "conversation" if self.plan.kind == "conversation" else "comparison"
            self._thank(
                f"You have finished the one {noun} of this plan."
                if total == 1
                else f"You have finished all {total} {noun}s of this plan."
            )
            return
        self.position.setText(f"{a.position} of {total}")
        try:
            if a.session_b is None:
                self._show_conversation(a.session_a, f"Conversation {a.position} of {total}")
            else:
                self._show_pair(a.session_a, a.session_b)
        except errors.PlaygroundError as exc:
            self.show_error(str(exc))

    def _show_single(self) -> None:
        assert self.single is not None
        assert self.rater is not None
        self.who.setText(f"Rater: <b>{html.escape(self.rater)}</b> · one conversation")
        self.position.setText("")
        self.progress.hide()
        try:
            self._show_conversation(self.single, "Conversation")
        except errors.PlaygroundError as exc:
            self.show_error(str(exc))

    def _marks(self, session_id: str) -> dict[int, str]:
        assert self.rater is not None
        return {
            int(m["message_id"]): str(m["comment"])
            for m in self.store.turn_marks(session_id, self.rater)
        }

    def _show_conversation(self, session_id: str, title: str) -> None:
        assert self.rater is not None
        messages = load_blind_messages(self.db, session_id)
        self._sessions = [session_id]
        self.blind.load(messages, title, self._marks(session_id))
        self.form.set_values(self.store.conversation_ratings(session_id, self.rater))
        self.stack.setCurrentWidget(self.conversation_page)
        self._update_submit()
        self.blind.play()

    def _show_pair(self, first: str, second: str) -> None:
        a, b = load_blind_messages(self.db, first), load_blind_messages(self.db, second)
        self._sessions = [first, second]
        # Blank, each comparison: marks the rater left on either conversation elsewhere (rating
        # it on its own, or an earlier comparison) would show before it even plays.
        self.pairwise.load(a, b)
        self.stack.setCurrentWidget(self.pairwise)

    def _thank(self, text: str) -> None:
        self.blind.stop()
        self.thanks.setText(
            f"<h2>Thank you, {html.escape(self.rater or '')}!</h2><p>{html.escape(text)}</p>"
        )
        self.stack.setCurrentWidget(self.done_page)

    # -- answers ---------------------------------------------------------------------------------------

    def _update_submit(self) -> None:
        seen = self.blind.complete
        self.submit_button.setEnabled(seen and self.form.missing() == 0)
        self.form_hint.setText(
            self.form.progress_text()
            if seen
            else "Submit opens once the whole conversation has been shown."
        )

    def _mark(self, which: int, message_id: int, marked: bool, comment: str) -> None:
        if self.rater is None or which >= len(self._sessions):
            return
        sid = self._sessions[which]
        try:
            if marked:
                self.store.mark_turn(sid, message_id, self.rater, comment)
            else:
                self.store.unmark_turn(sid, message_id, self.rater)
        except errors.PlaygroundError as exc:
            self.show_error(f"The mark was not saved: {exc}")

    def _submit_ratings(self) -> None:
        if self.rater is None or not self._sessions or not self.form.is_complete():
            return
        try:
            self.store.rate_conversation(
                self._sessions[0],
                self.rater,
                self.form.values(),
                assignment_id=self.assignment.id if self.assignment else None,
            )
        except errors.PlaygroundError as exc:
            self.show_error(f"Your ratings were not saved: {exc}")
            return
        self.clear_error()
        self.task_done.emit()
        if self.single is not None:
            self.single = None
            self._thank("Your ratings of this conversation are saved.")
        else:
            self.advance()

    def _submit_pair(self, index: int, reason: str) -> None:
        if self.rater is None or len(self._sessions) != 2:
            return
        first, second = self._sessions
        try:
            self.store.record_preference(
                self.rater,
                first,
                second,
                self._sessions[index],
                reason,
                assignment_id=self.assignment.id if self.assignment else None,
            )
        except errors.PlaygroundError as exc:
            self.show_error(f"Your choice was not saved: {exc}")
            return
        self.task_done.emit()
        self.advance()

    # -- messages ----------------------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        for i, sid in enumerate(self._sessions):  # blind: an error never shows a session id
            text = text.replace(
                sid, f"conversation {'AB'[i] if len(self._sessions) > 1 else ''}".strip()
            )
        self.error.setText(f"⚠ {text}")
        self.error.show()

    def clear_error(self) -> None:
        self.error.hide()
        self.error.setText("")

    def closeEvent(self, event: Any) -> None:
        self.blind.stop()
        for v in self.pairwise.views:
            v.stop()
        super().closeEvent(event)
