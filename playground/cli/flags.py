"""Settings from a command's flags, so that an invalid value names the flag the user typed."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from playground import errors
from playground.cli.flag_ranges import (
    BUSY_TIMEOUT,
    LLM_CALLS,
    LLM_CONCURRENCY,
    MAX_RETRIES,
    RATING_SAMPLES,
    TIMEOUT,
)
from playground.runs import start_local_embedder as start_local_embedder
from playground.settings import Settings, load_settings

#: The flags every command that talks to a model shares, by the setting each one sets.
LLM_FLAGS = {
    "engine": "--engine",
    "model": "--model",
    "base_url": "--base-url",
    "api_key": "--api-key",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "llm_concurrency": "--llm-concurrency",
    "pins": "--pin",
    "rating_method": "--rating-method",
    "rating_samples": "--rating-samples",
    "rating_call": "--rating-call",
}

#: The flags of :func:`add_server_flags`, by setting.
SERVER_FLAGS = {
    k: LLM_FLAGS[k]
    for k in ("llm_concurrency", "pins", "rating_method", "rating_samples", "rating_call")
}


def add_server_flags(parser: Any) -> None:
    """How calls go to the server: calls in flight, pinned capabilities, the rating method."""
    parser.add_argument(
        "--llm-concurrency",
        type=LLM_CONCURRENCY,
        metavar="N|auto",
        help="LLM calls in flight at once: auto (default) starts at 2 for a server on this"
        " machine or network and adapts to what it sustains; N fixes it",
    )
    parser.add_argument(
        "--pin",
        action="append",
        metavar="CAP=VALUE",
        help="fix a server capability instead of learning it, e.g. structured=json_object,"
        " tokens=max_completion_tokens, temperature=no, logprobs=no, n=no, seed=no, stop=no,"
        " logprobs_cost=free|per-token (repeatable)",
    )
    parser.add_argument(
        "--rating-method",
        choices=["auto", "logprobs", "sampled", "parsed"],
        help="how a rating's distribution is estimated (default auto: logprobs where the server"
        " gives them, else sampled ratings)",
    )
    parser.add_argument(
        "--rating-samples", type=RATING_SAMPLES, help="ratings sampled per evaluation (default 20)"
    )
    parser.add_argument(
        "--rating-call",
        choices=["auto", "final", "inline"],
        help="read the rating's logprobs or samples from a short final call or from the whole"
        " evaluation answer; auto (default): inline for a hosted API, whose logprobs cost"
        " nothing, a final call for a server on this machine or network",
    )


def add_llm_flags(
    parser: Any, *, model_help: str | None = None, engine_choices: bool = True
) -> None:
    """Add the flags of :data:`LLM_FLAGS` (read back by :func:`settings_from`) to a command.

    Args:
        parser: an argparse parser or argument group.
        model_help: what ``--model`` is for (default: the chat model).
        engine_choices: argparse checks ``--engine``; False leaves it to the settings, which
            name the flag in a one-line error.
    """
    parser.add_argument(
        "--engine",
        choices=["offline", "openai"] if engine_choices else None,
        help="offline or openai (default: openai if a key or base URL is set, else offline)",
    )
    parser.add_argument("--model", help=model_help or "the chat model (OpenAI-compatible engine)")
    parser.add_argument("--base-url", help="OpenAI-compatible base URL (else $OPENAI_BASE_URL)")
    parser.add_argument("--api-key", help="API key (else $OPENAI_API_KEY); never stored")
    parser.add_argument("--timeout", type=TIMEOUT, help="seconds per LLM call")
    parser.add_argument("--max-retries", type=MAX_RETRIES, help="retries on 429/5xx/timeouts")
    add_server_flags(parser)


def add_db_flags(
    parser: Any, default_db: str, busy_timeout: float, *, busy_help_end: str = ""
) -> None:
    """``--db`` and ``--busy-timeout``, as every command that writes sessions has them
    (``busy_help_end`` ends the latter's help)."""
    parser.add_argument("--db", default=default_db, help=f"session database (default {default_db})")
    parser.add_argument(
        "--busy-timeout",
        type=BUSY_TIMEOUT,
        default=busy_timeout,
        metavar="SECONDS",
        help="how long a write waits for another program's lock on the database" + busy_help_end,
    )


def agent_library(args: argparse.Namespace) -> list[Any]:
    """The persona library of ``--personas``, which must hold ``--agents`` personas.

    Raises:
        SettingsError: fewer personas than agents asked (naming ``--agents``).
        PlaygroundError: the library cannot be read.
    """
    from playground import personas

    library = personas.load_personas(args.personas)
    if args.agents > len(library):
        raise errors.SettingsError(
            f"--agents: {args.agents} asked but {args.personas} has only {len(library)} personas"
        )
    return library


def settings_from(
    args: argparse.Namespace,
    flags: Mapping[str, str],
    extra: Mapping[str, object] | None = None,
) -> Settings:
    """The settings of a command: its flags (``{setting: "--flag"}``) and ``extra`` over the
    environment.

    Raises:
        SettingsError: naming the flag the user typed (``--turns``), or the setting when its value
            came from the environment.
    """
    overrides: dict[str, object] = {
        name: getattr(args, flag[2:].replace("-", "_"), None) for name, flag in flags.items()
    }
    pins = overrides.get("pins")
    if isinstance(pins, list):  # --pin given several times
        overrides["pins"] = ",".join(str(p) for p in pins)
    overrides.update(extra or {})
    try:
        return load_settings(os.environ, overrides)
    except errors.SettingsError as exc:
        if exc.field not in flags or overrides.get(exc.field) is None:
            raise
        raise errors.SettingsError(
            f"{flags[exc.field]}: {exc.reason}", field=exc.field, reason=exc.reason
        ) from exc


#: The flags of a command that asks a judge model (``judge``, ``storm-judge``).
JUDGE_FLAGS = {**LLM_FLAGS, "concurrency": "--concurrency"}


def add_judge_flags(parser: Any, *, engine_choices: bool = True) -> None:
    """Add the flags of :data:`JUDGE_FLAGS` (read back by :func:`judge_settings`) to a command:
    the judge model's server (see :func:`add_llm_flags`) and its calls in flight."""
    add_llm_flags(parser, model_help="the judge model", engine_choices=engine_choices)
    parser.add_argument("--concurrency", type=LLM_CALLS, help="most judge calls in flight at once")


def judge_settings(args: argparse.Namespace) -> Settings:
    """Settings for a judge model from its command's flags: always at temperature 0, so the same
    conversation gets the same labels whichever command judged it.

    Raises:
        SettingsError: a flag's value is invalid (the message names the flag).
    """
    return settings_from(args, JUDGE_FLAGS, {"temperature": 0.0})
