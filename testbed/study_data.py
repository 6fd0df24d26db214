"""A finished user study in a database, for the study report's tests and screenshot: study plan
p1 with three real offline conversations (one agent each, three people), the people's
questionnaires, end-of-study answers, private reasons and retrospective reviews; plan p2 planned
but not run. The figures it gives are checked by hand in tests/report/test_study_report.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playground import domain, events, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.settings import load_settings
from playground.storage import open_database, study_rows

NSC, AC, SP = "non-stop-chatter", "active-contributor", "selective-participant"
AT = "2026-01-01T10:00:00+00:00"
PEOPLE = ("Uma", "Vic", "Wes")
#: The plan's counter-balanced order: (condition, agent persona index, Wes's weekend).
STEPS = [(AC, 1, "go hiking"), (SP, 2, "visit my parents"), (NSC, 0, "sleep in")]
#: likeability by person and condition: the same ranks for everyone (NSC < SP < AC).
LIKEABILITY = {
    "Uma": {NSC: 2, AC: 6, SP: 4},
    "Vic": {NSC: 3, AC: 7, SP: 5},
    "Wes": {NSC: 1, AC: 5, SP: 4},
}
#: initiative: Wes rated only AC, so 2 people rated all three conditions (too few).
INITIATIVE = {"Uma": {NSC: 7, AC: 5, SP: 2}, "Vic": {NSC: 6, AC: 4, SP: 3}, "Wes": {AC: 6}}
#: agent's condition → the style each person named for it.
NAMED = {
    "Uma": {NSC: NSC, AC: AC, SP: SP},  # all right
    "Vic": {NSC: NSC, AC: SP, SP: AC},  # NSC right
    "Wes": {NSC: AC, AC: AC, SP: NSC},  # AC right
}
FAVOURITE = {"Uma": AC, "Vic": AC, "Wes": SP}
REASON = "I wanted to share my new hobby and see if anyone else bakes."
WHY = "I was hoping to find someone to play chess with."
THINKING = "I felt a bit boring compared to the others."


async def _conversation(
    db: Any, embedder: CachingEmbedder, persona: domain.Persona, weekend: str
) -> str:
    """One real offline conversation: three people, one agent; their reasons and reviews."""
    settings = load_settings({}, {"engine": "offline"})
    engine = await factory.build_engine(settings, embedder=embedder)
    room, _ = await factory.create_room(
        settings, engine, db=db, personas=[persona], bus=events.EventBus(strict=True)
    )
    for name in PEOPLE:
        room.add_human(name)
    said: dict[str, int] = {}
    for name, text in [
        ("Uma", "I have been learning to bake sourdough bread lately."),
        ("Vic", "Does anyone here play chess?"),
        ("Wes", f"On weekends I mostly {weekend}."),
        ("Uma", "Sourdough takes patience though."),
    ]:
        said.setdefault(name, (await room.post_human_message(name, text)).id)
        await room.step_once()
    last = max(m.id for m in room.messages if m.speaker == "Uma")
    room.annotate("Uma", said["Uma"], REASON)  # her reason, on her own message
    room.annotate("Vic", last, "Uma keeps going on about bread.")  # a reaction: not a reason
    room.stop()
    await engine.close()
    sid = room.session_id

    def review(author: str, mid: int, thinking: str = "", why: str = "") -> None:
        entry = {"message_id": mid, "thinking": thinking, "wanted": "yes", "why": why,
                 "timing": "immediately", "after_message_id": None}  # fmt: skip
        study_rows.save_retrospective(db, sid, author, entry, AT)

    review("Uma", said["Uma"], why="This one is not used: her note comes first.")
    review("Vic", said["Vic"], thinking="Not used: why comes first.", why=WHY)
    review("Wes", said["Wes"], thinking=THINKING)
    review("Wes", last, why="Someone else's message: not a stated reason.")
    return sid


async def build_study_database(path: Path, embedder: CachingEmbedder) -> Path:
    """Plan p1 with its three conversations and every answer, plan p2 planned but not run, in a
    new database at ``path`` (returned)."""
    db = open_database(path)
    agents = personas.load_personas()[:3]
    plan = {"id": "p1", "created_at": AT, "humans": 3, "grp": 1, "seed": 7, "minutes": 5.0,
            "show_thoughts": 0, "settings": {}}  # fmt: skip
    steps = [
        # the last step names its agent by persona id: the session's agent gives its name
        {"position": n, "condition": cond, "topic": "hobbies",
         "persona": agents[i].id if n == 3 else agents[i].name}
        for n, (cond, i, _) in enumerate(STEPS, start=1)
    ]  # fmt: skip
    study_rows.create_plan(db, plan, steps, ["t1", "t2", "t3"])
    for n, (cond, i, weekend) in enumerate(STEPS, start=1):
        sid = await _conversation(db, embedder, agents[i], weekend)
        study_rows.set_step(db, "p1", n, "done", sid)
        for person in PEOPLE:
            answers = {"likeability": LIKEABILITY[person][cond]}
            if cond in INITIATIVE[person]:
                answers["initiative"] = INITIATIVE[person][cond]
            study_rows.save_questionnaire(db, sid, person, answers, AT)
    agent_of = {cond: agents[i].name for cond, i, _ in STEPS}
    for person in PEOPLE:
        named = {f"match:{agent_of[c]}": style for c, style in NAMED[person].items()}
        study_rows.save_plan_answers(
            db, "p1", person, {**named, "favourite": agent_of[FAVOURITE[person]]}, AT
        )
    study_rows.create_plan(
        db, {**plan, "id": "p2", "created_at": "2026-02-01T10:00:00+00:00"},
        steps, ["t4", "t5", "t6"],
    )  # fmt: skip
    db.close()
    return path
