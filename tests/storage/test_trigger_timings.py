"""Trigger timings in the database: the recorder keeps each ``trigger_timed`` event in the event
log (no table of its own) and :meth:`SessionReader.trigger_timings` reads them back by step."""

from __future__ import annotations

import pytest

from playground import errors
from playground.storage import SessionReader
from tests.support.timed import SID, STEP_1, STEP_2

UNSTAMPED = {"session_id": "", "seq": 0, "step": 0, "at": ""}


def test_the_recorder_keeps_each_timing_in_the_event_log_and_the_reader_reads_them_by_step(
    timed_db,
):
    got = SessionReader(timed_db).trigger_timings(SID[:12])  # a unique prefix is enough
    assert [(t.step, t.session_id) for t in got] == [(1, SID), (2, SID)]
    assert [t.model_copy(update=UNSTAMPED) for t in got] == [STEP_1, STEP_2]
    kinds = [r[0] for r in timed_db.execute("SELECT kind FROM events ORDER BY seq")]
    assert kinds.count("trigger_timed") == 2


def test_a_damaged_timing_is_named(timed_db):
    with timed_db.conn:
        timed_db.execute(
            "UPDATE events SET data = json_set(data, '$.total', 'slow') WHERE kind = 'trigger_timed'"
            " AND step = 2"
        )
    with pytest.raises(errors.PlaygroundError, match=r"event \d+ \(trigger_timed\) of session"):
        SessionReader(timed_db).trigger_timings(SID)


def test_a_session_without_an_event_log_has_no_timings(timed_db):
    with timed_db.conn:
        timed_db.execute("DELETE FROM events")
    assert SessionReader(timed_db).trigger_timings(SID) == []


def test_an_unknown_session_is_refused(timed_db):
    with pytest.raises(errors.SessionNotFound):
        SessionReader(timed_db).trigger_timings("nope")
