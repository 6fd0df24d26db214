"""Replay in the window: the state at a moment equals what the live window showed then; transport,
typing animation, keyboard, read-only, and a session that cannot be replayed."""

from __future__ import annotations

import asyncio
import random

import pytest
from PySide6.QtCore import Qt

from playground.embedding.cache import CachingEmbedder
from tests.ui.conftest import until
from ui.app import build
from ui.panes.conversation.message_widget import MessageWidget

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "replay.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    return win, controller


def snapshot(win) -> dict:
    """Everything the three panes and the decision strip show, as plain data."""
    bubbles = [
        (
            b.thought_id,
            b._id_badge.text(),
            b.text(),
            b.score_text(),
            b._saliency_badge.text(),
            b._system_tag.text(),
            b._retained_tag.isVisibleTo(b),
            b.is_expressed(),
            b._stimuli.text(),
        )
        for b in win.thoughts.bubbles()
    ]
    return {
        "selected": win.selection.name,
        "messages": win.conversation.messages(),
        "memory": win.memory.rows(),
        "thoughts": bubbles,
        "thought_count": win.thoughts.header.count.text(),
        "decisions": win.decisions.rows(),
        "decision_title": win.decisions.title.text(),
        "decision_timing": win.decisions.title.toolTip(),  # where the trigger's time went
        "chips": sorted(win.participants.chips),
    }


def _idle(room) -> bool:
    return all(state == "idle" for state in room._states.values())


async def _live_run(win, controller, steps: int) -> tuple[str, list[tuple[int, dict]]]:
    people = controller.library()[:3]
    room = await controller.new_session(people, icebreaker="What did you do last weekend?")
    assert room is not None
    db = controller.database()
    seen: list[tuple[int, dict]] = []
    for i in range(steps):
        before = room.step
        win.act_step.trigger()
        await until(lambda: room.step > before and _idle(room), what=f"step {i + 1}")  # noqa: B023
        await asyncio.sleep(0.05)  # let deferred sizing run
        if i == 2:  # look at another participant for a while, as a user would
            other = next(a.name for a in room.agents if a.name != win.selection.name)
            win.participants.chips[other].clicked.emit(other)
        seq = db.execute(
            "SELECT MAX(seq) FROM events WHERE session_id = ?", [room.session_id]
        ).fetchone()[0]
        seen.append((seq, snapshot(win)))
    sid = room.session_id
    await controller.stop()
    return sid, seen


@pytest.mark.parametrize("incremental", [True, False], ids=["publish-forward", "always-rebuild"])
async def test_replay_shows_what_the_live_window_showed_at_each_step(
    window, monkeypatch, incremental
):
    if not incremental:  # every jump, forward too, rebuilds the moment and recycles widgets
        monkeypatch.setattr("ui.replay.controller.INCREMENTAL_LIMIT", -1)
    win, controller = window
    sid, seen = await _live_run(win, controller, steps=6)
    await win.open_replay(str(controller.db_path), sid)
    assert win.replay.active
    assert win.transport.isVisible()
    assert not win.act_run.isEnabled()
    assert not win.act_step.isEnabled()
    # Jump to each recorded moment forwards, then in a shuffled order (backwards jumps rebuild).
    order = list(range(len(seen))) + random.Random(4).sample(range(len(seen)), len(seen))
    for i in order:
        seq, live = seen[i]
        win.selection.select(live["selected"])
        win.replay.seek(seq)
        await asyncio.sleep(0)
        assert snapshot(win) == live, f"replay differs from the live window at step {i + 1}"
    await controller.shutdown()


