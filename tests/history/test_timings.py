"""Trigger timings as text (what ``show`` and the window print) and what replay and the history
view find of them at any moment."""

from __future__ import annotations

from playground.history.recording import Recording
from playground.history.snapshot import SessionHistory, state_at
from playground.history.timings import (
    breakdown,
    critical_path,
    head_lines,
    stage_table,
    summary_line,
)
from playground.storage import SessionReader
from tests.support.timed import SID, STEP_1, STEP_2, THOUGHT


def test_the_summary_line_gives_the_total_and_the_critical_path_in_order():
    assert summary_line(STEP_1.model_copy(update={"step": 4})) == (
        "step 4 · new message #1 · 1.83 s · posted #2 · critical path: interpretation 0.41"
        " → Ana System-2 thoughts 0.40 → Ana evaluation 0.41 → floor 0.00 → Ana articulation 0.40"
    )
    assert summary_line(STEP_2.model_copy(update={"step": 5})) == (
        "step 5 · a pause after #2 · 0.52 s · everyone stayed silent · critical path:"
        " turn type 0.12 → Bo decision 0.40"
    )
    assert [s.stage for s in critical_path(STEP_2)] == ["turn type", "decision"]


def test_the_table_has_a_line_per_stage_in_the_order_they_started():
    head, *rows = stage_table(STEP_1)
    assert head.split() == ["agent", "stage", "ready", "started", "waited", "took", "in", "calls", "calls", "detail"]  # fmt: skip
    assert [r.split()[:3] for r in rows] == [
        ["*", "interpretation", "0.00"],
        ["Bo", "System-2", "thoughts"],
        ["*", "Ana", "System-2"],
        ["*", "Ana", "evaluation"],
        ["*", "floor", "1.43"],
        ["*", "Ana", "articulation"],
    ]
    # Ana's System-2 thoughts were ready at 0.41 and started at 0.62: they waited 0.21.
    assert rows[2].split()[4:10] == ["0.41", "0.62", "+0.21", "0.40", "0.39", "1"]
    # A thought's text is cut to one short line; a stage without model calls shows none.
    assert rows[3].endswith(THOUGHT[:47] + "…")
    assert rows[4].split() == ["*", "floor", "1.43", "1.43", "0.00"]
    assert len({len(r) - len(r.lstrip()) for r in rows if r.startswith(" ")}) == 1
    heading = head_lines(STEP_1)
    assert breakdown(STEP_1).splitlines()[len(heading) : -1] == stage_table(STEP_1)
    assert all(len(line) <= 100 for line in heading)


def test_replay_and_history_find_a_trigger_s_timing_as_recorded(timed_db):
    rec = Recording.load(timed_db, SID)
    assert rec.timing(1) == SessionReader(timed_db).trigger_timings(SID)[0]
    assert rec.timing(3) is None
    history = SessionHistory.over(rec)
    # The history view shows a finished trigger with its timing, recorded after its message.
    assert history.at_message(2).timing == rec.timing(1)
    assert history.at_trigger(1).timing == rec.timing(2)
    # A rebuilt moment keeps the latest timing before it (the decision strip shows it until the
    # current trigger's own arrives), not the earlier ones.
    kept = [e.step for e in state_at(rec, rec.last).events if e.kind == "trigger_timed"]
    assert kept == [2]
    fired_2 = rec.seqs[rec.kinds.index("trigger_fired", rec.kinds.index("trigger_timed"))]
    kept = [e.step for e in state_at(rec, fired_2).events if e.kind == "trigger_timed"]
    assert kept == [1]
