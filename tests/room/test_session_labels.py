"""What a session is labelled with: its condition as the seats change, a person's policy, when
everyone left, and why it ended (issue 34 §1). Real rooms, the offline engine, real SQLite."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from playground import events
from playground.cli import main as cli
from playground.rating.plan import PlanStore
from playground.report import stats
from playground.room import loops
from tests.conftest import offline_settings
from tests.support.rooms import build, library, of


def _show(db_path: Path, sid: str, *flags: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["show", sid, "--db", str(db_path), *flags], out=out, err=err) == 0, (
        err.getvalue()
    )
    return out.getvalue()


def _logged(db: Any, sid: str, kind: str) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT data FROM events WHERE session_id = ? AND kind = ? ORDER BY seq", [sid, kind]
    ).fetchall()
    return [json.loads(r[0]) for r in rows]


def _condition(db: Any, sid: str) -> str:
    return str(db.execute("SELECT condition FROM sessions WHERE id = ?", [sid]).fetchone()[0])


def _changes(seen: list[Any]) -> list[tuple[int, str, str]]:
    return [(e.step, e.old, e.new) for e in of(events.ConditionChanged, seen)]


async def _with_zoe(embedder: Any, db: Any, people: list[Any], **kw: Any) -> tuple[Any, list[Any]]:
    """A recorded room of ``people`` that Zoe has joined; the room and the events it published."""
    room, _, seen = await build(offline_settings(), embedder, people, db=db, **kw)
    room.add_human("Zoe")
    return room, seen


async def _talk(room: Any, steps: int) -> None:
    """Zoe speaks, then the room takes ``steps`` steps (agents answer or stay silent)."""
    await room.post_human_message("Zoe", "What did everyone do last weekend?")
    for _ in range(steps):
        await room.step_once()


@pytest.mark.asyncio
async def test_a_reactive_agent_seated_at_step_3_makes_the_session_mixed(embedder, db, db_path):
    people = library(3)
    room, seen = await _with_zoe(embedder, db, people[:2])
    await _talk(room, 3)
    assert room.step == 3
    await room.add_agent(people[2], policy="reactive")
    sid = room.session_id
    assert _condition(db, sid) == "mixed"
    assert _changes(seen) == [(3, "inner-thoughts", "mixed")]
    assert of(events.ConditionChanged, seen)[0].why == f"{people[2].name} (reactive) joined"
    assert [(e["step"], e["old"], e["new"]) for e in _logged(db, sid, "condition_changed")] == [
        (3, "inner-thoughts", "mixed")
    ]
    room.finish("finished", "done")
    text = _show(db_path, sid)
    assert "condition mixed" in text
    assert "Condition: inner-thoughts → mixed at step 3" in text
    data = json.loads(_show(db_path, sid, "--json"))
    assert data["session"]["condition"] == "mixed"
    assert [(c["step"], c["old"], c["new"]) for c in data["condition_changes"]] == [
        (3, "inner-thoughts", "mixed")
    ]
    # The report groups sessions by condition: it sees the new one.
    report = stats.build_report(db, session_ids=[sid], agreement_options={"skip": True})
    assert report.conditions == ["mixed"]
    # So do rating plans: a pairwise plan pairs it with a pure Inner Thoughts session (two
    # sessions of one condition would give no pair at all).
    pure, _ = await _with_zoe(embedder, db, people[:2])
    await _talk(pure, 1)
    pure.finish("finished", "done")
    plan = PlanStore(db).create_plan(
        "mixed vs pure", "pairwise", ["Rita"], 1, sessions=[sid, pure.session_id]
    )
    pair = PlanStore(db).assignments(plan.id)[0]
    assert {pair.session_a, pair.session_b} == {sid, pure.session_id}


@pytest.mark.asyncio
async def test_a_policy_change_makes_it_mixed_and_a_departure_does_not_undo_it(embedder, db):
    people = library(2)
    room, seen = await _with_zoe(embedder, db, people)
    await _talk(room, 1)
    room.set_policy(people[1].name, "reactive")
    await _talk(room, 1)
    # The reactive agent took part: the conversation stays a mixed one after it leaves.
    room.remove_participant(people[1].name)
    assert _changes(seen) == [(1, "inner-thoughts", "mixed")]
    assert _condition(db, room.session_id) == "mixed"


@pytest.mark.asyncio
async def test_seats_changed_before_the_first_message_relabel_without_flickering(embedder, db):
    people = library(3)
    policies = {people[0].name: "inner-thoughts", people[1].name: "reactive"}
    room, seen = await _with_zoe(embedder, db, people[:2], policies=policies)
    # Seating a mixed room one agent at a time records no change, nor does a change made before
    # anyone spoke that keeps the condition.
    assert room.condition == "mixed"
    assert not of(events.ConditionChanged, seen)
    room.remove_participant(people[1].name)  # before the first message: the seats decide
    await room.post_human_message("Zoe", "Hello")
    assert _changes(seen) == [(0, "mixed", "inner-thoughts")]
    assert _condition(db, room.session_id) == "inner-thoughts"


@pytest.mark.asyncio
async def test_a_person_has_no_policy_and_everyone_leaves_when_the_session_ends(embedder, db):
    people = library(2)
    room, _ = await _with_zoe(embedder, db, people)
    await _talk(room, 1)
    room.remove_participant(people[0].name)
    left_early = db.execute(
        "SELECT left_at FROM participants WHERE name = ?", [people[0].name]
    ).fetchone()[0]
    room.finish("interrupted", "stopped by the user")
    rows = {
        r[0]: (r[1], r[2], r[3])
        for r in db.execute("SELECT name, kind, policy, left_at FROM participants").fetchall()
    }
    assert rows["Zoe"][:2] == ("human", "human")
    assert rows[people[1].name][:2] == ("ai", "inner-thoughts")
    ended = db.execute("SELECT finished_at FROM sessions").fetchone()[0]
    assert rows["Zoe"][2] == ended
    assert rows[people[1].name][2] == ended
    assert rows[people[0].name][2] == left_early  # who left before keeps their own time


@pytest.mark.asyncio
async def test_show_prints_reasons_reactions_and_card_labels(embedder, db, db_path):
    room, _, _ = await build(offline_settings(), embedder, library(2), db=db)
    room.add_human("Zoe")
    mine = await room.post_human_message("Zoe", "What did everyone do last weekend?")
    theirs = await room.post(library(2)[0].name, "I went hiking in the hills.")
    room.annotate("Zoe", mine.id, "to get everyone talking")
    room.annotate("Zoe", theirs.id, "nice, I like hiking too")
    room.record_label("Zoe", theirs.id, "Was this a good moment to speak?", "yes")
    room.finish("finished", "done")
    text = _show(db_path, room.session_id)
    assert "      Zoe's reason: to get everyone talking" in text
    assert "      Zoe's reaction: nice, I like hiking too" in text
    assert "      Zoe answered “Was this a good moment to speak?”: yes" in text
    assert "Zoe (human)" in text


@pytest.mark.asyncio
async def test_a_person_lifts_the_turn_cap_and_the_end_reason_says_so(embedder, db, db_path):
    settings = offline_settings()
    settings.room.max_turns = 2
    room, _, _ = await build(settings, embedder, library(1), db=db)
    room.add_human("Zoe")
    loop = asyncio.ensure_future(loops.run_realtime(room))
    await asyncio.sleep(0)  # the loop starts, as the window's does before anyone can type
    for i in range(4):
        await room.post_human_message("Zoe", f"Message number {i + 1} from me")
    # Stopped as the window stops it: the session is marked first, then its loop is cancelled.
    room.finish("interrupted", "stopped by the user")
    room.stop()
    loop.cancel()
    await asyncio.gather(loop, return_exceptions=True)
    assert len(room.messages) >= 4
    reason = db.execute("SELECT end_reason FROM sessions").fetchone()[0]
    assert reason.startswith("stopped by the user")
    assert "the turn cap (2) does not apply while a person takes part" in reason
    assert f"{len(room.messages)} messages" in reason
    assert f"interrupted ({reason})" in _show(db_path, room.session_id)
