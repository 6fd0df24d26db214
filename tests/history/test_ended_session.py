"""Issue 10, "the window must never say something untrue", in the engine: an ended session cannot
change, a forced message is marked (event, database row, export, `show`) and says the clicked
thought, offline and through a language model."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
from contextlib import closing

import pytest

from playground import domain, errors, events
from playground.cli import main as cli
from playground.cognition.base import Articulation, Context
from playground.cognition.offline import OfflineCognition
from playground.cognition.offline.repeats import words
from playground.cognition.offline.spoken import spoken
from playground.settings import PRESETS
from playground.storage import SessionReader, open_database
from playground.storage.schema import MIGRATIONS
from tests.conftest import offline_settings, server_settings
from tests.support.rooms import build, library, of

pytestmark = pytest.mark.asyncio
QUIET = PRESETS["simulation"].model_copy(
    update={"im_threshold": 5.0, "interrupt_threshold": 5.0, "system1_prob": 0.0}
)
#: Words of the inner voice that a spoken thought may drop ("Ask Ben more…" → "Ben, tell me…").
INNER_VOICE = {"i", "could", "share", "that", "ask", "more", "others", "still", "on", "my", "mind"}
INNER_VOICE |= {"honestly", "from", "should", "say", "something", "the", "a", "about", "what"}


async def _room_with_thoughts(embedder, db=None):
    room, _, seen = await build(offline_settings(), embedder, library(3), db=db)
    for a in room.agents:
        a.proactivity = QUIET  # nobody speaks on their own: only what the user forces is said
    room.add_human("Hiro")
    for text in ("Anyone got plans for the weekend?", "I went hiking in the mountains last month."):
        await room.post_human_message("Hiro", text)
        await room.step_once()
    return room, seen


def _unsaid(room):
    return [
        (a.name, t)
        for a in room.agents
        for t in a.reservoir.thoughts.values()
        if t.expressed_in is None
    ]


async def test_an_ended_session_refuses_every_change_and_records_nothing_after_its_end(embedder):
    room, seen = await _room_with_thoughts(embedder)
    name, thought = _unsaid(room)[0]
    memory_id = next(iter(room.agent(name).memory.items))
    room.finish("interrupted", "stopped by the user")
    end = len(seen)
    assert isinstance(seen[-1], events.SessionFinished)
    refused = {
        "force-express": room.force_express(name, thought.id),
        "add memory": room.add_memory(name, "fact", "I keep bees."),
        "edit memory": room.edit_memory(name, memory_id, text="changed"),
        "composer": room.post_human_message("Hiro", "are you there?"),
    }
    for what, command in refused.items():
        with pytest.raises(
            errors.SessionEnded, match=r"has ended \(interrupted at \d\d:\d\d:\d\d\)"
        ):
            await command
        assert len(seen) == end, f"{what} recorded something after the end"
    for what, call in {
        "delete thought": lambda: room.delete_thought(name, thought.id),
        "delete memory": lambda: room.delete_memory(name, memory_id),
        "proactivity": lambda: room.set_proactivity(name, QUIET),
    }.items():
        with pytest.raises(errors.SessionEnded, match="it can no longer change"):
            call()
        assert len(seen) == end, f"{what} recorded something after the end"
    assert thought.id in room.agent(name).reservoir.thoughts
    assert room.ended_at == seen[-1].at
    # A private note or an answer about what was said is a judgment, not a change: still taken.
    room.annotate("Hiro", 1, "I asked this to get them going")
    assert isinstance(seen[-1], events.AnnotationAdded)


async def test_a_force_express_in_flight_when_the_session_ends_posts_nothing(embedder, db):
    # The race in the issue: message #6 posted at 11:39:27.069 after the session was marked
    # interrupted at 11:39:26.408. The thought is being worded when Stop ends the session.
    room, seen = await _room_with_thoughts(embedder, db)
    name, thought = _unsaid(room)[0]
    n = len(room.messages)
    task = asyncio.ensure_future(room.force_express(name, thought.id))
    await asyncio.sleep(0)  # the articulation has started and waits for the embedder
    assert not task.done()
    room.finish("interrupted", "stopped by the user")
    with pytest.raises(errors.SessionEnded):
        await task
    assert len(room.messages) == n
    assert not [e for e in seen if isinstance(e, events.MessagePosted)][n:]
    finished = db.execute("SELECT finished_at FROM sessions").fetchone()[0]
    late = db.execute("SELECT COUNT(*) FROM messages WHERE posted_at > ?", [finished]).fetchone()
    assert late[0] == 0
    assert room.agent(name).reservoir.get(thought.id).expressed_in is None


async def test_a_forced_message_is_marked_in_the_event_the_row_the_export_and_show(
    embedder, db, db_path, tmp_path
):
    room, seen = await _room_with_thoughts(embedder, db)
    name, thought = _unsaid(room)[0]
    forced = await room.force_express(name, thought.id)
    await room.step_once()  # an agent may speak on its own (QUIET: nobody does); not forced
    assert forced.forced
    assert [m.forced for m in room.messages] == [False, False, True]
    assert of(events.MessagePosted, seen)[-1].message.forced
    room.finish("finished", "done")
    rows = SessionReader(db).load(room.session_id)["messages"]
    assert [r["forced"] for r in rows] == [0, 0, 1]

    out = io.StringIO()
    assert cli.main(["show", room.session_id, "--db", str(db_path), "--json"], out=out) == 0
    assert [m["forced"] for m in json.loads(out.getvalue())["messages"]] == [0, 0, 1]
    out = io.StringIO()
    assert cli.main(["show", room.session_id, "--db", str(db_path)], out=out) == 0
    assert f"[ 3] {name} [forced by the user]: {forced.text}" in out.getvalue()

    # export → import, and merge, carry the column (they are schema-driven)
    dump, copy, merged = tmp_path / "s.jsonl", tmp_path / "copy.db", tmp_path / "merged.db"
    args = ["export", room.session_id, "--db", str(db_path), "--output", str(dump)]
    assert cli.main(args, out=io.StringIO()) == 0
    assert cli.main(["import", str(dump), "--db", str(copy)], out=io.StringIO()) == 0
    assert cli.main(["merge", str(merged), str(copy)], out=io.StringIO()) == 0
    for path in (copy, merged):
        with closing(sqlite3.connect(path)) as conn:
            got = conn.execute("SELECT id, forced FROM messages ORDER BY id").fetchall()
        assert got == [(1, 0), (2, 0), (3, 1)], path


async def test_migration_6_marks_the_forced_messages_of_older_sessions_from_their_events(tmp_path):
    path = tmp_path / "old.db"
    at = "2025-01-01T10:00:00.000Z"
    with closing(sqlite3.connect(path)) as conn:
        for number, script in enumerate(MIGRATIONS[:5], start=1):
            conn.executescript(script)
            conn.execute(f"PRAGMA user_version = {number}")
        conn.execute(
            "INSERT INTO sessions (id, created_at, status, engine, model, config)"
            " VALUES ('s', ?, 'finished', 'offline engine', 'offline', '{}')",
            [at],
        )
        conn.execute(
            "INSERT INTO participants (session_id, name, kind, joined_at) VALUES ('s', 'Ana', 'ai', ?)",
            [at],
        )
        for mid in (1, 2):
            conn.execute(
                "INSERT INTO messages (session_id, id, step, speaker, speaker_kind, text, posted_at)"
                " VALUES ('s', ?, 1, 'Ana', 'ai', 'hi', ?)",
                [mid, at],
            )
        for seq, (mid, forced) in enumerate(((1, False), (2, True)), start=1):
            data = {"kind": "thought_expressed", "message_id": mid, "forced": forced}
            conn.execute(
                "INSERT INTO events (session_id, seq, kind, step, at, data)"
                " VALUES ('s', ?, 'thought_expressed', 1, ?, ?)",
                [seq, at, json.dumps(data)],
            )
        conn.commit()
    db = open_database(path)
    try:
        got = db.execute("SELECT id, forced FROM messages ORDER BY id").fetchall()
        assert got == [(1, 0), (2, 1)]
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    finally:
        db.close()


def _content(text: str, people: list[str]) -> set[str]:
    return {w for w in words(text, people) if w not in INNER_VOICE and w != "@"} - {"…"}


async def test_every_forced_offline_thought_is_said_in_its_own_words(embedder):
    room, _ = await _room_with_thoughts(embedder)
    people = list(room.participants)
    checked = 0
    for name, thought in _unsaid(room):
        msg = await room.force_express(name, thought.id)
        cut = thought.text.endswith("…")
        # a thought cut at 15 words is completed: its words (but the last, maybe cut) are said
        want = _content(thought.text.rstrip("…").rsplit(" ", 1)[0] if cut else thought.text, people)
        said = set(words(msg.text, people))
        missing = want - said
        assert not missing, f"{thought.text!r} was said as {msg.text!r} (missing {missing})"
        checked += 1
    assert checked >= 6


async def test_the_issues_forced_thought_is_said_not_a_follow_up_on_something_else(embedder):
    # Issue 10: "I don't know much about weekend, honestly." came out as "Going back to what you
    # said about weekend, Hiro: how did that go?". The latest message is about something else.
    mind = OfflineCognition(embedder, seed=0)
    said = [
        domain.Message(
            id=1, speaker="Hiro", text="Anyone got plans for the weekend?", step=1, at=""
        ),
        domain.Message(id=2, speaker="Ana", text="I cook fish stew on Sundays.", step=2, at=""),
        domain.Message(id=3, speaker="Hiro", text="My cat knocked over a plant.", step=3, at=""),
    ]
    thought = domain.Thought(
        id=9,
        agent="Ben",
        text="I don't know much about weekend, honestly.",
        system=2,
        stimuli=["message:1"],
        created_step=1,
        last_access=1,
        origin="offline engine",
    )
    ctx = Context(
        agent="Ben",
        persona=None,
        participants=["Hiro", "Ana", "Ben"],
        recent=said,
        latest=said[-1],
        trigger="new_message",
        step=4,
        forced=True,
    )
    text = await mind.articulate(ctx, Articulation(thought))
    assert text == "I don't know much about weekend, to be honest."
    bold = await mind.articulate(ctx, Articulation(thought, proactive_tone=True))
    assert "don't know much about weekend" in bold  # the proactive tone restyles, never reverses
    assert spoken("Ask Ben more about hiking.") == "Ben, tell me more about hiking?"
    memory = domain.Stimulus(
        ref="memory:4",
        text="I want to walk the whole Pennine Way before I turn sixty-five.",
        saliency=0.5,
    )
    cut = "Still on my mind: I could share that I want to walk the whole Pennine Way before I…"
    assert spoken(cut, [memory]) == memory.text


async def test_a_forced_thought_reaches_the_language_model_in_the_articulation_prompt(
    llm_server, embedder
):
    room, _, _ = await build(server_settings(llm_server), embedder, library(2))
    room.add_human("Hiro")
    await room.post_human_message("Hiro", "Anyone got plans for the weekend?")
    await room.step_once()
    name, thought = _unsaid(room)[0]
    msg = await room.force_express(name, thought.id)
    assert msg.forced
    prompts = [
        " ".join(str(m.get("content", "")) for m in r.get("messages", []))
        for r in llm_server.requests
        if r.get("_path") == "/v1/chat/completions"
    ]
    asked = [p for p in prompts if "You decided to say this thought out loud" in p]
    assert asked
    assert thought.text in asked[-1]
