"""The read side (playground/history/snapshot.py): the trigger behind each message, its snapshot, and a
session read while it is being written."""

from __future__ import annotations

import pytest

from playground import errors, events
from playground.history.recording import Recording
from playground.history.snapshot import SessionHistory, state_at
from playground.storage.database import open_database
from tests.conftest import offline_settings
from tests.support.rooms import build, library

pytestmark = pytest.mark.asyncio


async def _session(embedder, db):
    """Icebreaker, agents' messages, a person's message, a forced thought, then more steps."""
    settings = offline_settings(seed=3, max_silent_steps=50)
    room, _, seen = await build(settings, embedder, library(3), db=db)
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    for _ in range(4):
        await room.step_once()
    room.add_human("Zoe")
    await room.post_human_message("Zoe", "I went sailing. Ana, have you ever sailed?")
    await room.step_once()
    agent = room.agents[1]
    unsaid = next(t for t in agent.reservoir.thoughts.values() if t.expressed_in is None)
    forced = await room.force_express(agent.name, unsaid.id)
    for _ in range(3):
        await room.step_once()
    room.finish("finished", "enough")
    return room, seen, forced


async def test_each_message_shows_the_trigger_that_produced_it(embedder, db):
    room, seen, forced = await _session(embedder, db)
    h = SessionHistory.load(db, room.session_id)
    fired = [e for e in seen if e.kind == "trigger_fired"]
    assert [t.seq for t in h.triggers] == [e.seq for e in fired]
    origins = {m.id: h.origin(m.id) for m in room.messages}
    assert origins[1] == "icebreaker"
    assert origins[forced.id] == "forced"
    assert [m.id for m in room.messages if origins[m.id] == "human"] == [
        m.id for m in room.messages if m.speaker == "Zoe"
    ]
    spoken = [m for m in room.messages if m.kind == "ai" and m.id != 1 and m.id != forced.id]
    assert spoken
    assert all(origins[m.id] == "trigger" for m in spoken)
    for m in spoken:
        snap = h.at_message(m.id)
        t = snap.trigger
        assert t is not None
        assert t.produced == m.id
        # The trigger is the last one fired before the message, and its decisions are the
        # ones the room made then: the speaker among those who decided to speak.
        before = [e for e in fired if e.seq < snap.seq]
        assert t.seq == before[-1].seq
        assert t.step == m.step
        made = [e.decision for e in seen if e.kind == "decision_made" and t.seq < e.seq < snap.seq]
        assert list(snap.decisions) == made
        assert any(d.agent == m.speaker and d.action == "speak" for d in snap.decisions)
        retrieved = {
            e.agent: tuple(e.stimuli)
            for e in seen
            if e.kind == "memories_retrieved" and t.seq < e.seq < snap.seq
        }
        assert snap.retrieved == retrieved
        assert retrieved
        # The thoughts as they stood: the one said is marked as said in this message.
        said = snap.state.thoughts.thoughts[m.speaker][m.thought_id]
        assert said.expressed_in == m.id
        later = [x for x in room.messages if x.id > m.id]
        assert all(x.text not in {y.text for y in snap.state.messages} for x in later)
        assert snap.describe().startswith(f"Showing the trigger of message #{m.id} (step {m.step}")
    # A message no trigger produced says so, and shows the state right after it.
    ice = h.at_message(1)
    assert ice.trigger is None
    assert not ice.decisions
    assert ice.describe() == "Message #1 is the icebreaker: no trigger produced it"
    f = h.at_message(forced.id)
    assert f.trigger is None
    assert "forced by you" in f.describe()
    assert f.state.thoughts.thoughts[forced.speaker][forced.thought_id].expressed_in == forced.id
    zoe = next(m for m in room.messages if m.speaker == "Zoe")
    assert "written by Zoe (a person)" in h.at_message(zoe.id).describe()


async def test_silent_triggers_and_stepping_by_trigger(embedder, db):
    room, _seen, _ = await _session(embedder, db)
    h = SessionHistory.load(db, room.session_id)
    for t in h.triggers:
        snap = h.at_trigger(t.index)
        assert snap.trigger == t
        assert snap.message_id is None
        if t.produced is None and not t.speakers:
            assert snap.describe().endswith("everyone stayed silent")
            assert snap.decisions
            assert all(d.action == "silent" for d in snap.decisions)
    # Clamped at both ends; the trigger before a position.
    assert h.at_trigger(-5).trigger == h.triggers[0]
    assert h.at_trigger(10_000).trigger == h.triggers[-1]
    assert h.latest_trigger_at(h.triggers[2].seq + 1) == h.triggers[2]
    with pytest.raises(errors.PlaygroundError, match="no message #999"):
        h.at_message(999)


async def test_a_live_session_is_read_while_it_is_written(embedder, db_path):
    writer = open_database(db_path)
    settings = offline_settings(seed=5, max_silent_steps=50)
    room, _, seen = await build(settings, embedder, library(3), db=writer)
    await room.post(room.agents[0].name, "Any plans for the summer?", origin="icebreaker")
    await room.step_once()
    reader = open_database(db_path)  # another connection, as another process would read it
    h = SessionHistory.load(reader, room.session_id)
    known = len(room.messages)
    assert h.recording.session["status"] == "running"
    for _ in range(4):
        await room.step_once()
    new = [m for m in room.messages if m.id > known]
    assert new
    with pytest.raises(errors.PlaygroundError, match=f"no message #{new[-1].id} \\(yet\\)"):
        h.at_message(new[-1].id)
    assert h.refresh() > 0
    assert h.refresh() == 0  # nothing new since
    assert [t.seq for t in h.triggers] == [e.seq for e in seen if e.kind == "trigger_fired"]
    for m in new:
        assert h.at_message(m.id).trigger is not None
    # The same answers as a history read from scratch, and as replay's index.
    fresh = SessionHistory.load(reader, room.session_id)
    assert fresh.triggers == h.triggers
    rec = Recording.load(reader, room.session_id)
    assert (rec.seqs, rec.moments, rec.message_seq) == (
        h.recording.seqs,
        h.recording.moments,
        h.recording.message_seq,
    )
    # A trigger in progress: what has been written of it so far.
    partial: list[int] = []

    def snapshot_mid_trigger(e: events.Event) -> None:
        if e.kind == "memories_retrieved" and not partial:
            h.refresh()
            partial.append(h.triggers[-1].seq_shown)

    room.bus.subscribe(snapshot_mid_trigger)
    await room.step_once()
    assert partial
    assert partial[0] < h.triggers[-1].seq + 100
    h.refresh()
    assert h.triggers[-1].seq_shown > partial[0]
    room.finish("finished", "done")
    h.refresh()
    assert h.recording.session["status"] == "finished"
    writer.close()
    reader.close()


async def test_state_at_is_what_replay_rebuilds(embedder, db):
    room, _, _ = await _session(embedder, db)
    rec = Recording.load(db, room.session_id)
    for seq in (rec.first, rec.moments[5].seq, rec.last):
        st = state_at(rec, seq)
        assert list(st.events) == rec.rebuild(seq, thoughts=False)
        assert st.thoughts.thoughts == rec.thought_ledger(seq).thoughts
        assert [m.id for m in st.messages] == list(range(1, rec.messages_shown(seq) + 1))
