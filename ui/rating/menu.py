"""The main window's "Rating" menu, and the questionnaire offered when a human leaves a session."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from playground import errors
from ui.rating.invite import InviteRatersDialog
from ui.rating.plans import RatingPlanDialog
from ui.rating.questionnaire import JoinedSessionPicker, QuestionnaireDialog
from ui.rating.rater_window import RaterWindow
from ui.widgets.tool_window import bring_to_front
from ui.window.host import WindowHost

W = TypeVar("W", bound=QWidget)


class RatingMenu(QObject):
    """Adds the Rating menu to ``window`` and keeps the windows it opens alive until it closes.

    Args:
        window: the main window; its ``controller`` gives the database (``controller.database()``)
            and, while a person takes part, their name (``controller.human``); its ``bridge``
            says when a session ends.
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = window
        self._main = window.window()  # the parent of the windows this menu opens
        self.controller = window.controller
        self.rater: RaterWindow | None = None
        self.plans: RatingPlanDialog | None = None
        self.invite: InviteRatersDialog | None = None
        self.report: QWidget | None = None
        self.study_report: QWidget | None = None
        self.picker: JoinedSessionPicker | None = None
        self.questionnaire: QuestionnaireDialog | None = None
        self.offered: set[str] = set()  # sessions whose questionnaire was offered already
        self.closing = False
        self.menu = menu = window.menuBar().addMenu("&Rating")
        self.act_rate = menu.addAction("Rate conversations (blind)…")
        self.act_plans = menu.addAction("Rating plans…")
        self.act_invite = menu.addAction("Invite raters…")
        self.act_report = menu.addAction("Report…")
        self.act_study_report = menu.addAction("Study report…")
        menu.addSeparator()
        self.act_questionnaire = menu.addAction("Questionnaire for a session I joined…")
        self.act_rate.triggered.connect(self.open_rater)
        self.act_plans.triggered.connect(self.open_plans)
        self.act_invite.triggered.connect(self.open_invite)
        self.act_report.triggered.connect(self.open_report)
        self.act_study_report.triggered.connect(self.open_study_report)
        self.act_questionnaire.triggered.connect(self.open_questionnaire_picker)
        window.bridge.session_finished.connect(self._session_finished)
        window.installEventFilter(self)

    # -- opening windows --------------------------------------------------------------------------------

    def _db(self) -> Any:
        try:
            return self.controller.database()
        except errors.PlaygroundError as exc:
            self.window.show_error(f"Rating: {exc}")
            return None

    @staticmethod
    def _alive(w: QWidget | None) -> bool:
        try:
            return w is not None and w.isVisible()
        except RuntimeError:  # deleted on the C++ side
            return False

    def _raise(self, w: QWidget) -> QWidget:
        return bring_to_front(w)

    def _front(self, current: W | None, make: Callable[[Any], W]) -> W | None:
        """``current`` while it is open, else a new window from ``make(database)``, brought to the
        front; None when the database cannot be opened (the window says why)."""
        if not self._alive(current):
            db = self._db()
            if db is None:
                return None
            current = make(db)
        assert current is not None
        self._raise(current)
        return current

    def open_rater(self) -> RaterWindow | None:
        """The blind rating window (one at a time; an open one is brought to the front)."""
        w = self._front(self.rater, self._rater_window)
        if w is not None:
            self.rater = w
        return w

    def _rater_window(self, db: Any) -> RaterWindow:
        """A rater window whose no-plan page leads to Rating plans… and the session library."""
        w = RaterWindow(db, self._main)
        w.plans_requested.connect(self.open_plans)
        w.library_requested.connect(lambda: self.window.open_library())
        return w

    def rate_session(self, session_id: str, db_path: str | None = None) -> RaterWindow | None:
        """Rate one chosen session blind, outside any plan (from the session library).

        Args:
            session_id: the session (id or unique prefix).
            db_path: its database when it is not the controller's own.
        """
        if db_path is not None:
            try:
                db = self.controller.database_at(db_path)
            except errors.PlaygroundError as exc:
                self.window.show_error(f"Rating: {exc}")
                return None
            if self._alive(self.rater) and self.rater is not None and self.rater.db is not db:
                self.rater.close()
            if not self._alive(self.rater):
                self.rater = self._rater_window(db)
        w = self.open_rater()
        if w is not None:
            w.rate_session(session_id)
        return w

    def open_plans(self) -> RatingPlanDialog | None:
        def make(db: Any) -> RatingPlanDialog:
            plans = RatingPlanDialog(db, self._main)
            plans.plan_created.connect(self._plan_created)
            return plans

        w = self._front(self.plans, make)
        if w is not None:
            self.plans = w
        return w

    def open_invite(self) -> InviteRatersDialog | None:
        """Invite raters… (one at a time): a rating plan served to the raters' browsers."""
        w = self._front(self.invite, lambda db: InviteRatersDialog(db, self._main))
        if w is not None:
            self.invite = w
        return w

    def _plan_created(self, _plan: object) -> None:
        if self._alive(self.rater):
            assert self.rater is not None
            self.rater.refresh_plans()

    def open_report(self) -> QWidget | None:
        from ui.rating.report_view import ReportView  # matplotlib loads only when asked for

        if self._alive(self.report):
            self.report.refresh()  # type: ignore[union-attr]
        w = self._front(self.report, lambda db: ReportView(db, self._main))
        if w is not None:
            self.report = w
        return w

    def open_study_report(self) -> QWidget | None:
        """The analysis of the study plans (``playground study-report``), with the window's shared
        embedding model for the similarities; an open one is refreshed and brought to the front."""
        from ui.rating.study_report_view import StudyReportView

        if self._alive(self.study_report):
            self.study_report.refresh()  # type: ignore[union-attr]
        embedder = self.controller.embedding.get
        w = self._front(
            self.study_report, lambda db: StudyReportView(db, self._main, embedder=embedder)
        )
        if w is not None:
            self.study_report = w
        return w

    def open_questionnaire_picker(self) -> JoinedSessionPicker | None:
        db = self._db()
        if db is None:
            return None
        self.picker = JoinedSessionPicker(db, self._main)
        self.picker.accepted.connect(self._picked)
        self.picker.open()
        return self.picker

    def _picked(self) -> None:
        if self.picker is not None and self.picker.questionnaire is not None:
            self.questionnaire = self.picker.questionnaire

    # -- the questionnaire when a person leaves -----------------------------------------------------------

    def _session_finished(self, _status: str, _reason: str) -> None:
        human = self.controller.human
        room = self.controller.room
        if self.closing or not human or room is None:
            return
        # The session's own database: a fork of a session from another file is saved there.
        recorder = self.controller.recorder
        self.offer_questionnaire(room.session_id, human, db=getattr(recorder, "db", None))

    def offer_questionnaire(
        self, session_id: str, human: str, *, db: Any = None
    ) -> QuestionnaireDialog | None:
        """Offer the participant questionnaire once per session (non-modal)."""
        if self.closing or session_id in self.offered:
            return None
        db = db if db is not None else self._db()
        if db is None:
            return None
        self.offered.add(session_id)
        self.questionnaire = QuestionnaireDialog(db, session_id, human, self._main)
        self.questionnaire.saved.connect(
            lambda sid, who: self.window.hint(f"Thank you, {who}: your answers are saved.")
        )
        self.questionnaire.open()
        return self.questionnaire

    # -- closing --------------------------------------------------------------------------------------------

    def close_all(self) -> None:
        """Close every window this menu opened (the main window is closing)."""
        opened = (self.rater, self.plans, self.invite, self.report, self.study_report, self.picker)
        for w in (*opened, self.questionnaire):
            if w is not None:
                with contextlib.suppress(RuntimeError):  # already deleted on the C++ side
                    w.close()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close and not self.closing:
            self.closing = True  # no questionnaire is offered from now on
            self.close_all()
        return False
