"""Real exports for the import tests: sessions recorded by the app (offline engine, real MiniLM, a
real SQLite file) that fill every list of the export format, written by ``playground export``."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from playground.cli import main as cli
from playground.domain.simulated_user import Difficulty, TaskProfile, UserProfile
from playground.embedding.cache import CachingEmbedder
from playground.rating import store as ratings
from playground.room import loops
from playground.storage import open_database
from playground.storm.user import simulator_for
from tests.conftest import offline_settings
from tests.support.rooms import build, library

NOW = "2026-01-02T03:04:05.678+00:00"
MIA = UserProfile(
    id="mia",
    name="Mia",
    task=TaskProfile(
        category="technology",
        task="Buy a smartphone",
        attributes={"budget": "under 600 euros", "brand": "none in mind"},
        requirements=["Long battery life", "A good camera"],
        success_criteria=["It works for years"],
    ),
    difficulty=Difficulty(style=3, length=2, content=3, tone=2),
    uncertainty=40,
    unknown=["task.brand"],
)


async def _inner_thoughts(db: Any, embedder: CachingEmbedder) -> str:
    """Three agents and a simulated user: thoughts, evaluations, decisions, hidden states."""
    settings = offline_settings(max_turns=5, max_silent_steps=4, seed=5)
    room, engine, _ = await build(settings, embedder, library(2), db=db)
    room.add_simulated_user(MIA, simulator_for(engine, seed=5))
    await room.simulated_turn("Mia")
    await loops.run_simulation(room)
    await engine.close()
    return str(room.session_id)


async def _next_speaker(db: Any, embedder: CachingEmbedder) -> str:
    """A next-speaker baseline: predictions."""
    settings = offline_settings(max_turns=3, seed=6)
    room, engine, _ = await build(settings, embedder, library(3), db=db, policy="next-speaker")
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    await engine.close()
    return str(room.session_id)


def _people_and_ratings(db: Any, a: str, b: str) -> None:
    """What people add after a run: a human's notes and labels, ratings, marks, a preference,
    a judge's scores, and the STORM tables' rows."""
    with db.conn:
        db.execute(
            "INSERT INTO experiments (id, name, created_at, config) VALUES ('exp-1', 'pilot', ?, ?)",
            [NOW, json.dumps({"protocol": {"conditions": ["inner-thoughts", "next-speaker"]}})],
        )
        db.execute("UPDATE sessions SET experiment_id = 'exp-1' WHERE id IN (?, ?)", [a, b])
        db.execute(  # a person, seated to the end (as the app records them)
            "INSERT INTO participants (session_id, name, kind, joined_at, policy, left_at)"
            " VALUES (?, 'Pat', 'human', ?, 'human', (SELECT finished_at FROM sessions WHERE id = ?))",
            [a, NOW, a],
        )
        db.execute(
            "INSERT INTO annotations (session_id, message_id, author, kind, text, created_at)"
            " VALUES (?, 2, 'Pat', 'reaction', 'too eager', ?)",
            [a, NOW],
        )
        db.execute(
            "INSERT INTO labels (session_id, message_id, author, question, answer, created_at)"
            " VALUES (?, 3, 'Pat', 'Was this a good moment to speak?', 'not sure', ?)",
            [a, NOW],
        )
        db.execute("INSERT INTO raters (id, created_at) VALUES ('judge:offline', ?)", [NOW])
        db.execute(
            "INSERT INTO judge_scores (session_id, rater, metric, score, rating, reason, method,"
            " model, created_at) VALUES (?, 'judge:offline', 'coherence', 5.5, 6, 'flows',"
            " 'offline', 'offline', ?)",
            [a, NOW],
        )
        db.execute(
            "INSERT INTO storm_dialogues (session_id, experiment_id, user_name, profile_id,"
            " category, task, difficulty, uncertainty, profile_access, assistant,"
            " assistant_model, user_model) VALUES (?, 'exp-1', 'Mia', 'mia', 'technology',"
            " 'Buy a smartphone', 3, 40, 0, 'inner-thoughts', 'offline', 'offline')",
            [a],
        )
        db.execute(
            "INSERT INTO storm_judgements (session_id, judge, pair, clarity_change,"
            " satisfaction_change, explanation, created_at)"
            " VALUES (?, 'offline', 1, 'improve', 'not change', 'clearer', ?)",
            [a, NOW],
        )
    store = ratings.RatingStore(db)
    store.rate_conversation(
        a, "r1", {item.key: 1 + i % 7 for i, item in enumerate(ratings.CONVERSATION_METRICS)}
    )
    store.answer_questionnaire(
        a, "Pat", {item.key: 7 - i % 7 for i, item in enumerate(ratings.PARTICIPANT_ITEMS)}
    )
    store.mark_turn(a, 2, "r1", "too abrupt")
    store.record_preference("r1", a, b, a, "flows better")


def make_source(path: Path, minilm: Any) -> dict[str, Any]:
    """Record two sessions into ``path`` and export them; returns the database, the ids
    (``a``: inner thoughts with a simulated user and everything people add, ``b``: a
    next-speaker baseline) and the export file (one line each, ``a`` first)."""
    db = open_database(path)
    try:
        embedder = CachingEmbedder(minilm)
        a = asyncio.run(_inner_thoughts(db, embedder))
        b = asyncio.run(_next_speaker(db, embedder))
        _people_and_ratings(db, a, b)
    finally:
        db.close()
    out = path.with_suffix(".jsonl")
    args = ["export", a, b, "--db", str(path), "--output", str(out)]
    assert cli.main(args, out=io.StringIO()) == 0
    return {"db": path, "a": a, "b": b, "file": out}


def cached_source(tmp_path_factory: Any, minilm: Any) -> dict[str, Any]:
    """:func:`make_source` once per test run, shared by the modules that read it (they only
    copy the database and the file, never change them)."""
    root = tmp_path_factory.getbasetemp() / "import-source"
    done = root / "source.json"
    if not done.exists():
        root.mkdir(exist_ok=True)
        made = make_source(root / "source.db", minilm)
        done.write_text(json.dumps({k: str(v) for k, v in made.items()}), encoding="utf-8")
    got = json.loads(done.read_text(encoding="utf-8"))
    return {**got, "db": Path(got["db"]), "file": Path(got["file"])}
