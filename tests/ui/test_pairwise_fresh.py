"""A pairwise comparison starts blank: the rater's earlier marks on a conversation (from rating
it on its own) are not shown on it before or while it plays."""

from __future__ import annotations

from playground.rating.store import RatingStore
from tests.ui.test_rating import FAST, _plan, rated, template  # noqa: F401 - fixtures
from ui.rating.blind_view import load_blind_messages
from ui.rating.rater_window import RaterWindow


def test_a_comparison_shows_none_of_the_raters_earlier_marks(qtbot, rated):  # noqa: F811
    db, ids, _ = rated
    store = RatingStore(db)
    for sid in ids:  # ana rated each conversation on its own before, marking a turn
        msg = load_blind_messages(db, sid)[1]
        store.mark_turn(sid, msg.id, "ana", "an odd reply")
    plan = _plan(db, ids, "pairwise", n=2)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    win.start("ana", plan.id)
    assert win.assignment is not None
    assert win.assignment.session_b is not None
    for view in win.pairwise.views:  # before it plays
        assert "marked" not in view.status.text(), view.status.text()
    for view in win.pairwise.views:
        view.show_all()
        assert view.cards
        assert not any(c.marked for c in view.cards)
        assert "marked" not in view.status.text()
    # The next comparison starts blank too, whatever was marked in this one.
    win.pairwise.views[0].cards[0].flag.click()
    assert "1 marked" in win.pairwise.views[0].status.text()
    win.pairwise.choose(0, "A flowed better")
    win.pairwise.submit.click()
    assert win.assignment is not None
    assert win.assignment.position == 2
    for view in win.pairwise.views:
        assert "marked" not in view.status.text()
        view.show_all()
        assert not any(c.marked for c in view.cards)
    win.close()
