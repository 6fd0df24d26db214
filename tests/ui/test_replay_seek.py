"""What keeps a replay jump fast, in the real window: widgets made ahead of need, bubbles and rows
that keep what they already show, labels measured once per text, and the same pixels as before."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from playground import domain, events
from tests.ui.conftest import until
from tests.ui.recorded import SessionWriter
from ui.app import build
from ui.panes.conversation.conversation_pane import ConversationPane
from ui.panes.conversation.message_widget import MessageWidget
from ui.panes.thoughts.thought_page import MAX_BUBBLES
from ui.widgets import fitted_label
from ui.widgets.fitted_label import FittedLabel

AGENTS = ["Ana", "Ben", "Chloe"]
SID = "20260101-000000-seek"


def _write_session(path: Path, messages: int) -> str:
    """A recorded session of ``messages`` messages: each listener retrieves, forms and rates two
    thoughts per message, one of them is said."""
    writer = SessionWriter(path, SID, AGENTS)
    emit = writer.emit
    rng = random.Random(3)
    tid = 0
    speaker, thought = AGENTS[0], None
    for m in range(1, messages + 1):
        if m > 1:
            emit(events.TriggerFired(trigger="new_message", message_id=m - 1), m)
            said = []
            for name in AGENTS:
                if name == speaker:
                    continue
                for system in (1, 2):
                    tid += 1
                    words = " ".join(
                        rng.choice(["boats", "gardens", "rain", "tea"])
                        for _ in range(rng.randint(3, 30))
                    )
                    t = domain.Thought(
                        id=tid,
                        agent=name,
                        text=f"thought {tid}: {words}",
                        system=system,
                        stimuli=[f"message:{m - 1}"],
                        created_step=m,
                        last_access=m,
                    )
                    emit(events.ThoughtFormed(thought=t), m)
                    ev = domain.Evaluation(
                        thought_id=tid,
                        step=m,
                        rating=4,
                        distribution={3: 0.5, 4: 0.5},
                        reasons_for=["new"],
                        reasons_against=["long"],
                        expected=3.5,
                        silence_factor=1.0,
                        score=round(rng.uniform(2.5, 4.6), 2),
                        method="offline-heuristic",
                    )
                    emit(events.ThoughtEvaluated(agent=name, evaluation=ev), m)
                said.append((name, tid))
            speaker, thought = rng.choice(said)
        text = f"Message {m}: " + "we talked about boats and gardens " * rng.randint(1, 4)
        msg = domain.Message(
            id=m,
            speaker=speaker,
            text=text,
            step=m,
            at="2026-01-01T00:00:00+00:00",
            thought_id=thought,
        )
        emit(events.MessagePosted(message=msg), m)
        if thought:
            emit(events.ThoughtExpressed(agent=speaker, thought_id=thought, message_id=m), m)
    emit(events.SessionFinished(status="finished", reason="test"), messages)
    writer.db.close()
    return SID


@pytest.fixture
def replay(qtbot, tmp_path):
    db_path = tmp_path / "seek.db"
    sid = _write_session(db_path, 120)
    win, controller = build(db_path=str(db_path), environ={})
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    return win, controller, str(db_path), sid


def _bubble_widgets(win) -> set[int]:
    return {
        id(b)
        for b in win.thoughts._pages[win.selection.name].findChildren(QWidget)
        if b.objectName() == "thoughtBubble"
    }


@pytest.mark.asyncio
async def test_the_first_jump_after_opening_makes_no_widgets(replay):
    win, controller, db_path, sid = replay
    await win.open_replay(db_path, sid)
    win.selection.select("Ben")
    await until(lambda: not win.replay._warm.isActive(), what="the idle work after opening")
    page = win.thoughts._pages["Ben"]
    bubbles, rows = _bubble_widgets(win), win.conversation.list.count()
    assert len(bubbles) >= MAX_BUBBLES, "the bubbles a jump needs were made in idle time"
    rec = win.replay.recording
    win.replay.seek(rec.moments[-3].seq)
    win.thoughts.settle()
    win.conversation.settle()
    assert len(page.order) == MAX_BUBBLES
    assert len(win.conversation.widgets) == 40
    assert _bubble_widgets(win) == bubbles, "no bubble was made by the jump"
    assert win.conversation.list.count() == rows, "no row was made by the jump"
    await controller.shutdown()


@pytest.mark.asyncio
async def test_a_step_back_keeps_the_bubbles_and_rows_of_what_is_still_shown(replay):
    win, controller, db_path, sid = replay
    await win.open_replay(db_path, sid)
    win.selection.select("Chloe")
    await until(lambda: not win.replay._warm.isActive(), what="the idle work after opening")
    rec = win.replay.recording
    message = [m for m in rec.moments if m.kind == "message"][80]
    win.replay.seek(message.seq)
    page = win.thoughts._pages["Chloe"]
    before_bubbles = dict(win.thoughts._pages["Chloe"].bubbles)
    before_rows = dict(win.conversation.widgets)
    for _ in range(3):  # back over a message and a step's thoughts
        win.replay.step(-1)
        await asyncio.sleep(0)
    shown = page.bubbles
    kept = set(shown) & set(before_bubbles)
    assert len(kept) >= MAX_BUBBLES - 6, "most thoughts are still shown"
    assert all(shown[t] is before_bubbles[t] for t in kept), "their bubbles stayed theirs"
    rows = win.conversation.widgets
    assert all(rows[m] is before_rows[m] for m in set(rows) & set(before_rows))
    # And what is shown is the moment's, as a fresh window would show it.
    ledger = rec.thought_ledger(win.replay.position).thoughts["Chloe"]
    assert [b.thought_id for b in win.thoughts.bubbles()] == sorted(ledger, reverse=True)[
        :MAX_BUBBLES
    ]
    assert all(b.text() == ledger[b.thought_id].text for b in win.thoughts.bubbles())
    assert all(w.body.text() == rec.message_text[m] for m, w in rows.items())
    await controller.shutdown()


def test_rows_fit_the_view_when_its_scroll_bar_comes(qtbot):
    from ui.bridge import EngineBridge
    from ui.selection import SelectedParticipant

    bridge = EngineBridge()
    pane = ConversationPane(bridge, SelectedParticipant(), {"Ana": "#1f77b4"})
    qtbot.addWidget(pane)
    pane.resize(500, 400)
    pane.show()
    bus = events.EventBus(strict=True)
    bridge.attach(bus)
    for i in range(1, 16):
        text = f"message {i} " + "words " * (i % 7 * 5)
        msg = domain.Message(id=i, speaker="Ana", text=text, step=i, at="2026-01-01T00:00:00")
        bus.publish(events.MessagePosted(message=msg))
        for _ in range(3):
            QApplication.processEvents()
    assert pane.list.verticalScrollBar().isVisible()
    assert not pane.list.horizontalScrollBar().isVisible(), "rows are as wide as the view"
    assert {w.width() for w in pane.widgets.values()} == {pane.list.viewport().width() - 4}
    bridge.detach()


def test_message_text_is_selectable_under_the_mouse_and_drawn_the_same(qtbot):
    msg = domain.Message(id=3, speaker="Ana", text="Boats and gardens, " * 12, step=3, at="")
    w = MessageWidget(msg, "#1f77b4")
    qtbot.addWidget(w)
    w.setFixedWidth(420)
    w.resize(420, w.heightForWidth(420))  # as the conversation sizes its rows
    w.show()
    QApplication.processEvents()
    plain = w.body.grab().toImage()
    height = w.body.height()
    assert w.body.textInteractionFlags() == Qt.TextInteractionFlag.NoTextInteraction
    # The mouse comes over the text: it becomes selectable, and looks the same.
    pos = QPointF(5, 5)
    QApplication.sendEvent(w.body, QEnterEvent(pos, pos, w.body.mapToGlobal(pos)))
    assert w.body.textInteractionFlags() == Qt.TextInteractionFlag.TextSelectableByMouse
    QApplication.processEvents()
    assert w.body.height() == height
    assert w.body.grab().toImage() == plain
    qtbot.mouseClick(w.body, Qt.MouseButton.LeftButton, pos=w.body.rect().center())
    w.body.setSelection(0, 5)
    assert w.body.selectedText() == "Boats"
    # A new message is drawn plain again (unless the mouse is still over it).
    w.bind(msg.model_copy(update={"text": "Tea?"}), "#1f77b4")
    assert w.body.text() == "Tea?"


@pytest.mark.parametrize(
    ("fmt", "flags", "wrap", "name"),
    [
        (Qt.TextFormat.PlainText, Qt.TextInteractionFlag.NoTextInteraction, True, "thoughtText"),
        (Qt.TextFormat.PlainText, Qt.TextInteractionFlag.TextSelectableByMouse, True, ""),
        (Qt.TextFormat.RichText, Qt.TextInteractionFlag.LinksAccessibleByMouse, True, "stimuli"),
        (Qt.TextFormat.AutoText, Qt.TextInteractionFlag.NoTextInteraction, False, ""),
        (Qt.TextFormat.PlainText, Qt.TextInteractionFlag.NoTextInteraction, False, "badgeId"),
    ],
)
def test_fitted_labels_measure_exactly_as_qt_labels(qtbot, fmt, flags, wrap, name):
    """Every size a fitted label gives is the one a plain QLabel of the same look computes, for
    new texts, texts seen before, other widths and another font."""
    host = QWidget()
    qtbot.addWidget(host)
    host.setStyleSheet("QLabel#badgeId { font-weight: bold; padding: 1px 5px; }")
    lay = QVBoxLayout(host)
    labels = []
    for cls in (QLabel, FittedLabel):
        label = cls(host)
        label.setObjectName(name)
        label.setTextFormat(fmt)
        label.setTextInteractionFlags(flags)
        label.setWordWrap(wrap)
        lay.addWidget(label)
        labels.append(label)
    host.show()
    rng = random.Random(5)
    words = ["we", "talked", "about", "boats", "and", "gardens", "Überraschung", "⚡", "·", "naïve"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 25))) for _ in range(12)]
    if fmt != Qt.TextFormat.PlainText:
        texts = [
            f"<span style='color:#888; font-weight:bold'>{t[:9]}</span> <a href='x'>{t}</a>"
            for t in texts
        ]
    qt, fitted = labels
    for font_size in (9, 13):
        font = host.font()
        font.setPointSize(font_size)
        for label in labels:
            label.setFont(font)
        for text in texts + texts:  # the second time from the remembered sizes
            for label in labels:
                label.setText(text)
            for width in (84, 250, 344, 641):
                assert fitted.heightForWidth(width) == qt.heightForWidth(width), (text, width)
            if not wrap:
                assert fitted.sizeHint() == qt.sizeHint()
                assert fitted.minimumSizeHint() == qt.minimumSizeHint()
    fitted_label.clear_cache()


def test_a_header_beside_a_hidden_button_asks_only_for_its_height(qtbot):
    """A message's header gets its whole row while the "✎ note" button beside it is hidden: its
    size hints then give the height Qt measures (remembered per line shape), and no width; with
    the button shown, they are Qt's own again."""
    msg = domain.Message(id=7, speaker="Zoë", text="Hi", step=7, at="", interruption=True)
    w = MessageWidget(msg, "#1f77b4")
    qtbot.addWidget(w)
    qt = QLabel(w.header.text())
    qtbot.addWidget(qt)
    for m in (msg, msg.model_copy(update={"id": 8, "speaker": "Ana", "system": 1})):
        w.bind(m, "#1f77b4")
        qt.setText(w.header.text())
        assert w.note_button.isHidden()
        assert w.header.sizeHint() == QSize(0, qt.sizeHint().height())
        assert w.header.minimumSizeHint().height() == qt.minimumSizeHint().height()
    w.enable_notes("Zoë")
    assert not w.note_button.isHidden()
    assert w.header.sizeHint() == qt.sizeHint()
    assert w.header.minimumSizeHint() == qt.minimumSizeHint()
