"""At 1024×700 the conversation keeps the room: at least six short messages in view, live (with a
person's composer and question card) and in replay with the Geometry view open; the decision
strip gives way to its title line and its handle drags it open again (ui/window/window_layout.py).

The window is the one a 1024×700 screen gives under Openbox (its frame as measured under Xvfb,
see tests/ui/test_window_fit.py), in the app's own font.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMargins, QPoint, QRect, QSize
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from playground import domain, events
from playground.embedding.cache import CachingEmbedder
from tests.ui.conftest import until
from tests.ui.recorded import SessionWriter
from ui.app import build, use_app_font
from ui.screen_fit import fitted_size

#: Openbox's frame: 1 px sides, a 20 px title bar, a 5 px handle at the bottom.
OPENBOX = QMargins(1, 20, 1, 5)
#: The main window on a 1024×700 screen under Openbox: 1022×675.
SMALL = fitted_size(QSize(1440, 900), QRect(0, 0, 1024, 700), OPENBOX)
AGENTS = ["Ana", "Ben", "Chloe"]
SHORT = ["Hi all!", "Morning.", "Tea, anyone?", "Yes please.", "Rain again.", "Boats later?"]
SID = "20260101-000000-short"
MESSAGES = 12


@pytest.fixture(autouse=True)
def app_font(qapp: QApplication) -> Any:
    """The app's font (ui.app.run sets it): rows and bars are as tall as in the app."""
    before = QFont(qapp.font())
    use_app_font(qapp)
    yield
    qapp.setFont(before)


def fully_visible(win: Any) -> int:
    """Message rows wholly inside the conversation's viewport."""
    vp = win.conversation.list.viewport()
    area = vp.rect()
    n = 0
    for w in win.conversation.widgets.values():
        if w.isVisible() and area.contains(QRect(w.mapTo(vp, QPoint(0, 0)), w.size())):
            n += 1
    return n


def _settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


async def _settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0.02)


def _post_short_messages(win: Any) -> None:
    bridge = win.bridge
    for i, name in enumerate(AGENTS):
        bridge.dispatch(events.ParticipantJoined(name=name, participant_kind="ai", color_index=i))
    for mid in range(1, MESSAGES + 1):
        msg = domain.Message(
            id=mid, speaker=AGENTS[mid % 3], text=SHORT[mid % len(SHORT)], step=mid, at=""
        )
        bridge.dispatch(events.MessagePosted(message=msg))


def _write_session(path: Path) -> str:
    """A recorded session of :data:`MESSAGES` short messages, each after a trigger's decisions."""
    writer = SessionWriter(path, SID, AGENTS)
    emit = writer.emit
    for m in range(1, MESSAGES + 1):
        speaker = AGENTS[m % 3]
        if m > 1:
            emit(events.TriggerFired(trigger="new_message", message_id=m - 1), m)
            for name in AGENTS:
                d = domain.Decision(
                    agent=name,
                    step=m,
                    trigger="new_message",
                    action="speak" if name == speaker else "silent",
                    reason="best score 3.9 ≥ imThreshold 3.8" if name == speaker else "quiet",
                    score=3.9,
                    threshold=3.8,
                )
                emit(events.DecisionMade(decision=d), m)
        msg = domain.Message(
            id=m,
            speaker=speaker,
            text=SHORT[m % len(SHORT)],
            step=m,
            at="2026-01-01T00:00:00+00:00",
        )
        emit(events.MessagePosted(message=msg), m)
    emit(events.SessionFinished(status="finished", reason="test"), MESSAGES)
    writer.db.close()
    return SID


@pytest.mark.asyncio
async def test_six_messages_show_live_at_1024_by_700(qtbot: Any, tmp_path: Path) -> None:
    win, controller = build(db_path=str(tmp_path / "live.db"), environ={})
    qtbot.addWidget(win)
    win.resize(SMALL)
    win.show()
    _post_short_messages(win)
    _settle()
    assert fully_visible(win) >= 6, "an observer's view"
    win.conversation.set_human("Maya")  # the composer, and the question card for Chloe's message
    msg = domain.Message(id=MESSAGES + 1, speaker="Chloe", text="And you, Maya?", step=13, at="")
    win.bridge.dispatch(events.MessagePosted(message=msg))
    _settle()
    assert win.conversation.card.isVisible()
    assert fully_visible(win) >= 6, "a person's view: composer and question card shown"
    assert win.decisions.title.isVisible(), "the decision strip keeps its title line"
    await controller.shutdown()


@pytest.mark.asyncio
async def test_six_messages_show_in_replay_with_geometry_at_1024_by_700(
    qtbot: Any, tmp_path: Path, minilm: Any
) -> None:
    db_path = tmp_path / "short.db"
    sid = _write_session(db_path)
    win, controller = build(db_path=str(db_path), environ={}, embedder=CachingEmbedder(minilm))
    qtbot.addWidget(win)
    win.resize(SMALL)
    win.show()
    await win.open_replay(str(db_path), sid)
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.moments[-1].seq)
    win.geometry_view.action.setChecked(True)  # View ▸ Geometry (a short window opens without)
    panel = win.geometry_view.panel
    await until(lambda: panel.status.text() == f"{MESSAGES} messages", what="the geometry")
    await _settled()
    assert panel.isVisible()
    assert win.transport.isVisible()
    assert len(win.conversation.messages()) == MESSAGES
    assert fully_visible(win) >= 6
    strip = win.decisions
    assert strip.title.isVisible()
    assert "step" in strip.title.text()
    # Dragging the handle up opens the decision table again.
    split = win.center_split
    total = sum(split.sizes())
    split.moveSplitter(total - 160, 1)
    await _settled()
    assert strip.table.isVisible()
    assert strip.height() >= 150
    win.replay.close()
    await controller.shutdown()


@pytest.mark.asyncio
async def test_a_tall_window_shows_the_decision_table_and_the_legend(
    qtbot: Any, tmp_path: Path
) -> None:
    win, controller = build(db_path=str(tmp_path / "tall.db"), environ={})
    qtbot.addWidget(win)
    win.resize(1440, 900)
    win.show()
    _post_short_messages(win)
    _settle()
    assert win.decisions.table.isVisible()
    assert win.decisions.height() >= 150
    assert not win.transport.legend.isHidden()
    tall_bar = win.participants.height()
    win.resize(SMALL)
    _settle()
    assert fully_visible(win) >= 6
    assert win.transport.legend.isHidden(), "a compact window: the marks name themselves"
    assert win.toolbar.iconSize().height() == 16
    compact_bar = win.participants.height()
    assert compact_bar < tall_bar, "no idle room for a scroll bar under the chips"
    win.bridge.dispatch(events.ParticipantLeft(name="Ana"))
    _settle()
    assert win.participants.height() == compact_bar, "the bar keeps its height"
    await controller.shutdown()
