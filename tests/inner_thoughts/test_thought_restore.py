"""Undoing a thought's deletion: the engine restores it, the database undeletes the row, replay
and fork fold the restore."""

from __future__ import annotations

import pytest

from playground import errors, events
from playground.history.fork import state_at
from playground.history.recording import Recording
from tests.conftest import offline_settings
from tests.support.rooms import build, library, of

pytestmark = pytest.mark.asyncio


async def _room_with_thoughts(embedder, db):
    room, _, seen = await build(offline_settings(seed=5), embedder, library(3), db=db)
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    await room.step_once()
    agent = next(a for a in room.agents if a.reservoir.unexpressed())
    return room, seen, agent, agent.reservoir.unexpressed()[0]


def _deleted_flag(db, session_id: str, thought_id: int) -> int:
    return db.execute(
        "SELECT deleted FROM thoughts WHERE session_id = ? AND id = ?", [session_id, thought_id]
    ).fetchone()[0]


async def test_a_deleted_thought_comes_back_whole_and_its_row_is_undeleted(embedder, db):
    room, seen, agent, thought = await _room_with_thoughts(embedder, db)
    pool_before = agent.reservoir.pool(embedder.dim).refs
    room.delete_thought(agent.name, thought.id)
    assert thought.id not in agent.reservoir
    assert _deleted_flag(db, room.session_id, thought.id) == 1

    back = room.restore_thought(agent.name, thought.id)

    assert back == thought
    assert agent.reservoir.get(thought.id) == thought
    # Retrievable again, with its vector.
    assert agent.reservoir.pool(embedder.dim).refs == pool_before
    assert _deleted_flag(db, room.session_id, thought.id) == 0
    restored = of(events.ThoughtRestored, seen)
    assert [(e.agent, e.thought.id) for e in restored] == [(agent.name, thought.id)]
    stored = db.execute(
        "SELECT kind FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1", [room.session_id]
    ).fetchone()[0]
    assert stored == "thought_restored"
    # The next trigger may re-score it like any retained thought.
    await room.step_once()


async def test_only_a_deleted_thought_can_be_restored_and_only_once(embedder, db):
    room, _, agent, thought = await _room_with_thoughts(embedder, db)
    with pytest.raises(errors.PlaygroundError, match=f"no deleted thought {thought.id}"):
        room.restore_thought(agent.name, thought.id)
    room.delete_thought(agent.name, thought.id)
    room.restore_thought(agent.name, thought.id)
    with pytest.raises(errors.PlaygroundError, match="to restore"):
        room.restore_thought(agent.name, thought.id)


async def test_replay_and_fork_fold_the_restore(embedder, db):
    room, seen, agent, thought = await _room_with_thoughts(embedder, db)
    evaluations_before = [
        e.evaluation
        for e in of(events.ThoughtEvaluated, seen)
        if e.evaluation.thought_id == thought.id
    ]
    assert evaluations_before
    room.delete_thought(agent.name, thought.id)
    deleted_at = of(events.ThoughtDeleted, seen)[-1].seq
    room.restore_thought(agent.name, thought.id)
    room.finish("interrupted", "stopped by the user")

    rec = Recording.load(db, room.session_id)
    gone = rec.thought_ledger(deleted_at)
    assert thought.id not in gone.thoughts[agent.name]
    assert thought.id not in gone.evaluations.get(agent.name, {})
    after = rec.thought_ledger(rec.last)
    assert after.thoughts[agent.name][thought.id].text == thought.text
    assert after.evaluations[agent.name][thought.id] == evaluations_before  # its history is back
    # A checkpoint copy taken between the deletion and the restore keeps what an undo needs.
    assert gone.copy().deleted[agent.name][thought.id][0].id == thought.id

    assert thought.id not in state_at(rec, deleted_at).thoughts
    forked = state_at(rec, rec.last)
    assert forked.thoughts[thought.id].text == thought.text
    assert forked.evaluations[thought.id].evaluation == evaluations_before[-1]
