"""Replay from the event log, headless: moments, marks of every kind, rebuilds, forks, bad logs."""

from __future__ import annotations

import pytest

from playground import errors, events
from playground.history.fork import state_at
from playground.history.recording import Recording
from tests.conftest import offline_settings
from tests.support.rooms import build, library

pytestmark = pytest.mark.asyncio


async def _session_with_everything(embedder, db):
    """An interrupted session with a human, notes, a forced thought, an error and silences."""
    settings = offline_settings(seed=3, max_silent_steps=50)
    room, _, seen = await build(settings, embedder, library(3), db=db)
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    for _ in range(3):
        await room.step_once()
    room.add_human("Zoe")
    mine = await room.post_human_message("Zoe", "I went sailing. Ana, have you ever sailed?")
    room.annotate("Zoe", mine.id, "I want Ana to talk")
    await room.step_once()
    agent = room.agents[1]
    unsaid = next(t for t in agent.reservoir.thoughts.values() if t.expressed_in is None)
    await room.force_express(agent.name, unsaid.id)
    room.emit(events.ErrorOccurred(where="Ben", message="the server said 500", error_type="X"))
    for _ in range(2):
        await room.step_once()
    room.finish("interrupted", "stopped by the user")
    return room, seen


async def test_moments_and_marks_cover_every_kind(embedder, db):
    room, seen = await _session_with_everything(embedder, db)
    rec = Recording.load(db, room.session_id[:12])  # a unique prefix is enough
    assert rec.session["status"] == "interrupted"
    messages = [m for m in rec.moments if m.kind == "message"]
    assert [m.message_id for m in messages] == [m.id for m in room.messages]
    assert rec.first == messages[0].seq
    assert rec.last == max(e.seq for e in seen if e.kind != "participant_state_changed")
    kinds = {m.kind for m in rec.marks}
    assert {"human", "note", "forced", "error"} <= kinds
    forced = next(m for m in rec.marks if m.kind == "forced")
    assert str(room.messages[-1].id) in forced.label or any(
        str(m.id) in forced.label for m in room.messages
    )
    decisions = [m for m in rec.moments if m.kind == "decision"]
    assert decisions
    assert all(rec.kinds[rec.seqs.index(d.seq)] == "decision_made" for d in decisions)
    # Silences: a trigger whose decisions are followed by another trigger without a message.
    for mark in (m for m in rec.marks if m.kind == "silence"):
        nxt = rec.next_moment(mark.seq)
        assert nxt is None or nxt.kind == "decision"
    # Stepping: next/previous by kind.
    second = rec.next_moment(rec.first, "message")
    assert second is not None
    assert second.message_id == 2
    previous = rec.previous_moment(second.seq, "message")
    assert previous is not None
    assert previous.seq == rec.first
    assert rec.messages_shown(second.seq) == 2


async def test_rebuild_keeps_only_the_current_trigger_and_each_agents_latest_retrieval(
    embedder, db
):
    room, _ = await _session_with_everything(embedder, db)
    rec = Recording.load(db, room.session_id)
    seq = [m for m in rec.moments if m.kind == "decision"][-1].seq
    rebuilt = rec.rebuild(seq)
    triggers = [e for e in rebuilt if e.kind == "trigger_fired"]
    assert len(triggers) == 1, "only the current trigger's decisions show"
    retrieved = [e.agent for e in rebuilt if e.kind == "memories_retrieved"]
    assert len(retrieved) == len(set(retrieved)), "one retrieval per agent: its latest"
    # Everything durable is there: every message and every thought formed up to that moment.
    assert [e.message.id for e in rebuilt if e.kind == "message_posted"] == list(
        range(1, rec.messages_shown(seq) + 1)
    )
    formed = {e.thought.id for e in rec.events_between(0, seq) if e.kind == "thought_formed"}
    assert formed == {e.thought.id for e in rebuilt if e.kind == "thought_formed"}


async def test_fork_state_is_the_parents_state_at_that_moment(embedder, db):
    room, _ = await _session_with_everything(embedder, db)
    rec = Recording.load(db, room.session_id)
    at = [m for m in rec.moments if m.kind == "message"][2]
    st = state_at(rec, at.seq)
    assert [m.id for m in st.messages] == [1, 2, 3]
    assert set(st.agents) == {a.name for a in room.agents}
    assert st.humans == []  # Zoe joined later
    expressed = {t.expressed_in for t in st.thoughts.values() if t.expressed_in}
    assert expressed <= {1, 2, 3}
    for agent in room.agents:
        assert {m.id for m in st.memories[agent.name].values()} <= set(agent.memory.items)


async def test_a_session_without_events_or_with_a_damaged_event_says_so(embedder, db):
    room, _ = await _session_with_everything(embedder, db)
    with pytest.raises(errors.SessionNotFound):
        Recording.load(db, "no-such-id")
    with db.atomic():
        db.execute(
            "UPDATE events SET data = '{broken' WHERE session_id = ? AND kind = 'message_posted'",
            [room.session_id],
        )
    with pytest.raises(errors.PlaygroundError, match="damaged"):
        Recording.load(db, room.session_id)
    with db.atomic():  # well-formed JSON that is not an event
        db.execute(
            'UPDATE events SET data = \'{"kind": "message_posted"}\' WHERE session_id = ?'
            " AND kind = 'message_posted'",
            [room.session_id],
        )
    with pytest.raises(errors.PlaygroundError, match="cannot be read"):
        Recording.load(db, room.session_id)
    with db.atomic():
        db.execute("DELETE FROM events WHERE session_id = ?", [room.session_id])
    with pytest.raises(errors.PlaygroundError, match="no event log"):
        Recording.load(db, room.session_id)


