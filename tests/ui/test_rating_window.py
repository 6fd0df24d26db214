"""The Rating menu in the real window, and the questionnaire offered when a person leaves a session."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from playground.embedding.cache import CachingEmbedder
from playground.rating.store import PARTICIPANT_ITEMS, RatingStore
from tests.ui.conftest import until
from ui.app import build

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "w.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.show()
    return win, controller


async def _human_session(controller, name: str = "Zoe"):
    room = await controller.new_session(controller.library()[:2], icebreaker="Hey!")
    assert room is not None
    await controller.join_as_human(name)
    controller.set_pace("fast")
    await controller.send("Hello both, what are you up to?")
    return room


async def test_the_questionnaire_is_offered_once_when_a_human_session_ends(window):
    win, controller = window
    room = await _human_session(controller)
    assert win.rating.questionnaire is None
    await controller.stop()
    dlg = win.rating.questionnaire
    assert dlg is not None, "offered when the session ended"
    assert dlg.isVisible(), "offered when the session ended"
    assert dlg.session_id == room.session_id
    assert dlg.respondent.text() == "Zoe"
    assert dlg.windowModality() != Qt.WindowModality.ApplicationModal  # the window stays usable
    for i, item in enumerate(PARTICIPANT_ITEMS):
        dlg.form.choose(item.key, 1 + i % 7)
    dlg.save_button.click()
    assert not dlg.isVisible()
    store = RatingStore(controller.database())
    assert store.questionnaire(room.session_id, "Zoe") == {
        item.key: 1 + i % 7 for i, item in enumerate(PARTICIPANT_ITEMS)
    }
    assert win.rating.offer_questionnaire(room.session_id, "Zoe") is None, "only once per session"

    # A simulation without a person: nothing is offered.
    win.rating.questionnaire = None
    room2 = await controller.new_session(controller.library()[:2], icebreaker="Hey!")
    assert room2 is not None
    await controller.stop()
    assert win.rating.questionnaire is None
    await controller.shutdown()


async def test_closing_the_window_offers_nothing_and_closes_the_rating_windows(window):
    win, controller = window
    await _human_session(controller, "Ivy")
    rater = win.rating.open_rater()
    plans = win.rating.open_plans()
    assert rater is not None
    assert plans is not None
    assert rater.isVisible()
    assert plans.isVisible()
    win.close()
    await until(lambda: controller.db is None, what="shutdown")
    assert win.rating.questionnaire is None, "closing must not wait for a questionnaire"
    assert not rater.isVisible()
    assert not plans.isVisible()


async def test_the_rating_menu_opens_each_window_on_the_controllers_database(window):
    win, controller = window
    room = await _human_session(controller, "Max")
    await controller.stop()
    win.rating.questionnaire.reject()  # "Not now"; it is still in the menu
    labels = [a.text() for a in win.rating.menu.actions() if a.text()]
    assert labels == [
        "Rate conversations (blind)…",
        "Rating plans…",
        "Invite raters…",
        "Report…",
        "Study report…",
        "Questionnaire for a session I joined…",
    ]
    win.rating.act_questionnaire.trigger()
    picker = win.rating.picker
    assert picker is not None
    assert picker.list.count() == 1
    assert picker.chosen() == (room.session_id, "Max")
    picker.open_button.click()
    q = picker.questionnaire
    assert q is not None
    assert q.isVisible()
    assert q.respondent.text() == "Max"
    for item in PARTICIPANT_ITEMS:
        q.form.choose(item.key, 5)
    q.save_button.click()
    assert RatingStore(controller.database()).questionnaire(room.session_id, "Max")

    win.rating.act_plans.trigger()
    assert win.rating.plans is not None
    assert win.rating.plans.sessions.count() == 1
    win.rating.act_rate.trigger()
    assert win.rating.rater is not None
    assert win.rating.rater.isVisible()
    rater = win.rating.rate_session(room.session_id)
    assert rater is win.rating.rater
    rater.start("Max")
    rater.blind.show_all()
    assert [c.msg.text for c in rater.blind.cards][-1] == room.messages[-1].text
    win.rating.act_report.trigger()
    report = win.rating.report
    assert report is not None
    assert report.isVisible()
    await until(lambda: not report.computing, what="the report (computed in the background)")
    assert "No ratings yet" not in report.message.text()  # the questionnaire counts
    assert "1 questionnaire " in report.table.toPlainText()
    await controller.shutdown()


async def test_rate_conversations_with_no_plan_points_to_the_plans_and_the_library(window):
    """No plan yet: the rater window says what to do instead of "⚠ choose a rating plan", and
    its two buttons open Rating plans… and the session library (issue 34, point 8)."""
    win, _controller = window
    win.rating.act_rate.trigger()
    rater = win.rating.rater
    assert rater is not None
    assert rater.isVisible()
    assert rater.no_plan.isVisible()
    assert not rater.plan_combo.isVisible()
    assert not rater.start_button.isEnabled()
    assert not rater.error.isVisible()
    shown = rater.no_plan.findChild(QLabel).text()
    assert "Rating ▸ Rating plans…" in shown
    assert "Rate blind…" in shown
    rater.name_edit.setText("Ria")
    rater.name_edit.returnPressed.emit()  # Enter: still no dead end, the reason and the way
    assert "Rating ▸ Rating plans…" in rater.error.text()

    rater.plans_button.click()
    assert win.rating.plans is not None
    assert win.rating.plans.isVisible()
    rater.library_button.click()
    assert win.library_dialog is not None
    assert win.library_dialog.isVisible()
    assert win.library_dialog.rate_button.text() == "Rate blind…"
