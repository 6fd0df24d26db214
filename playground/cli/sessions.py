"""``playground sessions`` and ``playground show``: the saved sessions of a database, and one of
them in full (as text, or everything as JSON), with where each trigger's time went."""

from __future__ import annotations

import argparse
import json
import sqlite3
import textwrap
from typing import Any, TextIO

from playground import domain, events
from playground.history.timeline import FORK_BEGINS
from playground.history.timings import LEGEND, stage_table, summary_line
from playground.llm.capabilities import server_profile, summary_of
from playground.storage import SessionReader, study_rows
from playground.storage.database import open_for_reading, snapshot
from playground.terminal_text import visible


def add_parsers(sub: Any, default_db: str) -> None:
    """Add ``sessions`` and ``show`` to the subcommands ``sub``."""
    ls = sub.add_parser("sessions", help="list saved sessions")
    ls.add_argument("--db", default=default_db)

    show = sub.add_parser("show", help="print one saved session")
    show.add_argument("id", help="session id (or a unique prefix)")
    show.add_argument("--db", default=default_db)
    show.add_argument("--json", action="store_true", help="everything as JSON")
    show.add_argument(
        "--timings",
        action="store_true",
        help="each trigger's time breakdown stage by stage (by default one line per trigger:"
        " its total and critical path)",
    )


def list_sessions(args: argparse.Namespace, out: TextIO) -> int:
    db = open_for_reading(args.db)  # never created; read-only where it cannot be written
    rows = SessionReader(db).list_sessions()
    if not rows:
        print(f"No sessions in {args.db}.", file=out)
        return 0
    print(
        f"{'id':<22} {'created (UTC)':<20} {'status':<12} {'msgs':>4}  {'engine':<18} participants",
        file=out,
    )
    for r in rows:
        engine = "offline" if r["engine"] == "offline engine" else r["model"]
        sid, status, engine, people = (
            visible(str(v or ""), one_line=True)
            for v in (r["id"], r["status"], engine, r["participants"])
        )
        print(
            f"{sid:<22} {r['created_at'][:19]:<20} {status:<12} {r['messages']:>4}  {engine[:18]:<18} {people}",
            file=out,
        )
    return 0


def show(args: argparse.Namespace, out: TextIO) -> int:
    db = open_for_reading(args.db)  # never created; read-only where it cannot be written
    reader = SessionReader(db)
    with snapshot(db):  # the timings as of the same moment as the rest
        data = reader.load(args.id)
        timings = reader.trigger_timings(data["session"]["id"])
        data["study"] = _study(db, data["session"]["id"])
    profile = server_profile(data["session"].get("server_profile"))
    if args.json:
        if profile is not None:
            data["session"]["server_profile"] = profile
        data["timings"] = [t.model_dump(mode="json") for t in timings]
        json.dump(data, out, indent=2, ensure_ascii=False)
        print(file=out)
        return 0
    s = data["session"]
    print(
        f"Session {s['id']} · {s['status']} ({s['end_reason'] or ''}) · engine {s['engine']} · model {s['model']} · seed {s['seed']}",
        file=out,
    )
    people = [
        p["name"]
        + (f" ({p['policy']})" if p.get("policy", "inner-thoughts") != "inner-thoughts" else "")
        for p in data["participants"]
    ]
    print(f"Participants: {', '.join(people)} · condition {s['condition']}", file=out)
    for c in data["condition_changes"]:
        print(f"Condition: {c['old']} → {c['new']} at step {c['step']} ({c['why']})", file=out)
    carried = s.get("fork_messages")
    if s.get("fork_seq") is not None:
        print(
            f"Fork of {s.get('parent_id') or 'a deleted session'} at its message"
            f" #{s.get('fork_message')} (event {s['fork_seq']}): messages 1-{carried or 0} are"
            " carried over from it, with their original times",
            file=out,
        )
    if profile is not None:
        print(f"Server: {summary_of(profile)}", file=out)
        for why in profile.get("learned") or []:
            print(f"  learned: {why}", file=out)
    thoughts = {t["id"]: t for t in data["thoughts"]}
    notes = _notes_by_message(data)
    turns = {(p["message_id"], p["chosen"]): p for p in data["predictions"] if p["chosen"]}
    for m in data["messages"]:
        tt = f" → {m['addressee']}" if m["turn_type"] == "allocated" else ""
        tt += " [forced by the user]" if m.get("forced") else ""  # the user clicked the thought
        print(f"\n[{m['id']:>2}] {m['speaker']}{tt}: {m['text']}", file=out)
        if m["interpretation"]:
            print(
                textwrap.indent(textwrap.fill(f"(read as: {m['interpretation']})", 96), "      "),
                file=out,
            )
        pred = turns.get((m["id"] - 1, m["speaker"]))
        if pred:
            print(
                textwrap.indent(textwrap.fill(f"(next-speaker: {pred['rule']})", 96), "      "),
                file=out,
            )
        t = thoughts.get(m["thought_id"])
        if t:
            method = t["method"] or ""
            if method == "sampled" and t.get("samples"):
                method += f" ×{t['samples']}"
            print(
                f"      thought #{t['id']} (System {t['system']}, score {t['score'] or 0:.2f}, {method}): {t['text']}",
                file=out,
            )
        for note in notes.get(m["id"], []):
            print(textwrap.indent(textwrap.fill(note, 96), "      "), file=out)
        if carried and m["id"] == carried and s.get("fork_seq") is not None:
            print(f"\n{FORK_BEGINS}", file=out)
    _print_study(data["study"], out)
    _print_timings(timings, out, full=args.timings)
    usage = domain.Usage(**{k: s[k] for k in domain.Usage.model_fields if s.get(k) is not None})
    print(
        f"\n{len(data['thoughts'])} thoughts, {len(data['decisions'])} decisions, {s['calls']} LLM calls"
        f" ({usage.retry_text() or 'no retries'}{usage.loss_text(', ')})",
        file=out,
    )
    return 0