async def test_transport_steps_plays_at_typing_speed_and_reads_the_keyboard(window, qtbot):
    win, controller = window
    sid, _ = await _live_run(win, controller, steps=5)
    await win.open_replay(str(controller.db_path), sid)
    rec = win.replay.recording
    assert rec is not None
    assert win.replay.position == rec.first
    assert len(win.conversation.widgets) == 1  # the icebreaker
    # → steps to the next moment, Shift+→ to the next message, ← back.
    qtbot.keyClick(win, Qt.Key.Key_Right)
    assert win.replay.position == rec.moments[1].seq
    qtbot.keyClick(win, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    nxt = rec.next_moment(rec.moments[1].seq, "message")
    assert nxt is not None
    assert win.replay.position == nxt.seq
    assert len(win.conversation.widgets) == 2
    qtbot.keyClick(win, Qt.Key.Key_Left)
    assert win.replay.position < nxt.seq
    assert len(win.conversation.widgets) == 1
    # Play: the next message is typed out, not shown at once.
    win.replay.seek(rec.previous_moment(nxt.seq).seq)
    win.transport.cps.setValue(20)
    qtbot.keyClick(win, Qt.Key.Key_Space)
    assert win.replay.playing
    body = win.conversation.widgets
    await until(lambda: nxt.message_id in body, what="the message starts")
    text = rec.message_text[nxt.message_id]
    await until(lambda: 0 < len(body[nxt.message_id].body.text()) < len(text), what="typing")
    partial = body[nxt.message_id].body.text()
    assert partial.endswith("▍")
    assert text.startswith(partial[:-1])
    await until(lambda: body[nxt.message_id].body.text() == text, timeout=20, what="typed out")
    qtbot.keyClick(win, Qt.Key.Key_Space)
    assert not win.replay.playing
    # 8× plays through to the end.
    win.transport.speed.setCurrentIndex(win.transport.speed.count() - 1)
    win.transport.cps.setValue(200)
    win.replay.play()
    await until(lambda: not win.replay.playing, timeout=60, what="the end of the replay")
    assert win.replay.position == rec.last
    assert len(win.conversation.widgets) == len(rec.message_seq)
    await controller.shutdown()


async def test_timeline_marks_scrubbing_and_read_only_replay(window, qtbot):
    win, controller = window
    sid, _ = await _live_run(win, controller, steps=4)
    await win.open_replay(str(controller.db_path), sid)
    rec = win.replay.recording
    assert rec is not None, "a stopped run has at least silences or replies marked"
    assert rec.marks, "a stopped run has at least silences or replies marked"
    tl = win.transport.timeline
    qtbot.mouseClick(tl, Qt.MouseButton.LeftButton, pos=tl.rect().center())
    assert win.replay.position == tl.seq_at(tl.rect().center().x())
    right_end = tl.rect().center()
    right_end.setX(tl.width() - 2)
    qtbot.mouseClick(tl, Qt.MouseButton.LeftButton, pos=right_end)
    assert win.replay.position == rec.moments[-1].seq
    # The evaluation pop-up works on replayed thoughts, with the reasons recorded then.
    win.replay.seek(rec.last)
    scored = [b for b in win.thoughts.bubbles() if b.score() is not None]
    assert scored
    popup = scored[0].show_evaluation()
    assert popup is not None
    assert "for" in popup.text().lower()
    popup.close()
    # Minds cannot be changed in a replay: the request is refused with a way forward.
    bubble = next(iter(win.thoughts.bubbles()), None)
    if bubble is not None:
        win.thoughts.force_express_requested.emit(win.selection.name, bubble.thought_id)
        await until(lambda: "fork" in win.banner.text(), what="the refusal")
    n = controller.database().execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    assert n == len(rec.message_seq)
    win.transport.close_button.click()
    assert not win.replay.active
    assert not win.transport.isVisible()
    await controller.shutdown()


async def test_a_missing_session_or_database_is_reported_not_raised(window, tmp_path):
    win, controller = window
    await win.open_replay(str(controller.db_path), "no-such-session")
    assert "no session" in win.banner.text()
    await win.open_replay(str(tmp_path / "nowhere" / "x.db"), "abc")
    assert "no database" in win.banner.text().lower()
    assert not (tmp_path / "nowhere").exists()
    await controller.shutdown()


async def test_fork_continues_live_from_the_replayed_moment_and_a_human_can_join(window):
    win, controller = window
    sid, _ = await _live_run(win, controller, steps=5)
    await win.open_replay(str(controller.db_path), sid)
    rec = win.replay.recording
    assert rec is not None
    second = [m for m in rec.moments if m.kind == "message"][1]
    win.replay.seek(second.seq)
    dlg = win.open_fork()
    assert dlg is not None
    dlg.join.setChecked(True)
    dlg.name.setText("Zoe")
    dlg.more.setValue(3)
    dlg.accept()
    await until(lambda: controller.room is not None and controller.human == "Zoe", what="fork")
    room = controller.room
    assert not win.replay.active
    assert not win.transport.isVisible()
    db = controller.database()
    row = db.execute(
        "SELECT parent_id, fork_seq, fork_message, status FROM sessions WHERE id = ?",
        [room.session_id],
    ).fetchone()
    assert row == (sid, second.seq, second.message_id, "running")
    parent_msgs = db.execute(
        "SELECT speaker, text FROM messages WHERE session_id = ? AND id <= ? ORDER BY id",
        [sid, second.message_id],
    ).fetchall()
    fork_msgs = db.execute(
        "SELECT speaker, text FROM messages WHERE session_id = ? ORDER BY id", [room.session_id]
    ).fetchall()
    assert fork_msgs == parent_msgs, "the transcript up to the fork point is carried over"
    assert win.conversation.messages() == [tuple(m) for m in parent_msgs]
    # Memories and thoughts carried over with the same ids.
    agent = room.agents[0]
    parent_mem = {
        r[0]
        for r in db.execute(
            "SELECT id FROM memories WHERE session_id = ? AND agent = ? AND deleted = 0",
            [sid, agent.name],
        ).fetchall()
    }
    assert set(agent.memory.items) == parent_mem
    assert agent.reservoir.thoughts, "the reservoir comes along"
    controller.set_pace("fast")
    await controller.send("Hello everyone, I am joining from here!")
    assert room.messages[-1].speaker == "Zoe"
    assert room.messages[-1].id == second.message_id + 1
    await controller.shutdown()


def _message(i: int):
    from playground import domain

    return domain.Message(id=i, speaker="Ana", text=f"message number {i}", step=i, at="")


async def test_long_conversations_keep_their_latest_messages_on_screen(qtbot, monkeypatch):
    from playground import events
    from ui.bridge import EngineBridge
    from ui.panes.conversation import conversation_pane as cp
    from ui.panes.conversation.message_rows import MAX_MESSAGES
    from ui.panes.conversation.row_placement import JUMP_MESSAGES
    from ui.selection import SelectedParticipant
    from ui.widgets import deferred

    monkeypatch.setattr(deferred, "FILL_DELAY_MS", 60_000)  # rows out of view wait for settle()
    bridge = EngineBridge()
    pane = cp.ConversationPane(bridge, SelectedParticipant(), {})
    qtbot.addWidget(pane)
    pane.resize(500, 400)
    pane.show()
    bus = events.EventBus(strict=True)
    bridge.attach(bus)
    for i in range(1, MAX_MESSAGES + 11):
        bus.publish(events.MessagePosted(message=_message(i)))
    assert sorted(pane.widgets) == list(range(11, MAX_MESSAGES + 11))
    assert pane.list.count() == MAX_MESSAGES
    assert f"the last {MAX_MESSAGES} of {MAX_MESSAGES + 10}" in pane.title.text()

    def jump(keep: int, upto: int) -> None:  # a replay rebuilding the moment after message upto
        pane.begin_rebuild(keep)
        for i in range(1, upto + 1):
            bus.publish(events.MessagePosted(message=_message(i)))
        pane.end_rebuild()

    def visible_rows() -> list[int]:
        return [r for r in range(pane.list.count()) if not pane.list.item(r).isHidden()]

    def message_id(row: int) -> int:
        widget = pane.list.itemWidget(pane.list.item(row))
        assert isinstance(widget, MessageWidget)
        return widget.msg.id

    # A replay jumping back to message 5, then on to message 100, lays out the messages just
    # before 100 (none of them on screen then), recycling widgets.
    jump(0, 5)
    jump(5, 100)
    pane.list.scrollToBottom()
    await asyncio.sleep(0)
    # The rows in view show their messages at once; the ones above wait for the fill.
    in_view = [
        mid
        for mid, item in pane.items.items()
        if pane.list.visualItemRect(item).intersects(pane.list.viewport().rect())
    ]
    assert 100 in in_view
    assert len(in_view) < JUMP_MESSAGES
    assert all(pane._widgets[m].msg.id == m for m in in_view), "rows in view are up to date"
    assert pane._unbound, "rows above wait"
    assert not set(pane._unbound) & set(in_view), "rows above wait"
    assert sorted(pane.widgets) == list(range(101 - JUMP_MESSAGES, 101))  # settles
    assert not pane._unbound
    visible = visible_rows()
    assert len(visible) == JUMP_MESSAGES, "the rest are hidden, kept for the next jump"
    assert visible == list(range(visible[0], visible[0] + JUMP_MESSAGES)), "one run of rows"
    assert visible[0] > 0, "hidden rows are left above, for stepping back"
    shown = [message_id(r) for r in visible]
    assert shown == sorted(shown), "rows stay in message order"
    assert all(pane.widgets[m].body.text() == f"message number {m}" for m in pane.widgets)
    # Stepping back a message, then forward again, slides over the hidden rows: the messages
    # still shown keep their rows, and only the new message's row is bound (a replay's step).
    before = dict(pane.widgets)
    rows = pane.list.count()
    jump(99, 99)
    assert sorted(pane.widgets) == list(range(100 - JUMP_MESSAGES, 100))
    assert all(pane.widgets[m] is before[m] for m in range(101 - JUMP_MESSAGES, 100))
    assert pane.list.count() == rows
    assert visible_rows() == [r - 1 for r in visible]
    jump(99, 100)
    assert all(pane.widgets[m] is before[m] for m in range(101 - JUMP_MESSAGES, 101))
    assert visible_rows() == visible
    # Jumping forward again keeps the earlier messages that are still in the window.
    jump(100, 110)
    assert sorted(pane.widgets) == list(range(111 - JUMP_MESSAGES, 111))
    assert all(pane.widgets[m] is before[m] for m in range(111 - JUMP_MESSAGES, 101))
    assert all(pane.widgets[m].body.text() == f"message number {m}" for m in pane.widgets)
    # Back to message 5, then on again: hidden rows are reused, in order, with no new widgets.
    jump(5, 5)
    rows = pane.list.count()
    assert sorted(pane.widgets) == [1, 2, 3, 4, 5]
    for i in range(6, 21):
        bus.publish(events.MessagePosted(message=_message(i)))
    assert pane.list.count() == rows, "no new rows while hidden ones are left"
    assert [message_id(r) for r in visible_rows()] == list(range(1, 21))
    bridge.detach()


async def test_a_replayed_human_session_shows_the_persons_notes_and_no_composer(window, embedder):
    from playground.storage import open_database
    from tests.history.test_recording import _session_with_everything

    win, controller = window
    db = open_database(controller.db_path)
    room, _ = await _session_with_everything(embedder, db)
    db.close()
    await win.open_replay(str(controller.db_path), room.session_id)
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.last)
    zoe = next(m for m in room.messages if m.speaker == "Zoe")
    w = win.conversation.widgets[zoe.id]
    assert w.notes.isVisibleTo(w)
    assert "Zoe's private reason" in w.notes.text()
    assert "I want Ana to talk" in w.notes.text()
    assert not w.note_button.isVisibleTo(w)
    assert not win.conversation.card.isVisibleTo(win)
    assert not win.conversation.composer.isEnabled()
    # Going back and forth keeps exactly one copy of the note.
    win.replay.seek(rec.first)
    win.replay.seek(rec.last)
    assert win.conversation.widgets[zoe.id].notes.text().count("I want Ana to talk") == 1
    await controller.shutdown()