async def test_thought_ledgers_equal_the_fold_of_every_thought_event(embedder, db, monkeypatch):
    """A jump starts from the nearest kept ledger; the result must be what folding every thought
    event from the start gives, at any moment, on either side of a checkpoint."""
    from playground.history import recording as replay
    from playground.history.ledger import ThoughtLedger

    monkeypatch.setattr(replay, "LEDGER_EVERY", 7)  # many checkpoints in a short session
    room, _ = await _session_with_everything(embedder, db)
    rec = Recording.load(db, room.session_id)
    assert len(rec._thought_seqs) > 3 * 7, "the session crosses several checkpoints"
    for moment in [*rec.moments[::-1], *rec.moments]:  # backwards first: checkpoints made late
        expected = ThoughtLedger()
        expected.apply(rec.rebuild(moment.seq))
        got = rec.thought_ledger(moment.seq)
        assert got.thoughts == expected.thoughts
        assert got.evaluations == expected.evaluations
        assert got.retained == expected.retained
        # A copy is the caller's: changing it leaves the kept ledgers alone.
        for evs in got.evaluations.values():
            for lst in evs.values():
                lst.clear()
        assert rec.thought_ledger(moment.seq).evaluations == expected.evaluations
    assert not any(e.kind.startswith("thought_") for e in rec.rebuild(rec.last, thoughts=False))


async def test_a_fork_keeps_the_parents_times_and_says_where_it_begins(embedder, db):
    """Copied messages, thoughts, their latest evaluations keep the parent's times (not the fork's);
    the fork records how many messages it carried over, and replay and show mark where it
    begins."""
    import argparse
    import io

    from playground.cli import sessions as cli
    from playground.history import fork
    from playground.storage import SessionReader

    settings = offline_settings(seed=3, max_turns=7, max_silent_steps=50)
    room, engine, _ = await build(settings, embedder, library(3), db=db)
    from playground.room import loops

    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    rec = Recording.load(db, room.session_id)
    at = rec.message_seq[3]
    parent = SessionReader(db).load(room.session_id)
    child, _ = await fork.fork(
        settings, engine, recording=rec, seq=at, db=db, bus=events.EventBus()
    )
    await loops.run_simulation(child)
    got = SessionReader(db).load(child.session_id)

    def times(data, table, key, stamp, upto=None):
        return {r[key]: r[stamp] for r in data[table] if upto is None or r[key] <= upto}

    assert times(got, "messages", "id", "posted_at", 3) == times(
        parent, "messages", "id", "posted_at", 3
    )
    assert [m.at for m in child.messages[:3]] == [m.at for m in room.messages[:3]]
    assert got["session"]["created_at"] > parent["messages"][2]["posted_at"]
    assert all(m["posted_at"] >= got["session"]["created_at"] for m in got["messages"][3:])
    carried = fork.state_at(rec, at).thoughts
    parent_thoughts = {t["id"]: t for t in parent["thoughts"]}
    child_thoughts = {t["id"]: t for t in got["thoughts"]}
    assert carried
    assert all(child_thoughts[i]["created_at"] == parent_thoughts[i]["created_at"] for i in carried)
    for i in carried:  # the latest evaluation before the fork moment, with its time
        step = rec.steps[rec.seqs.index(at)]
        before = [e for e in parent_thoughts[i]["evaluations"] if e["step"] <= step]
        if before:
            assert child_thoughts[i]["evaluations"][0]["evaluated_at"] == before[-1]["evaluated_at"]
    assert (got["session"]["fork_message"], got["session"]["fork_messages"]) == (3, 3)
    forked = Recording.load(db, child.session_id)
    (mark,) = [m for m in forked.marks if m.kind == "fork"]
    assert mark.seq == forked.message_seq[3]
    assert "begins after #3" in mark.label
    out = io.StringIO()
    cli.show(
        argparse.Namespace(db=str(db_file(db)), id=child.session_id, json=False, timings=False), out
    )
    text = out.getvalue()
    assert f"Fork of {room.session_id} at its message #3" in text
    assert text.index("[ 3]") < text.index(fork.BEGINS) < text.index("[ 4]")


def db_file(db):
    return db.execute("PRAGMA database_list").fetchall()[0][2]


async def test_two_rooms_started_in_the_same_second_get_different_ids(embedder, db, monkeypatch):
    """Regression: a 4-hex suffix drawn twice in one second failed an experiment shard with
    "UNIQUE constraint failed: sessions.id" at its first write."""
    import datetime as dt
    import secrets

    from playground import factory

    draws = iter(["e420", "e420", "beef"])
    monkeypatch.setattr(secrets, "token_hex", lambda n=None: next(draws))
    monkeypatch.setattr(
        dt,
        "datetime",
        type(
            "Frozen",
            (dt.datetime,),
            {
                "now": classmethod(
                    lambda cls, tz=None: dt.datetime(2026, 11, 25, 22, 32, 35, tzinfo=tz)
                )
            },
        ),
    )
    engine = await factory.build_engine(offline_settings(), embedder=embedder)
    first, _ = factory.open_room(offline_settings(), engine, db=db)
    second, _ = factory.open_room(offline_settings(), engine, db=db)
    assert (first.session_id, second.session_id) == ("20261125-223235-e420", "20261125-223235-beef")
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2
