"""The window's layout from 1024×700 to 2560×1440 and at 200 % scaling: pane widths, the
memory text column, thought bubbles and their ✕, pane titles, the question card, and the
conversation rows (no gap, nothing under the scroll bar, no line cut off).

Geometry is checked in device-independent pixels, so the same checks hold at any scaling; a
subprocess runs them again with QT_SCALE_FACTOR=2.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget

from playground import domain, events
from tests.ui.conftest import until
from ui.app import build
from ui.panes.memory.memory_table import COL_TEXT, COL_WEIGHT, MIN_TEXT_WIDTH
from ui.window.window_layout import MIN_CONVERSATION, MIN_MEMORY, MIN_THOUGHTS

ROOT = Path(__file__).resolve().parents[2]
LONG = (
    "Oh, that rings a bell: I walk in the Yorkshire Dales most weekends, and last Saturday we"
    " went up Pen-y-ghent in the rain. What about you, Grace?"
)
MEMORIES = [
    ("fact", "I study octopus behaviour at a small research station."),
    ("fact", "I surf before work almost every morning."),
    ("objective", "I want to find someone to go surfing with this summer."),
    ("interest", "I love trying new recipes with whatever the market has that day."),
    ("knowledge", "Octopuses can open jars and recognise individual people."),
    ("experience", "Last year I spent two months on a boat counting dolphins."),
]


def settle(rounds: int = 4) -> None:
    for _ in range(rounds):
        QApplication.processEvents()


async def settled(rounds: int = 4) -> None:
    """``settle()`` for an async test while the engine has tasks in flight: Qt's events are then
    processed by the qasync loop itself. ``processEvents()`` inside the running test task would
    run another task's wake-up (an embedding arriving from its thread) inside it; asyncio refuses
    it ("Cannot enter into task ... while another task is being executed"), that task never wakes
    again, and the loop's teardown waited for it for ever (the hang of
    ``test_a_real_session_at_1024_is_usable``)."""
    for _ in range(rounds):
        await asyncio.sleep(0.02)


def fill(win: Any, agent: str = "Ana") -> None:
    """A room seen through the engine's events: two participants, memories with a retrieval,
    scored thoughts (one retained) and messages, some long."""
    bridge = win.bridge
    for i, name in enumerate((agent, "Grace")):
        bridge.dispatch(events.ParticipantJoined(name=name, participant_kind="ai", color_index=i))
    for mid, (kind, text) in enumerate(MEMORIES, 1):
        memory = domain.MemoryItem(id=mid, kind=kind, text=text, weight=0.9)
        bridge.dispatch(events.MemoryChanged(agent=agent, change="added", memory=memory))
    for tid in range(1, 7):
        thought = domain.Thought(
            id=tid,
            agent=agent,
            text=f"Hike reminds me: I cook a big fish stew for friends every Sunday ({tid}).",
            system=2,
            stimuli=["message:2", "memory:1"],
            saliency=0.31,
            created_step=tid,
            last_access=tid,
        )
        bridge.dispatch(events.ThoughtFormed(thought=thought))
        ev = domain.Evaluation(
            thought_id=tid,
            step=tid,
            rating=4,
            distribution={4: 1.0},
            reasons_for=["on topic"],
            reasons_against=[],
            expected=4.0,
            silence_factor=1.0,
            score=3.0 + tid / 10,
            method="logprobs",
        )
        bridge.dispatch(events.ThoughtEvaluated(agent=agent, evaluation=ev, retained=tid == 6))
    for mid in range(1, 9):
        text = LONG if mid % 2 else "Same here, in a way."
        msg = domain.Message(
            id=mid, speaker="Grace" if mid % 2 else agent, text=text, step=mid, at=""
        )
        bridge.dispatch(events.MessagePosted(message=msg))
    win.selection.select(agent)
    settle()


def _right_in(widget: QWidget, ancestor: QWidget) -> int:
    return widget.mapTo(ancestor, QPoint(widget.width(), 0)).x()


def measure(win: Any, *, settle_first: bool = True) -> dict[str, Any]:
    """The geometry facts the layout promises, in device-independent pixels (``settle_first``:
    process pending events first, see :func:`settled` for when not to)."""
    if settle_first:
        settle()
    table = win.memory.table
    page = win.thoughts._stack.currentWidget()
    bubbles = win.thoughts.bubbles()
    conv = win.conversation
    vp = conv.list.viewport()
    rows = []
    for w in conv.widgets.values():
        body, header = w.body, w.header
        rows.append(
            {
                "right": _right_in(w, vp),
                "body_height": body.height(),
                "body_needs": body.heightForWidth(body.width()),
                "header_height": header.height(),
                "line": header.fontMetrics().height(),
                "gap": body.geometry().top() - header.geometry().bottom() - 1,
                "spacing": w.layout().spacing(),
            }
        )
    return {
        "window": [win.width(), win.height()],
        "minimum_width": win.minimumSizeHint().width(),
        "dpr": win.devicePixelRatioF(),
        "panes": win.splitter.sizes(),
        "memory_text": table.columnWidth(COL_TEXT),
        "memory_viewport": table.viewport().width(),
        "weight_hidden": table.isColumnHidden(COL_WEIGHT),
        "bubbles": [
            {
                "right": _right_in(b, page.viewport()),
                "delete_right": _right_in(b.delete_button, page.viewport()),
                "delete_visible": b.delete_button.isVisibleTo(page),
            }
            for b in bubbles
        ],
        "page_viewport": page.viewport().width(),
        "memory_title": win.memory.title_label.shown_text(),
        "thoughts_title": win.thoughts.header.title.shown_text(),
        "list_viewport": vp.width(),
        "rows": rows,
    }


def check(m: dict[str, Any], agent: str = "Ana") -> None:
    width = m["window"][0]
    assert m["minimum_width"] <= 1024, "the window fits 1024 px"
    assert m["window"][0] == width
    memory, conversation, thoughts = m["panes"]
    assert memory >= MIN_MEMORY
    assert conversation >= MIN_CONVERSATION
    assert thoughts >= MIN_THOUGHTS
    assert m["memory_text"] >= MIN_TEXT_WIDTH, "the memory text is more than a word per line"
    assert m["memory_text"] >= 0.4 * m["memory_viewport"]
    assert m["bubbles"], "bubbles shown"
    for b in m["bubbles"]:
        assert b["right"] <= m["page_viewport"], "a bubble is cut off"
        assert b["delete_visible"], "✕ off-screen"
        assert b["delete_right"] <= m["page_viewport"], "✕ off-screen"
    assert agent in m["memory_title"], "titles keep the name"
    assert agent in m["thoughts_title"], "titles keep the name"
    for r in m["rows"]:
        assert r["right"] <= m["list_viewport"], "a message runs under the scroll bar"
        assert r["body_height"] >= r["body_needs"], "a message's last line is cut off"
        assert r["header_height"] <= r["line"] + 2, "a blank gap under the header"
        assert r["gap"] <= r["spacing"], "a blank gap between header and body"


@pytest.fixture
def win(qtbot, tmp_path):
    """A window at 1024×700; each (async) test ends with ``await win.controller.shutdown()``."""
    window, _controller = build(db_path=str(tmp_path / "layout.db"), environ={})
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    settle()
    return window


@pytest.mark.asyncio
async def test_1024_by_700_is_usable(win) -> None:
    fill(win)
    win.conversation.set_human("Maya")  # the "✎ note" buttons change every row's header
    settle()
    m = measure(win)
    assert m["window"] == [1024, 700]
    check(m)
    assert m["weight_hidden"], "in a narrow pane the weight gives way to the memory text"
    tip = win.memory.table.horizontalHeaderItem(COL_TEXT).toolTip()
    assert "weight" in tip
    await win.controller.shutdown()


@pytest.mark.asyncio
async def test_large_windows_share_the_space_out(win) -> None:
    fill(win)
    sizes = {}
    for w, h in ((1024, 700), (1440, 900), (1920, 1080), (2560, 1440)):
        win.resize(w, h)
        settle()
        m = measure(win)
        check(m)
        sizes[w] = m
    for small, big in ((1024, 1440), (1440, 1920), (1920, 2560)):
        for i in range(3):
            assert sizes[big]["panes"][i] > sizes[small]["panes"][i], f"pane {i} grows"
        assert sizes[big]["memory_text"] > sizes[small]["memory_text"]
    assert not sizes[1920]["weight_hidden"], "a wide pane shows every column"
    assert sizes[2560]["memory_text"] >= 0.6 * sizes[2560]["memory_viewport"]
    await win.controller.shutdown()


@pytest.mark.asyncio
async def test_long_titles_are_elided_with_a_tooltip(win) -> None:
    name = "Maximilian-Alexander von Hohenzollern-Sigmaringen"
    fill(win, agent=name)
    title = win.thoughts.header.title
    assert title.text() == f"Inner thoughts — {name}"
    assert title.is_elided()
    assert title.toolTip() == title.text()
    assert title.shown_text().endswith("Sigmaringen"), "the end of the name stays in view"
    assert win.memory.title_label.toolTip() == f"Long-term memory — {name}"
    m = measure(win)
    assert m["minimum_width"] <= 1024, "a long name widens nothing"
    assert m["window"][0] == 1024, "a long name widens nothing"
    await win.controller.shutdown()


@pytest.mark.asyncio
async def test_the_question_card_does_not_resize_the_panes(win) -> None:
    fill(win)
    conv = win.conversation
    conv.set_human("Maya")
    settle()
    panes = win.splitter.sizes()
    msg = domain.Message(id=20, speaker="Grace", text="So, Maya — any plans?", step=20, at="")
    win.bridge.dispatch(events.MessagePosted(message=msg))
    settle()
    assert conv.card.isVisible()
    assert win.width() == 1024
    assert win.minimumSizeHint().width() <= 1024
    assert win.splitter.sizes() == panes, "the panes keep their widths"
    card = conv.card
    assert _right_in(card, conv) <= conv.width()
    for b in [*conv.card_buttons, conv.card_close]:
        assert b.isVisibleTo(card)
        assert _right_in(b, card) <= card.width(), f"{b.text()} is cut off"
    check(measure(win))  # the rows fit the shorter list
    conv.card_close.click()
    settle()
    assert not conv.card.isVisible()
    check(measure(win))
    await win.controller.shutdown()


@pytest.mark.asyncio
async def test_a_real_session_at_1024_is_usable(qtbot, tmp_path, minilm) -> None:
    from playground.embedding.cache import CachingEmbedder

    window, controller = build(
        db_path=str(tmp_path / "real.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    room = await controller.new_session(controller.library()[:4], icebreaker="Weekend plans?")
    assert room is not None
    for _ in range(3):
        window.act_step.trigger()
        await until(lambda: window.act_step.isEnabled(), what="the step to end")
    await until(lambda: window.thoughts.bubbles(), what="bubbles")
    await controller.join_as_human("Maya")
    await asyncio.sleep(0.1)
    await settled()  # never processEvents() here: the engine's tasks are still running
    m = measure(window, settle_first=False)
    check(m, agent=window.selection.name)
    await controller.shutdown()


def test_the_layout_holds_at_200_percent_scaling() -> None:
    script = (
        "import json, tempfile\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from tests.ui.test_layout import fill, measure, settle\n"
        "from ui.app import build\n"
        "win, _ = build(db_path=tempfile.mkdtemp() + '/x.db', environ={})\n"
        "win.resize(1024, 700); win.show(); settle()\n"
        "fill(win); win.conversation.set_human('Maya'); settle()\n"
        "print('MEASURE', json.dumps(measure(win)))\n"
    )
    env = {**os.environ, "QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    m = json.loads(next(line for line in out.splitlines() if line.startswith("MEASURE"))[8:])
    assert m["dpr"] == 2.0, "really at 200 %"
    assert m["window"] == [1024, 700]
    check(m)


@pytest.mark.asyncio
async def test_the_decision_strip_leaves_the_reasons_room_at_1024(win) -> None:
    """At 1024 px the policy's full name and the other columns took all but ~90 px: every reason
    ran to 3–4 lines and was cut off. The policy shows as its tag, with the name in a tooltip."""
    from ui.panes.decisions.decision_strip import POLICY, WHY

    fill(win)
    bridge = win.bridge
    bridge.dispatch(events.TriggerFired(step=7, trigger="new_message", message_id=8))
    reason = "the turn belongs to Grace; best score 3.85 < interruptThreshold 4.8"
    for agent, policy in (("Ana", "inner-thoughts"), ("Grace", "next-speaker")):
        d = domain.Decision(
            agent=agent,
            step=7,
            trigger="new_message",
            action="silent",
            reason=reason,
            score=3.85,
            threshold=4.8,
            policy=policy,
        )
        bridge.dispatch(events.DecisionMade(decision=d))
    settle()
    table = win.decisions.table
    assert table.columnWidth(WHY) >= 0.45 * table.viewport().width()
    assert [table.item(r, POLICY).text() for r in range(2)] == ["IT", "NS"]
    assert "next-speaker" in table.item(1, POLICY).toolTip()
    assert [row[POLICY] for row in win.decisions.rows()] == ["inner-thoughts", "next-speaker"]
    await win.controller.shutdown()


def test_decision_reasons_rewrap_when_the_window_narrows(qtbot) -> None:
    """Rows measured at 1440 px kept one line at 1024 and cut the reason short (the Why column
    stretches, and Qt does not report that as a section resize)."""
    from ui.bridge import EngineBridge
    from ui.panes.decisions.decision_strip import DecisionStrip

    bridge = EngineBridge()
    strip = DecisionStrip(bridge)
    qtbot.addWidget(strip)
    strip.resize(700, 200)
    strip.show()
    bridge.dispatch(events.TriggerFired(step=5, trigger="new_message", message_id=5))
    reason = "best score 3.77 < imThreshold 3.95; the System-1 draw did not come up this time"
    for agent in ("Ben", "Chloe"):
        d = domain.Decision(
            agent=agent,
            step=5,
            trigger="new_message",
            action="silent",
            reason=reason,
            score=3.77,
            threshold=3.95,
        )
        bridge.dispatch(events.DecisionMade(decision=d))
    settle()
    strip.resize(420, 200)
    qtbot.waitUntil(lambda: strip.table.rowHeight(0) >= strip.table.sizeHintForRow(0))
    for r in range(2):
        assert strip.table.rowHeight(r) >= strip.table.sizeHintForRow(r), "a reason is cut short"