async def test_a_damaged_event_stops_the_replay_with_a_message(window):
    win, controller = window
    sid, _ = await _live_run(win, controller, steps=3)
    db = controller.database()
    with db.atomic():
        db.execute(
            'UPDATE events SET data = \'{"kind": "thought_formed"}\' WHERE session_id = ?'
            " AND seq = (SELECT MAX(seq) FROM events WHERE session_id = ? AND kind = 'thought_formed')",
            [sid, sid],
        )
    await win.open_replay(str(controller.db_path), sid)
    rec = win.replay.recording
    assert rec is not None
    win.replay.play()
    await until(lambda: "cannot be read" in win.banner.text(), timeout=30, what="the error banner")
    assert not win.replay.playing
    await controller.shutdown()


async def test_a_fork_of_a_session_in_another_database_is_saved_there(window, tmp_path, embedder):
    from playground.storage import open_database
    from tests.history.test_recording import _session_with_everything

    win, controller = window
    other = tmp_path / "other.db"
    db = open_database(other)
    parent_room, _ = await _session_with_everything(embedder, db)
    db.close()
    sid = parent_room.session_id
    await win.open_replay(str(other), sid)
    rec = win.replay.recording
    assert rec is not None
    cap = controller.settings.room.max_turns
    room = await controller.fork(rec, rec.moments[2].seq, more_messages=2, human="Zoe")
    assert room is not None
    shown = rec.messages_shown(rec.moments[2].seq)
    assert room.settings.room.max_turns == shown + 2
    assert controller.settings.room.max_turns == cap, "the fork's cap became the user's setting"
    await controller.stop()
    await until(lambda: win.rating.questionnaire is not None, what="the questionnaire offer")
    assert win.rating.questionnaire.store.db is rec.db
    parent = rec.db.execute("SELECT parent_id FROM sessions WHERE id = ?", [room.session_id])
    assert parent.fetchone()[0] == sid
    win.rating.questionnaire.close()
    await controller.shutdown()


