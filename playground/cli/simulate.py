"""``playground simulate``: run one conversation headless, print it as it happens, and save it."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from playground import events, personas, runs
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
)
from playground.settings import PRESETS, Settings


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
    icebreaker = args.icebreaker or runs.draw_icebreaker(args.personas, args.seed)
    bus = events.EventBus()
    if not args.quiet:
        bus.subscribe(transcript.TranscriptPrinter(out, err, args.turns))

    def ended(end: runs.RunEnd) -> None:
        if not args.quiet and end.usage is not None:
            u = end.usage
            retried = f", {u.retry_text()}" if u.retries else ", no retries"
            print(
                f"LLM use: {u.calls} chat calls, {u.prompt_tokens + u.completion_tokens} tokens,"
                f" {u.embedding_calls} embedding calls{retried}{u.loss_text(', ')}",
                file=out,
            )
            print(f"Server: {end.server}", file=out)
        if end.session_id is not None:  # no id of a run that was not saved
            print(end.session_id, file=out, flush=True)

    await runs.simulate_session(
        settings,
        library,
        agents=args.agents,
        icebreaker=icebreaker,
        db=args.db,
        busy_timeout=args.busy_timeout,
        bus=bus,
        say=lambda text: print(text, file=err, flush=True),
        on_end=ended,
    )
    return 0