def _notes_by_message(data: dict[str, Any]) -> dict[int, list[str]]:
    """What people noted on each message, privately: their reasons (on their own messages),
    reactions (on others') and answers to the in-the-moment question cards."""
    notes: dict[int, list[str]] = {}
    for a in data["annotations"]:
        notes.setdefault(a["message_id"], []).append(f"{a['author']}'s {a['kind']}: {a['text']}")
    for label in data["labels"]:
        notes.setdefault(label["message_id"], []).append(
            f"{label['author']} answered “{label['question']}”: {label['answer']}"
        )
    return notes


def _study(db: Any, session_id: str) -> dict[str, Any]:
    """The session's study reviews; none from a read-only database older than the study tables."""
    try:
        return study_rows.study_reviews(db, session_id)
    except sqlite3.OperationalError:
        return {"plan": None, "retrospective": [], "questionnaire": [], "final_answers": []}


def _print_study(study: dict[str, Any], out: TextIO) -> None:
    """What people said about the conversation after it: reviews, ratings, final answers."""
    step = study["plan"]
    if step is not None:
        agent = step["agent"] + (
            f" ({step['persona']})" if step["agent"] != step["persona"] else ""
        )
        print(
            f"\nStudy plan {step['plan_id']}: conversation {step['position']} of {step['of']}"
            f" · {step['condition']} · agent {agent}",
            file=out,
        )
    if study["retrospective"]:
        print("\nReviews (each person's own, message by message):", file=out)
    for r in study["retrospective"]:
        said = [
            f"{label}: {r[key]}"
            for key, label in (("wanted", "wanted to say it"), ("timing", "would have spoken"))
            if r[key]
        ]
        if r["after_message_id"] is not None:
            said[-1] += f" #{r['after_message_id']}"
        said += [f"{label}: {r[key]}" for key, label in (("why", "why"), ("thinking", "thinking"))
                 if r[key]]  # fmt: skip
        print(f"  {r['author']} on [{r['message_id']}]: {' · '.join(said)}", file=out)
    _print_by_person(
        "Questionnaire (1-7):",
        [(q["author"], f"{q['item']} {q['value']}") for q in study["questionnaire"]],
        out,
    )
    _print_by_person(
        "End-of-study answers:",
        [(a["person"], f"{a['item']} = {a['value']}") for a in study["final_answers"]],
        out,
    )


def _print_by_person(title: str, answers: list[tuple[str, str]], out: TextIO) -> None:
    """``title`` and one line per person with their answers (nothing when there are none)."""
    by_person: dict[str, list[str]] = {}
    for person, answer in answers:
        by_person.setdefault(person, []).append(answer)
    if by_person:
        print(f"\n{title}", file=out)
    for person, said in by_person.items():
        print(f"  {person}: {', '.join(said)}", file=out)


def _print_timings(timings: list[events.TriggerTimed], out: TextIO, *, full: bool) -> None:
    """Where each trigger's time went: a line each, or with ``full`` its stages too."""
    if not timings:
        if full:
            print("\nNo trigger of this session was timed.", file=out)
        return
    print(f"\nTime per trigger ({len(timings)} timed):", file=out)
    for t in timings:
        if full:
            print(file=out)
        print(f"  {summary_line(t)}", file=out)
        if full:
            print(textwrap.indent("\n".join(stage_table(t)), "    "), file=out)
    if full:
        print(f"\n  {LEGEND}", file=out)