async def test_a_jump_draws_what_is_in_view_first_and_the_rest_a_moment_later(window, monkeypatch):
    """After a jump the bubbles in view are right at once; the ones out of view are brought up to
    date by the deferred fill, and asking the pane about its contents finishes it. (The
    conversation's rows: test_long_conversations_keep_their_latest_messages_on_screen.)"""
    from ui.widgets import deferred

    monkeypatch.setattr(deferred, "FILL_DELAY_MS", 60_000)  # hold the fill back
    win, controller = window
    win.resize(1024, 700)  # a small view: more out of it
    sid, _ = await _live_run(win, controller, steps=8)
    await win.open_replay(str(controller.db_path), sid)
    rec = win.replay.recording
    name = max(rec.thought_ledger(rec.last).thoughts.items(), key=lambda kv: len(kv[1]))[
        0
    ]  # the participant with the most thoughts
    win.selection.select(name)
    moments = [m.seq for m in rec.moments]
    deferred_seen = False
    for seq in [moments[-1], moments[len(moments) // 2], moments[-3], moments[-1]]:
        win.replay.seek(seq)
        await asyncio.sleep(0)
        page = win.thoughts._pages[name]
        ledger = rec.thought_ledger(seq).thoughts.get(name, {})
        view = page.viewport().rect().translated(0, page.verticalScrollBar().value())
        for tid in page.order:
            bubble = page.bubbles[tid]
            if bubble.isVisible() and bubble.geometry().intersects(view):
                assert tid not in page.unbound, "a bubble in view is up to date"
                assert bubble._id_badge.text() == f"#{tid}"
                assert bubble.text() == ledger[tid].text
        deferred_seen |= bool(page.unbound)
        # Asking for the contents finishes the rest: every bubble and row is right.
        assert [b.thought_id for b in win.thoughts.bubbles()] == page.order
        assert all(b._id_badge.text() == f"#{b.thought_id}" for b in win.thoughts.bubbles())
        assert not page.unbound
        assert not page.parked
    assert deferred_seen, "some bubbles were out of view and left for later"
    await controller.shutdown()


async def test_a_message_moment_shows_the_thought_behind_it_as_said(window, qtbot):
    """Stepping to message #N shows the bubble of the thought it said marked "said in #N" at
    that very moment, as the live window did, not one moment later (issue 34, point 8)."""
    win, controller = window
    sid, _ = await _live_run(win, controller, steps=4)
    await win.open_replay(str(controller.db_path), sid)
    rec = win.replay.recording
    assert rec is not None
    said = (
        controller.database()
        .execute(
            "SELECT id, speaker, thought_id FROM messages WHERE session_id = ? AND thought_id"
            " IS NOT NULL ORDER BY id",
            [sid],
        )
        .fetchall()
    )
    assert said, "an offline run of four steps has replies from thoughts"
    for mid, speaker, tid in said:
        moment = next(m for m in rec.moments if m.message_id == mid)
        win.selection.select(speaker)
        win.replay.seek(rec.previous_moment(moment.seq).seq)
        qtbot.keyClick(win, Qt.Key.Key_Right)  # → to the message's moment
        assert win.replay.position == moment.seq
        assert mid in win.conversation.widgets
        bubble = win.thoughts.bubble(tid)
        assert bubble is not None
        assert bubble.is_expressed(), f"thought #{tid} behind message #{mid} not said yet"
    await controller.shutdown()
