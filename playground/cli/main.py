"""Command line: `playground simulate | sessions | show | report | export | import | experiment |
experiments | merge | eval-next-speaker`; with no command,
the GUI (when installed)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import textwrap
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import NoReturn, TextIO

from playground import domain, errors, events, personas
from playground.cli import signals as interrupts
from playground.cli import transcript
from playground.cli.flag_ranges import (
    AGENTS,
    BUSY_TIMEOUT,
    COUNT,
    LLM_CALLS,
    MAX_RETRIES,
    MAX_SILENT_STEPS,
    SEED,
    TIMEOUT,
    TURNS,
)
from playground.history.recording import FORK_BEGINS
from playground.llm.capabilities import server_profile, summary_of
from playground.room import loops
from playground.settings import PRESETS, Settings
from playground.storage import SessionReader, open_database
from playground.storage.database import DEFAULT_BUSY_TIMEOUT, DEFAULT_DB, open_for_reading
from playground.terminal_text import for_data, guard, visible

log = logging.getLogger("playground")


class Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as :class:`errors.UsageError` so that :func:`main` says
    them in one ``error:`` line (the flag first: ``--seed: … is out of range``) and exits 2,
    also when it runs inside a test or the window's process. Subcommands' parsers are of the
    same class."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):
            raise errors.UsageError(message.removeprefix("argument "))
        raise errors.UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="playground", description="Inner Thoughts agents in a shared chat room.")
    sub = p.add_subparsers(dest="command")

    sim = sub.add_parser("simulate", help="run one conversation headless and save it")
    sim.add_argument(
        "--agents", type=AGENTS, default=4, help="number of AI participants (default 4)"
    )
    sim.add_argument(
        "--turns",
        type=TURNS,
        default=15,
        help="messages to post, the icebreaker included (default 15)",
    )
    sim.add_argument("--seed", type=SEED, default=0)
    sim.add_argument(
        "--preset",
        default="simulation",
        choices=list(PRESETS),
        help="proactivity preset for every agent",
    )
    sim.add_argument(
        "--engine",
        choices=["offline", "openai"],
        help="default: openai if a key or base URL is set, else offline",
    )
    sim.add_argument("--model", help="chat model (OpenAI-compatible engine)")
    sim.add_argument(
        "--base-url",
        help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1 (else $OPENAI_BASE_URL)",
    )
    sim.add_argument("--api-key", help="API key (else $OPENAI_API_KEY); never stored")
    sim.add_argument(
        "--evaluation-mode",
        choices=["batched", "per-thought"],
        help="one evaluation call per thought (default, as the paper) or per agent (cheaper)",
    )
    sim.add_argument(
        "--embeddings",
        choices=["local", "remote"],
        help="local MiniLM (default) or the server's /embeddings",
    )
    sim.add_argument("--timeout", type=TIMEOUT, help="seconds per LLM call")
    sim.add_argument(
        "--max-retries",
        type=MAX_RETRIES,
        help="retries on 429/5xx/timeouts (default 3, with back-off)",
    )
    sim.add_argument(
        "--concurrency", type=LLM_CALLS, help="most LLM calls in flight at once (default 32)"
    )
    sim.add_argument(
        "--max-silent-steps",
        type=MAX_SILENT_STEPS,
        help="stop after this many silent steps in a row",
    )
    from playground.cli.flags import add_server_flags

    add_server_flags(sim)
    sim.add_argument(
        "--personas", default=str(personas.DEFAULT_DIR), help="directory of persona files"
    )
    sim.add_argument("--icebreaker", help="first message (default: a random icebreaker)")
    sim.add_argument(
        "--db", default=str(DEFAULT_DB), help=f"session database (default {DEFAULT_DB})"
    )
    sim.add_argument(
        "--busy-timeout",
        type=BUSY_TIMEOUT,
        default=DEFAULT_BUSY_TIMEOUT,
        metavar="SECONDS",
        help="how long a write waits for another program's lock on the database before the run"
        f" fails (default {DEFAULT_BUSY_TIMEOUT:g})",
    )
    sim.add_argument("--quiet", action="store_true", help="print only the session id")

    ls = sub.add_parser("sessions", help="list saved sessions")
    ls.add_argument("--db", default=str(DEFAULT_DB))

    show = sub.add_parser("show", help="print one saved session")
    show.add_argument("id", help="session id (or a unique prefix)")
    show.add_argument("--db", default=str(DEFAULT_DB))
    show.add_argument("--json", action="store_true", help="everything as JSON")

    rep = sub.add_parser("report", help="statistics over the human ratings in a database")
    rep.add_argument("--db", default=str(DEFAULT_DB))
    rep.add_argument("--experiment", help="only the sessions of this experiment")
    rep.add_argument("--format", choices=["table", "csv", "json"], default="table")
    rep.add_argument("--plots", metavar="DIR", help="also write the plots as PNG files here")
    from playground.cli import storm_report as storm_report_cli

    storm_report_cli.add_arguments(rep)
    from playground.cli import agreement as agreement_cli

    agreement_cli.add_arguments(rep)

    exp = sub.add_parser("export", help="write sessions (with their ratings) to a file")
    exp.add_argument("ids", nargs="*", metavar="ID", help="session ids (or unique prefixes)")
    exp.add_argument("--all", action="store_true", help="every session in the database")
    exp.add_argument("--experiment", help="every session of this experiment")
    exp.add_argument("--db", default=str(DEFAULT_DB))
    exp.add_argument("--format", choices=["jsonl", "json", "csv"], default="jsonl")
    exp.add_argument("--output", metavar="FILE", help="default: standard output")

    imp = sub.add_parser("import", help="read a JSON Lines export into a database")
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--db", default=str(DEFAULT_DB))
    imp.add_argument(
        "--as-new",
        action="store_true",
        help="import a conversation whose id the database has, with other content, as a copy"
        " under a new id (the same conversation is always skipped)",
    )

    from playground.cli import experiment as experiment_cli

    experiment_cli.add_parsers(sub, str(DEFAULT_DB), DEFAULT_BUSY_TIMEOUT)
    from playground.cli import features as features_cli

    features_cli.add_parser(sub, str(DEFAULT_DB), DEFAULT_BUSY_TIMEOUT)
    from playground.cli import judge as judging_cli

    judging_cli.add_parsers(sub, str(DEFAULT_DB), DEFAULT_BUSY_TIMEOUT)
    from playground.cli import storm as storm_cli

    storm_cli.add_parser(sub, str(DEFAULT_DB), DEFAULT_BUSY_TIMEOUT)
    from playground.cli import storm_judge as judge_cli

    judge_cli.add_parsers(sub, str(DEFAULT_DB), DEFAULT_BUSY_TIMEOUT)
    from playground.cli import profiles as profiles_cli

    profiles_cli.add_parsers(sub)

    mg = sub.add_parser(
        "merge", help="combine session databases (e.g. an experiment's shards) into one"
    )
    mg.add_argument("output", metavar="OUT.db", help="the database to merge into (created if new)")
    mg.add_argument("sources", nargs="+", metavar="SHARD.db", help="databases to read")
    mg.add_argument(
        "--busy-timeout", type=BUSY_TIMEOUT, default=DEFAULT_BUSY_TIMEOUT, metavar="SECONDS"
    )

    ev = sub.add_parser(
        "eval-next-speaker",
        help="score the next-speaker predictor on a corpus of multi-party chats (docs/next-speaker-corpus.md)",
    )
    ev.add_argument("corpus", metavar="CORPUS.jsonl")
    from playground.cli.flags import add_llm_flags

    add_llm_flags(ev)
    ev.add_argument("--limit", type=COUNT, metavar="N", help="score at most N predictions")
    ev.add_argument("--concurrency", type=LLM_CALLS, help="most LLM calls in flight at once")
    ev.add_argument("--format", choices=["table", "json"], default="table")
    return p


#: ``simulate``'s flags by the setting each one sets: an invalid value is reported by its flag.
SETTING_FLAGS = {
    "engine": "--engine",
    "model": "--model",
    "base_url": "--base-url",
    "api_key": "--api-key",
    "seed": "--seed",
    "preset": "--preset",
    "max_turns": "--turns",
    "evaluation_mode": "--evaluation-mode",
    "embeddings": "--embeddings",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "concurrency": "--concurrency",
    "max_silent_steps": "--max-silent-steps",
    "llm_concurrency": "--llm-concurrency",
    "pins": "--pin",
    "rating_method": "--rating-method",
    "rating_samples": "--rating-samples",
    "rating_call": "--rating-call",
}


def simulate_settings(args: argparse.Namespace) -> Settings:
    """The settings of ``simulate``: its flags over the environment.

    Raises:
        SettingsError: naming the flag the user typed (``--turns``), or the setting when its value
            came from the environment.
    """
    from playground.cli.flags import settings_from

    return settings_from(args, SETTING_FLAGS)


async def simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = simulate_settings(args)
    library = personas.load_personas(args.personas)
    if args.agents > len(library):
        raise errors.SettingsError(
            f"--agents: {args.agents} asked but {args.personas} has only {len(library)} personas"
        )
    icebreaker = args.icebreaker
    if not icebreaker:
        import random

        icebreaker = random.Random(f"{args.seed}:icebreaker").choice(
            personas.load_icebreakers(args.personas)
        )
    from playground.cli.flags import local_embedder

    embedder = local_embedder(settings)  # loading in its thread while the rest starts up
    from playground import factory  # the engines' imports (openai, torch) only when simulating

    db = open_database(args.db, busy_timeout=args.busy_timeout)
    print(
        "Loading the embedding model…"
        if settings.engine.engine == "offline" or settings.engine.embeddings == "local"
        else "Connecting…",
        file=err,
        flush=True,
    )
    engine = await factory.build_engine(settings, embedder=embedder)
    bus = events.EventBus()
    if not args.quiet:
        bus.subscribe(transcript.TranscriptPrinter(out, err, args.turns))
    room = None
    try:
        # The session row exists from open_room on, while the agents still wait for the model:
        # a signal from here on ends it `interrupted` in the `finally` below, with its id printed.
        room, _ = factory.open_room(settings, engine, db=db, bus=bus)
        # Memories are embedded in the background: the icebreaker and its interpretation (LLM
        # calls) go ahead while the model still loads, and the first retrieval waits for it.
        await factory.add_agents(
            room,
            settings,
            factory.pick_personas(library, args.agents, args.seed),
            defer_memories=True,
        )
        await loops.run_simulation(room, icebreaker=icebreaker)
    finally:
        # A write that failed ends the run `failed` (main prints why): never `interrupted`.
        unsaved = bus.failure
        if room is not None and isinstance(unsaved, errors.RecordingError):
            loops.fail_unrecorded(room, unsaved)
        elif room is not None and room.status == "running":
            room.finish("interrupted", "the command was stopped")
        await engine.close()
        if room is not None and not args.quiet and engine.client is not None:
            u = engine.client.usage
            retried = f", {u.retry_text()}" if u.retries else ", no retries"
            print(
                f"LLM use: {u.calls} chat calls, {u.prompt_tokens + u.completion_tokens} tokens,"
                f" {u.embedding_calls} embedding calls{retried}{u.loss_text(', ')}",
                file=out,
            )
            print(f"Server: {engine.client.profile.summary()}", file=out)
        if room is not None and unsaved is None:  # no id of a run that was not saved
            print(room.session_id, file=out, flush=True)
        db.close()
    return 0


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
    data = SessionReader(db).load(args.id)
    profile = server_profile(data["session"].get("server_profile"))
    if args.json:
        if profile is not None:
            data["session"]["server_profile"] = profile
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
        if carried and m["id"] == carried and s.get("fork_seq") is not None:
            print(f"\n{FORK_BEGINS}", file=out)
    usage = domain.Usage(**{k: s[k] for k in domain.Usage.model_fields if s.get(k) is not None})
    print(
        f"\n{len(data['thoughts'])} thoughts, {len(data['decisions'])} decisions, {s['calls']} LLM calls"
        f" ({usage.retry_text() or 'no retries'}{usage.loss_text(', ')})",
        file=out,
    )
    return 0


def launch_gui(argv: Sequence[str]) -> int:
    """Open the GUI through the ``playground.gui`` entry point; -1 when no GUI is installed."""
    eps = entry_points(group="playground.gui")
    if not eps:
        return -1
    return int(next(iter(eps)).load()(list(argv)) or 0)


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Every line printed below shows control codes from files, models and people as visible
    # escapes (playground.terminal_text); only an export's data is written as it is.
    raw_out = out or sys.stdout
    out = guard(raw_out)
    err = guard(err or sys.stderr)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=err
    )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if not argv:
        code = launch_gui(argv)
        if code != -1:
            return code
        # No GUI installed: run the demo simulation headless instead.
        print(
            "(no GUI installed: running a headless simulation; see `playground --help`)", file=err
        )
        argv = ["simulate"]
    try:
        args = build_parser().parse_args(argv)
    except errors.UsageError as exc:
        print(f"error: {exc}", file=err)
        return 2
    try:
        if args.command == "simulate":
            return interrupts.run_interruptible(simulate(args, out, err), err)
        if args.command == "sessions":
            return list_sessions(args, out)
        if args.command == "show":
            return show(args, out)
        if args.command == "report":
            if args.storm:
                from playground.cli import storm_report as storm_report_cli

                return storm_report_cli.cli(args, out, err)
            from playground.report import stats as report

            return report.cli(args, out)
        if args.command == "profiles":
            from playground.cli import profiles as profiles_cli

            return profiles_cli.cli(args, out, err)
        if args.command == "judge":
            from playground.cli import judge as judging_cli

            return judging_cli.cli(args, out, err)
        if args.command == "storm-judge":
            from playground.cli import storm_judge as judge_cli

            return judge_cli.cli(args, out, err)
        if args.command == "export":
            from playground.transfer import export

            return export.cli_export(args, for_data(raw_out))
        if args.command == "import":
            from playground.transfer import export

            return export.cli_import(args, out)
        if args.command == "experiment":
            from playground.cli import experiment as experiment_cli

            return interrupts.run_interruptible(experiment_cli.run(args, out, err), err)
        if args.command == "storm":
            from playground.cli import storm as storm_cli

            return storm_cli.main(args, out, err)
        if args.command == "experiments":
            from playground.cli import experiment as experiment_cli

            return experiment_cli.show(args, out)
        if args.command == "features":
            from playground.cli import features as features_cli

            return features_cli.cli(args, out, err)
        if args.command == "merge":
            from playground.transfer import merge

            return merge.cli(args, out)
        if args.command == "eval-next-speaker":
            from playground.experiments import next_speaker_eval

            return next_speaker_eval.cli(args, out, err)
    except errors.PlaygroundError as exc:
        # The boundary: every expected failure becomes one clear line, never a traceback.
        print(f"error: {exc}", file=err)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=err)
        return 130
    build_parser().print_help(err)
    return 2
