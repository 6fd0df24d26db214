"""The rater's side, headless: blind replay hides everything but speakers and text, typing, marks,
Likert ratings, pairwise preference, plans with resume after a restart, questionnaire, report."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QSpinBox,
    QTableWidget,
    QTextEdit,
    QWidget,
)

from playground import factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.rating.plan import PlanKind
from playground.rating.store import CONVERSATION_METRICS, PARTICIPANT_ITEMS, RatingStore
from playground.room import loops
from playground.settings import load_settings
from playground.storage import open_database
from tests.support import qt
from ui.rating.blind_view import BlindConversationView, load_blind_messages
from ui.rating.plans import RatingPlanDialog
from ui.rating.questionnaire import QuestionnaireDialog
from ui.rating.rater_window import RaterWindow
from ui.rating.report_view import ReportView

CONDITIONS = ["inner-thoughts", "baseline", "inner-thoughts", "baseline"]
FAST = 1000  # characters per second: a whole conversation types out in well under a second


async def _simulate(path: Path, embedder: CachingEmbedder) -> list[str]:
    db = open_database(path)
    library = personas.load_personas()
    ids = []
    for seed, condition in enumerate(CONDITIONS):
        settings = load_settings({}, {"engine": "offline", "seed": seed, "max_turns": 6})
        engine = await factory.build_engine(settings, embedder=embedder)
        room, _ = await factory.create_room(
            settings,
            engine,
            db=db,
            personas=factory.pick_personas(library, 3, seed),
        )
        await loops.run_simulation(room, icebreaker="What did you do last weekend?")
        await engine.close()
        # A condition label of the researcher's own, as an imported or older database may hold:
        # the rating views group and hide by whatever the sessions row says.
        db.execute("UPDATE sessions SET condition = ? WHERE id = ?", [condition, room.session_id])
        db.conn.commit()
        ids.append(room.session_id)
    db.close()
    return ids


@pytest.fixture(scope="module")
def template(tmp_path_factory, minilm) -> tuple[Path, list[str]]:
    """Four real offline sessions, two per condition, built once for the module."""
    path = tmp_path_factory.mktemp("rating") / "template.db"
    ids = asyncio.run(_simulate(path, CachingEmbedder(minilm)))
    return path, ids


@pytest.fixture
def rated(template, tmp_path):
    """A private copy of the template database: (db, session ids, path)."""
    src, ids = template
    path = tmp_path / "rating.db"
    shutil.copy(src, path)
    db = open_database(path)
    yield db, ids, path
    db.close()


def _texts(root: QWidget) -> list[str]:
    """Every string the rater can see or a screen reader can read, in every child widget."""
    out: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        out += [w.toolTip(), w.windowTitle(), w.accessibleName(), w.accessibleDescription()]
        if isinstance(w, QLabel):
            out.append(w.text())
        if isinstance(w, QAbstractButton):
            out.append(w.text())
        if isinstance(w, QTextEdit | QPlainTextEdit):
            out.append(w.toPlainText())
        if isinstance(w, QLineEdit):
            out += [w.text(), w.placeholderText()]
        if isinstance(w, QSpinBox):
            out += [w.text(), w.suffix(), w.prefix()]
        if isinstance(w, QProgressBar):
            out.append(w.text())
        if isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())]
        if isinstance(w, QListWidget):
            out += [w.item(i).text() for i in range(w.count())]
        if isinstance(w, QTableWidget):
            out += [
                qt.cell(w, r, c).text()
                for r in range(w.rowCount())
                for c in range(w.columnCount())
                if w.item(r, c) is not None
            ]
    return [t for t in out if t]


def _hidden(db, sid: str, said: str) -> dict[str, set[str]]:
    """What blind mode must never show of a session, read from every table that holds it.

    ``said`` is the text of the conversations on screen.
    """

    def unsaid(sql: str) -> set[str]:
        # A thought or memory that was put into words is part of the conversation itself.
        return {t for (t,) in db.execute(sql, [sid]) if t and t not in said}

    s = db.execute("SELECT condition, engine, model FROM sessions WHERE id = ?", [sid]).fetchone()
    scores = set()
    for sql in (
        "SELECT score FROM thoughts WHERE session_id = ? AND score IS NOT NULL",
        "SELECT score FROM evaluations WHERE session_id = ?",
        "SELECT saliency FROM thoughts WHERE session_id = ? AND saliency IS NOT NULL",
        "SELECT score FROM decisions WHERE session_id = ? AND score IS NOT NULL",
        "SELECT threshold FROM decisions WHERE session_id = ? AND threshold IS NOT NULL",
    ):
        scores |= {f"{v:.2f}" for (v,) in db.execute(sql, [sid])}
    hidden = {
        "thoughts": unsaid("SELECT text FROM thoughts WHERE session_id = ?"),
        "memories": unsaid("SELECT text FROM memories WHERE session_id = ?"),
        "reasons": {
            r for (r,) in db.execute("SELECT reason FROM decisions WHERE session_id = ?", [sid])
        },
        "interpretations": unsaid("SELECT interpretation FROM messages WHERE session_id = ?"),
        "scores": scores - {""},
        "session": {sid, s[0], s[1], s[2]},
    }
    assert hidden["thoughts"]
    assert hidden["memories"]
    assert hidden["reasons"]
    assert hidden["scores"]
    return hidden


WORDS = ["thought", "System-1", "System 1", "System-2", "interrupt", "offline engine",
         "score", "saliency", "memory", "decision", "condition", "engine", "model"]  # fmt: skip


def assert_blind(root: QWidget, db, session_ids: list[str]) -> None:
    texts = _texts(root)
    said = {m.text for sid in session_ids for m in load_blind_messages(db, sid)}
    statements = {f"<b>{i.label}</b> — {i.statement}" for i in CONVERSATION_METRICS}
    for sid in session_ids:
        for kind, values in _hidden(db, sid, " ".join(said)).items():
            for value in values:
                leaks = [t for t in texts if value and value in t]
                assert not leaks, f"{kind} {value!r} is visible in blind mode: {leaks[:3]}"
    for text in texts:
        if text in said or text in statements:  # the conversation itself; the instrument's wording
            continue
        for word in WORDS:
            assert word.lower() not in text.lower(), f"{word!r} is visible in blind mode: {text!r}"
        assert not re.search(r"\d\.\d\d", text), f"a score-like number is visible: {text!r}"


def _plan(db, ids: list[str], kind: PlanKind = "conversation", raters=("ana",), n: int = 3):
    return RatingStore(db).create_plan("pilot", kind, list(raters), n, sessions=ids, seed=5)


# -- blind mode ---------------------------------------------------------------------------------------


def test_blind_rating_window_hides_thoughts_scores_decisions_memories_and_provenance(qtbot, rated):
    db, ids, _ = rated
    plan = _plan(db, ids)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    win.start("ana", plan.id)
    a = win.assignment
    assert a is not None
    assert win.position.text() == "1 of 3"
    qtbot.waitUntil(lambda: win.blind.complete, timeout=10_000)
    messages = load_blind_messages(db, a.session_a)
    assert win.blind.texts() == [m.text for m in messages]
    assert [
        c.speaker.text().count(m.speaker) for c, m in zip(win.blind.cards, messages, strict=True)
    ]
    win.blind.cards[1].flag.click()
    win.blind.cards[1].comment.setText("came in too early")
    win.blind.cards[1].comment.editingFinished.emit()
    win.form.choose("coherence", 4)
    assert "conversation 1 of 3" in win.blind.title.text().lower()
    assert_blind(win, db, [a.session_a])


def test_pairwise_view_is_blind_too(qtbot, rated):
    db, ids, _ = rated
    plan = _plan(db, ids, "pairwise", n=2)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    win.start("ana", plan.id)
    qtbot.waitUntil(lambda: win.pairwise.both_shown, timeout=10_000)
    a = win.assignment
    assert a is not None
    assert a.session_b is not None
    assert_blind(win, db, [a.session_a, a.session_b])


def test_typing_shows_a_message_partly_then_whole_at_the_chosen_speed(qtbot, rated):
    db, ids, _ = rated
    messages = load_blind_messages(db, ids[0])
    view = BlindConversationView(cps=10)
    qtbot.addWidget(view)
    view.show()
    view.load(messages, "Conversation 1 of 1")
    first = messages[0].text
    assert len(first) > 12
    view.play()
    qtbot.waitUntil(lambda: bool(view.texts() and view.texts()[0]), timeout=3000)
    qtbot.wait(250)
    partial = view.texts()[0]
    assert 0 < len(partial) < len(first)
    assert first.startswith(partial)
    assert len(view.cards) == 1, "the next message waits for this one"
    qtbot.waitUntil(lambda: view.texts()[0] == first, timeout=10_000)

    # Speed: the same time shows far more characters at a higher cps.
    slow = BlindConversationView(cps=5)
    fast = BlindConversationView(cps=5)
    for v in (slow, fast):
        qtbot.addWidget(v)
        v.load(messages[1:], "x")
    fast.speed.setValue(60)  # the spin box drives the speed
    slow.play()
    fast.play()
    qtbot.wait(400)
    shown = [sum(map(len, v.texts())) for v in (slow, fast)]
    assert shown[1] > 3 * max(1, shown[0]), shown

    # "Show all" reveals every message at once, and the view says the conversation is complete.
    finished = []
    slow.finished.connect(lambda: finished.append(True))
    slow.show_all_button.click()
    assert slow.texts() == [m.text for m in messages[1:]]
    assert slow.complete
    assert finished == [True]
    assert not slow.show_all_button.isEnabled()


def test_pause_keeps_the_text_and_play_resumes_mid_message(qtbot, rated):
    db, ids, _ = rated
    messages = load_blind_messages(db, ids[0])
    view = BlindConversationView(cps=25)
    qtbot.addWidget(view)
    view.load(messages, "x")
    view.play()
    qtbot.waitUntil(lambda: bool(view.texts()) and len(view.texts()[0]) >= 3, timeout=3000)
    view.play_button.click()  # pause
    assert view.play_button.text() == "Play"
    held = view.texts()[0]
    qtbot.wait(300)
    assert view.texts()[0] == held
    view.play_button.click()
    qtbot.waitUntil(lambda: len(view.texts()[0]) > len(held), timeout=3000)
    assert view.texts()[0].startswith(held)


# -- marks, ratings --------------------------------------------------------------------------------------


def test_an_unnatural_turn_mark_is_saved_for_that_rater_only(qtbot, rated):
    db, ids, _ = rated
    store = RatingStore(db)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.rate_session(ids[0])
    win.start("ana")
    win.blind.show_all()
    card = win.blind.cards[2]
    card.flag.click()
    card.comment.setText("Elif answered a question meant for someone else")
    card.comment.editingFinished.emit()
    marks = store.turn_marks(ids[0], "ana")
    assert [(m["message_id"], m["comment"]) for m in marks] == [
        (card.msg.id, "Elif answered a question meant for someone else")
    ]
    win.close()

    other = RaterWindow(db, cps=FAST)
    qtbot.addWidget(other)
    other.rate_session(ids[0])
    other.start("ben")
    other.blind.show_all()
    assert not any(c.marked for c in other.blind.cards)
    assert "Elif answered" not in " ".join(_texts(other))
    assert store.turn_marks(ids[0], "ben") == []

    again = RaterWindow(db, cps=FAST)  # ana comes back: her mark is there; unmarking removes it
    qtbot.addWidget(again)
    again.rate_session(ids[0])
    again.start("ana")
    again.blind.show_all()
    card = again.blind.cards[2]
    assert card.marked
    assert card.comment.text().startswith("Elif answered")
    card.flag.click()
    assert store.turn_marks(ids[0], "ana") == []


def test_ratings_submit_only_when_all_seven_are_answered_and_reopen_with_them(qtbot, rated):
    db, ids, _ = rated
    store = RatingStore(db)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.rate_session(ids[1])
    win.start("ana")
    values = dict(zip([m.key for m in CONVERSATION_METRICS], [5, 4, 6, 3, 2, 7, 1], strict=True))
    for key, value in list(values.items())[:6]:
        win.form.choose(key, value)
    assert not win.submit_button.isEnabled()
    win.blind.show_all()
    assert not win.submit_button.isEnabled(), "one statement is still unanswered"
    assert "1 statement left" in win.form_hint.text()
    win.form.choose("adaptability", 1)
    assert win.submit_button.isEnabled()
    win.submit_button.click()
    assert store.conversation_ratings(ids[1], "ana") == values
    assert "Thank you, ana" in win.thanks.text()

    # Before the conversation has been shown, submit stays closed even with every answer given.
    again = RaterWindow(db, cps=5)
    qtbot.addWidget(again)
    again.rate_session(ids[1])
    again.start("ana")
    assert again.form.values() == values, "the rater's own earlier answers are shown"
    assert not again.submit_button.isEnabled()
    other = RaterWindow(db, cps=5)
    qtbot.addWidget(other)
    other.rate_session(ids[1])
    other.start("ben")
    assert other.form.values() == {}, "nobody sees another rater's answers"


# -- pairwise ---------------------------------------------------------------------------------------------


def test_pairwise_follows_the_plan_order_requires_a_reason_and_saves_the_choice(qtbot, rated):
    db, ids, _ = rated
    plan = _plan(db, ids, "pairwise", n=2)
    store = RatingStore(db)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    win.start("ana", plan.id)
    a = win.assignment
    assert a is not None
    assert a.session_b is not None
    conds = dict(db.execute("SELECT id, condition FROM sessions").fetchall())
    assert conds[a.session_a] != conds[a.session_b]
    first, second = load_blind_messages(db, a.session_a), load_blind_messages(db, a.session_b)
    assert [m.text for m in win.pairwise.views[0].messages] == [m.text for m in first]
    assert [m.text for m in win.pairwise.views[1].messages] == [m.text for m in second]
    assert win.pairwise.splitter.orientation().name == "Horizontal"  # wide: side by side
    qtbot.waitUntil(lambda: win.pairwise.both_shown, timeout=10_000)

    win.pairwise.choose(1, "   ")
    assert win.pairwise.submit.isEnabled()
    win.pairwise.submit.click()
    assert "reason is required" in win.pairwise.hint.text()
    assert db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 0
    assert win.assignment == a

    win.pairwise.choose(1, "B felt like people listening to each other")
    win.pairwise.submit.click()
    rows = db.execute(
        "SELECT rater, first_id, second_id, chosen_id, reason, assignment_id FROM preferences"
    ).fetchall()
    assert rows == [
        (
            "ana",
            a.session_a,
            a.session_b,
            a.session_b,
            "B felt like people listening to each other",
            a.id,
        )
    ]
    assert store.progress(plan.id)["ana"] == (1, 2)
    assert win.assignment is not None
    assert win.assignment.position == 2

    win.resize(1024, 700)  # narrow: one above the other
    qtbot.waitUntil(lambda: win.pairwise.splitter.orientation().name == "Vertical", timeout=2000)


# -- plans, progress, resume ----------------------------------------------------------------------------


def test_a_plan_made_in_the_dialog_is_worked_through_and_resumes_after_a_restart(qtbot, rated):
    db, ids, path = rated
    dlg = RatingPlanDialog(db)
    qtbot.addWidget(dlg)
    conditions = [dlg.sessions.item(i).text() for i in range(dlg.sessions.count())]
    assert sum("baseline" in t for t in conditions) == 2, "researchers see conditions"
    dlg.name.setText("week 1")
    dlg.raters.setText("ana, ben")
    dlg.per_rater.setValue(9)
    dlg.check(ids)
    assert dlg.create_plan() is None
    assert "4" in dlg.message.text(), "too many asked: error shown"
    assert dlg.store.plans() == [], "too many asked: error shown"
    dlg.per_rater.setValue(4)
    plan = dlg.create_plan()
    assert plan is not None
    assert plan.raters == ["ana", "ben"]
    assert plan.per_rater == 4
    assert dlg.plan_widgets[plan.id].bars["ana"].text() == "0 / 4"

    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.name_edit.setText("ana")
    win.plan_combo.setCurrentIndex(win.plan_combo.findData(plan.id))
    win.start_button.click()
    done = []
    for n in (1, 2):
        assert win.position.text() == f"{n} of 4"
        assert win.assignment is not None
        done.append(win.assignment.session_a)
        win.blind.show_all()
        for m in CONVERSATION_METRICS:
            win.form.choose(m.key, n + 2)
        win.submit_button.click()
    assert win.progress.value() == 2
    assert win.progress.maximum() == 4
    third = win.assignment
    win.close()
    db.close()

    db2 = open_database(path)  # a restart: a new connection, a new window
    try:
        win2 = RaterWindow(db2, cps=FAST)
        qtbot.addWidget(win2)
        win2.start("ana", plan.id)
        assert win2.assignment == third
        assert win2.assignment is not None
        assert win2.position.text() == "3 of 4"
        assert win2.assignment.session_a not in done
        assert win2.progress.value() == 2
        dlg2 = RatingPlanDialog(db2)
        qtbot.addWidget(dlg2)
        bars = dlg2.plan_widgets[plan.id].bars
        assert (bars["ana"].value(), bars["ana"].maximum()) == (2, 4)
        assert bars["ana"].text() == "2 / 4"
        assert bars["ben"].text() == "0 / 4"
        store = RatingStore(db2)
        assert store.conversation_ratings(done[0], "ana") == {
            m.key: 3 for m in CONVERSATION_METRICS
        }
        # Finish the plan: the thank-you page.
        for _ in range(2):
            win2.blind.show_all()
            for m in CONVERSATION_METRICS:
                win2.form.choose(m.key, 4)
            win2.submit_button.click()
        assert win2.stack.currentWidget() is win2.done_page
        assert "finished all 4" in win2.thanks.text()
    finally:
        db2.close()


def test_a_rater_outside_the_plan_or_without_a_name_is_told_so(qtbot, rated):
    db, ids, _ = rated
    plan = _plan(db, ids)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.start("   ", plan.id)
    assert win.error.isVisibleTo(win)
    assert "name" in win.error.text()
    win.start("zoe", plan.id)
    assert "not a rater of the plan" in win.error.text()
    assert win.stack.currentWidget() is win.sign_in_page


# -- questionnaire, report -----------------------------------------------------------------------------


def test_questionnaire_saves_ten_answers_and_shows_them_again(qtbot, rated):
    db, ids, _ = rated
    dlg = QuestionnaireDialog(db, ids[0], "Zoe")
    qtbot.addWidget(dlg)
    keys = [i.key for i in PARTICIPANT_ITEMS]
    assert len(dlg.form.rows) == 10
    for k in keys[:9]:
        dlg.form.choose(k, 6)
    assert not dlg.save_button.isEnabled()
    dlg.form.choose(keys[9], 2)
    dlg.respondent.setText("")
    assert not dlg.save_button.isEnabled()
    dlg.respondent.setText("Zoe")
    dlg.save_button.click()
    assert dlg.result() == QuestionnaireDialog.DialogCode.Accepted
    expected = {**{k: 6 for k in keys[:9]}, keys[9]: 2}
    assert RatingStore(db).questionnaire(ids[0], "Zoe") == expected
    again = QuestionnaireDialog(db, ids[0], "Zoe")
    qtbot.addWidget(again)
    assert again.form.values() == expected


def test_report_view_says_no_ratings_then_shows_the_table_and_both_plots(qtbot, rated):
    db, ids, _ = rated
    view = ReportView(db)
    qtbot.addWidget(view)
    view.resize(1440, 900)
    view.show()
    assert view.message.isVisibleTo(view)
    assert "No ratings yet" in view.message.text()
    assert view.images() == []

    store = RatingStore(db)
    conds = dict(db.execute("SELECT id, condition FROM sessions").fetchall())
    for r, rater in enumerate(["ana", "ben", "chloe"]):
        for sid in ids:
            good = conds[sid] == "inner-thoughts"
            store.rate_conversation(
                sid,
                rater,
                {
                    m.key: (6 if good else 3) - (r + i) % 2
                    for i, m in enumerate(CONVERSATION_METRICS)
                },
            )
        store.record_preference(rater, ids[0], ids[1], ids[0], "more natural")
    store.mark_turn(ids[1], 3, "ana", "odd")
    view.refresh_button.click()
    assert not view.message.isVisibleTo(view)
    table = view.table.toPlainText()
    assert "Ratings report" in table
    assert "inner-thoughts" in table
    assert "baseline" in table
    assert "Mann-Whitney" in table
    images = view.images()
    assert len(images) == 2
    assert all(p.width() > 300 and p.height() > 100 for p in images)

    view.set_experiment("no-such-experiment")
    assert "no-such-experiment" in view.message.text()
    assert view.images() == []


def test_the_report_says_what_the_rater_saw_and_chose(qtbot, rated):
    """A rater who picks Conversation A on screen is reported as choosing A, with the condition
    behind it; the counts read "1 rater", "1 preference"."""
    db, ids, _ = rated
    conds = dict(db.execute("SELECT id, condition FROM sessions").fetchall())
    plan = _plan(db, ids, "pairwise", n=1)
    win = RaterWindow(db, cps=FAST)
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    win.start("ana", plan.id)
    a = win.assignment
    assert a is not None
    assert a.session_b is not None
    shown_a = conds[a.session_a]
    if shown_a != "inner-thoughts":  # the plan's coin flip: make A the later condition in
        # alphabetical order, so that screen order and condition order disagree
        db.execute(
            "UPDATE assignments SET session_a = ?, session_b = ? WHERE id = ?",
            [a.session_b, a.session_a, a.id],
        )
        db.conn.commit()
        win.start("ana", plan.id)
        a = win.assignment
        assert a is not None
        assert conds[a.session_a] == "inner-thoughts"
    qtbot.waitUntil(lambda: win.pairwise.both_shown, timeout=10_000)
    assert win.pairwise.options[0].text() == "Conversation A"
    win.pairwise.choose(0, "A sounded like people")
    win.pairwise.submit.click()
    assert db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 1
    assert "You have finished the one comparison of this plan." in win.thanks.text()

    view = ReportView(db)
    qtbot.addWidget(view)
    view.show()
    lines = [" ".join(line.split()) for line in view.table.toPlainText().splitlines()]
    assert "ana baseline vs inner-thoughts 1 0 baseline 0, inner-thoughts 1" in lines
    seen = f"ana {a.session_a} (inner-thoughts) {a.session_b} (baseline) A (= inner-thoughts)"
    assert seen in lines
    summary = view.summary.text()
    assert "1 rater ·" in summary
    assert "1 preference ·" in summary
    assert "0 questionnaires" in summary


def test_a_plan_of_one_rater_and_one_pair_is_announced_in_the_singular(qtbot, rated):
    db, ids, _ = rated
    dlg = RatingPlanDialog(db)
    qtbot.addWidget(dlg)
    dlg.name.setText("tiny")
    dlg.kind.setCurrentIndex(dlg.kind.findData("pairwise"))
    dlg.raters.setText("ana")
    dlg.per_rater.setValue(1)
    dlg.check(ids)
    assert dlg.create_plan() is not None
    assert dlg.message.text() == "Created “tiny”: 1 rater × 1 pair."
