"""The decision strip at 1024×700 (ui/panes/decisions/decision_strip.py, ui/window/window_layout.py): a
System-1 reply's "best … / chosen …" does not squeeze *Why*; with a banner and the person's
question card showing, the strip's title and ◀ ▶ show whole; dragging its handle up gives the
table the room, not a blank band.

The window is the one a 1024×700 screen gives under Openbox (tests/ui/test_conversation_first.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QWidget

from playground import domain, events
from tests.ui.test_conversation_first import (  # app_font: the app's font, autouse
    SMALL,
    _post_short_messages,
    _settle,
    app_font,  # noqa: F401
)
from ui.app import build
from ui.panes.decisions import decision_strip

REASON = (
    "best thought 3.90 ≥ imThreshold 3.20; System-1 reply drawn (a quick reply below the best:"
    " 2.00)"
)


def _decisions(win: Any, step: int = 13) -> None:
    bridge = win.bridge
    bridge.dispatch(events.TriggerFired(trigger="new_message", message_id=12, step=step))
    rows = [
        ("Ana", "speak", 2.0, 3.9, REASON),
        ("Ben", "silent", 2.4, 2.4, "best thought 2.40 < imThreshold 3.20: stays silent"),
        ("Chloe", "silent", 1.1, 1.1, "best thought 1.10 < imThreshold 3.20: stays silent"),
    ]
    for agent, action, score, best, reason in rows:
        d = domain.Decision(
            agent=agent,
            step=step,
            trigger="new_message",
            action=action,
            score=score,
            best_score=best,
            threshold=3.2,
            reason=reason,
        )
        bridge.dispatch(events.DecisionMade(decision=d, step=step))


def _inside(child: QWidget, outer: QWidget) -> bool:
    """``child`` is wholly inside ``outer``'s rectangle."""
    return outer.rect().contains(QRect(child.mapTo(outer, QPoint(0, 0)), child.size()))


def _window(qtbot: Any, tmp_path: Path) -> tuple[Any, Any]:
    win, controller = build(db_path=str(tmp_path / "strip.db"), environ={})
    qtbot.addWidget(win)
    win.resize(SMALL)
    win.show()
    _post_short_messages(win)
    _decisions(win)
    _settle()
    return win, controller


@pytest.mark.asyncio
async def test_a_system1_reply_leaves_why_readable(qtbot: Any, tmp_path: Path) -> None:
    win, controller = _window(qtbot, tmp_path)
    strip = win.decisions
    total = sum(win.center_split.sizes())
    win.center_split.moveSplitter(total - 200, 1)  # open the table
    _settle()
    assert strip.table.isVisible()
    h = strip.table.horizontalHeader()
    why = h.sectionSize(decision_strip.WHY)
    assert why >= decision_strip.WHY_AT_LEAST, f"Why is {why} px"
    assert strip.rows()[0][decision_strip.BEST] == "best 3.90 / 3.2 · chosen 2.00", "full text"
    best = strip.table.item(0, decision_strip.BEST)
    fm = strip.table.fontMetrics()
    width = h.sectionSize(decision_strip.BEST)
    for word in best.text().split():  # it may wrap, but never inside a word
        assert fm.horizontalAdvance(word) <= width, (word, width)
    wrapped = fm.boundingRect(QRect(0, 0, width - 6, 0), Qt.TextFlag.TextWordWrap, best.text())
    assert wrapped.height() <= strip.table.rowHeight(0), "every wrapped line shows whole"
    await controller.shutdown()


@pytest.mark.asyncio
async def test_the_title_and_arrows_show_whole_with_a_banner_and_a_question(
    qtbot: Any, tmp_path: Path
) -> None:
    win, controller = _window(qtbot, tmp_path)
    win.conversation.set_human("Maya")
    msg = domain.Message(id=13, speaker="Chloe", text="And you, Maya?", step=13, at="")
    win.bridge.dispatch(events.MessagePosted(message=msg))
    _decisions(win, 14)
    win.messages.show_error("The model server did not answer in 30 s; retrying (2 of 3).")
    _settle()
    _settle()
    strip = win.decisions
    assert win.conversation.card.isVisible()
    for part in (strip.title, strip.back_button, strip.forward_button):
        assert part.isVisible()
        assert _inside(part, strip), f"{part} is clipped: strip {strip.size()}"
    title = strip.title
    assert title.height() >= title.heightForWidth(title.width()), "the title's lines show"
    # Looking back at an earlier trigger: a framed title and the way back to live.
    strip.show_past("step 5 of 14, after message #5 by Ben", None, [])
    strip.set_past_note("2 new messages since")
    _settle()
    _settle()
    for part in (title, strip.back_button, strip.forward_button, strip.live_button):
        assert part.isVisible()
        assert _inside(part, strip), f"{part} is clipped: strip {strip.size()}"
    assert title.height() >= title.heightForWidth(title.width()), "the title's lines show"
    await controller.shutdown()


@pytest.mark.asyncio
async def test_dragging_the_handle_up_gives_the_table_the_room(qtbot: Any, tmp_path: Path) -> None:
    win, controller = _window(qtbot, tmp_path)
    strip = win.decisions
    split = win.center_split
    total = sum(split.sizes())
    split.moveSplitter(total - 320, 1)
    _settle()
    assert strip.height() >= 300
    table, title = strip.table, strip.title
    assert table.isVisible()
    below = strip.height() - (table.y() + table.height())
    assert below <= 4, f"a blank band of {below} px under the table"
    line = max(title.heightForWidth(title.width()), strip.back_button.height())
    assert title.height() <= line + 6, "nor in the title line"
    await controller.shutdown()
