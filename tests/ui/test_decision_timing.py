"""The decision strip's title tooltip gives where the shown trigger's time went: its own
breakdown once it has ended (until then the latest timed trigger's, said to be earlier), a past
trigger's in the history view, and in replay at every moment exactly what the live window gave."""

from __future__ import annotations

import html

from playground import domain, events
from playground.history.recording import Recording
from playground.history.snapshot import state_at
from playground.history.timings import breakdown
from playground.storage import SessionReader
from tests.support.timed import SID, STEP_1, STEP_2
from ui.bridge import EngineBridge
from ui.panes.decisions.decision_strip import DecisionStrip


def _strip(qtbot) -> tuple[EngineBridge, DecisionStrip]:
    bridge = EngineBridge()
    strip = DecisionStrip(bridge)
    qtbot.addWidget(strip)
    return bridge, strip


def test_the_tooltip_gives_the_trigger_s_breakdown_once_it_has_ended(qtbot):
    bridge, strip = _strip(qtbot)
    assert strip.title.toolTip() == ""
    bridge.dispatch(events.TriggerFired(trigger="new_message", message_id=1, step=1))
    d = domain.Decision(agent="Ana", step=1, trigger="new_message", action="speak", reason="r")
    bridge.dispatch(events.DecisionMade(decision=d, step=1))
    assert strip.timing == ""  # still running: nothing timed yet
    timed = STEP_1.model_copy(update={"step": 1})
    bridge.dispatch(timed)
    assert strip.timing == breakdown(timed)
    tip = strip.title.toolTip()
    assert tip.startswith("<pre>")  # a table in columns: a fixed font
    assert html.escape("step 1 · new message #1 · 1.83 s · posted #2 ·\ncritical path:") in tip
    assert "Ana System-2 thoughts 0.40 → Ana evaluation 0.41" in tip.replace("\n    →", " →")
    assert "+0.21" in tip  # Ana's System-2 thoughts waited for the agent limit
    # The next trigger runs: the latest timed one is still given, said to be the earlier one.
    bridge.dispatch(events.TriggerFired(trigger="pause", message_id=2, step=2))
    assert strip.timing.startswith("Step 2 has no time breakdown (yet)")
    assert strip.timing.endswith(breakdown(timed))
    # Looking back at a trigger shows its own; back to live, the live one again.
    strip.show_past("Showing step 7", None, [], STEP_2.model_copy(update={"step": 7}))
    assert strip.timing.startswith("step 7 · a pause after #2 · 0.52 s")
    bridge.dispatch(STEP_2.model_copy(update={"step": 2}))  # kept for the way back
    assert strip.timing.startswith("step 7")
    strip.show_live()
    assert strip.timing == breakdown(STEP_2.model_copy(update={"step": 2}))
    strip.reset()
    assert (strip.timing, strip.title.toolTip()) == ("", "")


def test_a_replayed_moment_gives_what_the_live_window_gave_there(qtbot, timed_db):
    """Live, the strip heard every event up to a moment; a replay that jumps there is reset and
    hears the events that rebuild it. Both give the same breakdown: the one the database holds."""
    rec = Recording.load(timed_db, SID)
    live_bridge, live = _strip(qtbot)
    replay_bridge, replayed = _strip(qtbot)
    shown = set()
    for seq in rec.seqs:
        for e in rec.events_between(seq - 1, seq):
            live_bridge.dispatch(e)
        replayed.reset()
        for e in state_at(rec, seq).events:
            replay_bridge.dispatch(e)
        assert replayed.timing == live.timing, f"at event {seq}"
        assert replayed.title.toolTip() == live.title.toolTip()
        shown.add(live.timing)
    recorded = SessionReader(timed_db).trigger_timings(SID)
    assert {breakdown(t) for t in recorded} <= shown
    assert live.timing == breakdown(recorded[-1])
