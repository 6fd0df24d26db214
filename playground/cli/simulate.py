"""``playground simulate``: run one conversation headless, print it as it happens, and save it."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from playground import errors, events, personas
from playground.cli import transcript
from playground.cli.flag_ranges import (
    AGENTS,
    LLM_CALLS,
    MAX_RETRIES,
    MAX_SILENT_STEPS,
    SEED,
    TIMEOUT,
    TURNS,
)
from playground.cli.flags import (
    add_db_flags,
    add_server_flags,
    agent_library,
    settings_from,
    start_local_embedder,
)
from playground.settings import PRESETS, Settings
from playground.storage import open_database


def add_parser(sub: Any, default_db: str, busy_timeout: float) -> None:
    """Add ``simulate`` to the subcommands ``sub``."""
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
    add_server_flags(sim)
    sim.add_argument(
        "--personas", default=str(personas.DEFAULT_DIR), help="directory of persona files"
    )
    sim.add_argument("--icebreaker", help="first message (default: a random icebreaker)")
    add_db_flags(
        sim,
        default_db,
        busy_timeout,
        busy_help_end=f" before the run fails (default {busy_timeout:g})",
    )
    sim.add_argument("--quiet", action="store_true", help="print only the session id")


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
    return settings_from(args, SETTING_FLAGS)


async def simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = simulate_settings(args)
    library = agent_library(args)
    icebreaker = args.icebreaker
    if not icebreaker:
        import random

        icebreaker = random.Random(f"{args.seed}:icebreaker").choice(
            personas.load_icebreakers(args.personas)
        )
    embedder = start_local_embedder(settings)  # loading in its thread while the rest starts up
    # the engines' imports (openai, torch) and the room's only when simulating
    from playground import factory
    from playground.room import loops

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
