"""``playground storm``: run (or resume) dyadic STORM runs, simulated user × assistant.

A batch is profiles × uncertainties × profile-access modes (:mod:`playground.storm.run`). The
same command again resumes it: finished dialogues are skipped, interrupted or failed ones redone.
Input that cannot be used (an unknown engine, a bad uncertainty, an unreadable profile directory,
an unreachable server) is reported in one line, with exit code 2, before anything is written.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from playground import errors, runs
from playground.cli import progress as progress_cli
from playground.cli import signals as interrupts
from playground.cli.flag_ranges import (
    BATCH_CONCURRENCY,
    PROBABILITY,
    PROFILES,
    SEED,
    Number,
    setting,
)
from playground.cli.flags import (
    LLM_FLAGS,
    add_db_flags,
    add_llm_flags,
    settings_from,
)
from playground.domain.simulated_user import Difficulty, UserProfile
from playground.experiments.protocol import parse_shard
from playground.settings import Settings
from playground.storage.database import open_for_reading

if TYPE_CHECKING:
    from playground.experiments import runner as experiment
    from playground.storm import run as storm_run

# The runner, the room and the engines load in the command's functions, not with the parser:
# every other command's start-up would pay for them.

ACCESS_MODES = {"off": (False,), "on": (True,), "both": (False, True)}
#: Exit code of input that cannot be used (as argparse's own).
BAD_INPUT = 2
#: User turns per dialogue.
TURNS = Number(1, 200)


def add_parser(sub: Any, default_db: str, busy_timeout: float) -> None:
    """The ``storm`` subcommand."""
    x = sub.add_parser(
        "storm",
        help="dyadic STORM runs: a simulated user with a hidden state talks with an assistant",
        description="Runs simulated users (private profile, hidden state every turn) against an"
        " assistant that sees the dialogue only, or the profile with the uncertainty share"
        " masked (--profile-access). A batch is profiles × uncertainties × profile-access modes;"
        " rerunning the same command resumes it. See `playground report --storm`.",
    )
    x.add_argument("--task", help='a task, e.g. "Buy a smartphone" (default: across all 15)')
    x.add_argument(
        "--difficulty",
        type=setting(Difficulty, "content"),
        help="1 (precise) to 5 (ambiguous) on all four dimensions (default: each drawn by seed)",
    )
    x.add_argument("--uncertainty", help="percent of attributes unknown to the user: 0, 40, 60, 80")
    x.add_argument("--uncertainties", metavar="LIST", help="several levels, e.g. 0,40,60,80")
    x.add_argument(
        "--profile-access",
        action="store_true",
        help="the assistant also sees the profile, with the unknown attributes masked",
    )
    x.add_argument(
        "--profile-access-modes",
        metavar="both|on|off",
        help="run with and without profile access (both), or only one (default off)",
    )
    x.add_argument("--turns", type=TURNS, default=10, help="user turns per dialogue (default 10)")
    x.add_argument(
        "--profiles", type=PROFILES, metavar="N", help="generate N profiles by seed (default 1)"
    )
    x.add_argument("--profiles-dir", metavar="DIR", help="use the saved profiles in DIR instead")
    x.add_argument(
        "--assistant",
        default="plain",
        metavar="plain|inner-thoughts",
        help="a plain model (default) or an Inner Thoughts agent in the assistant role",
    )
    x.add_argument(
        "--reply-limit",
        default="cut",
        metavar="cut|keep",
        help="an assistant reply over 150 characters: cut at a word boundary (default) or keep",
    )
    x.add_argument(
        "--user-speak-probability",
        type=PROBABILITY,
        default=1.0,
        metavar="P",
        help="the user's chance of writing again after the assistant stayed silent (default 1)",
    )
    x.add_argument("--seed", type=SEED, default=1)
    x.add_argument(
        "--concurrency",
        type=BATCH_CONCURRENCY,
        help=f"dialogues in flight at once (default {runs.MODEL_CONCURRENCY} with a model,"
        f" {runs.OFFLINE_CONCURRENCY} offline)",
    )
    x.add_argument("--shard", metavar="K/N", help="run every N-th profile starting at K (0-based)")
    add_llm_flags(x, model_help="the simulated user's model", engine_choices=False)
    x.add_argument("--agent-model", help="the assistant's model (default: --model)")
    x.add_argument("--judge-model", help="the judge's model (default: --model)")
    x.add_argument("--no-judge", action="store_true", help="do not judge the dialogues")
    x.add_argument("--http", default="auto", help="auto, aiohttp or httpx (as for `experiment`)")
    add_db_flags(x, default_db, busy_timeout)
    x.add_argument("--name", help="a label for the batch")
    progress_cli.add_flag(x)


# -- reading the flags ---------------------------------------------------------------------------


def _choice(text: str, flag: str, allowed: tuple[str, ...]) -> Any:
    """Raises: SettingsError naming the flag."""
    value = str(text).strip()
    if value not in allowed:
        raise errors.SettingsError(f"{flag}: {text!r}: choose {' or '.join(allowed)}")
    return value


def uncertainties_of(args: argparse.Namespace) -> tuple[int, ...]:
    """``--uncertainties`` or ``--uncertainty`` (not both); 0 when neither.

    Raises:
        SettingsError: a value that is not a level, or both flags given.
    """
    if args.uncertainty is not None and args.uncertainties is not None:
        raise errors.SettingsError("--uncertainty and --uncertainties: give one of them, not both")
    if args.uncertainties is not None:
        parts = [p.strip() for p in str(args.uncertainties).split(",") if p.strip()]
        flag = "--uncertainties"
    else:
        parts = [str(args.uncertainty if args.uncertainty is not None else 0)]
        flag = "--uncertainty"
    values = []
    for p in parts:
        try:
            values.append(int(p.rstrip("%")))
        except ValueError:
            raise errors.SettingsError(
                f"{flag}: {p!r} is not an uncertainty level; choose from 0, 40, 60, 80"
            ) from None
    from playground.storm import run as storm_run

    return storm_run.check_uncertainties(values, flag)


def access_of(args: argparse.Namespace) -> tuple[bool, ...]:
    """Raises: SettingsError for an unknown mode, or a mode that contradicts --profile-access."""
    mode = args.profile_access_modes
    if mode is None:
        return (True,) if args.profile_access else (False,)
    mode = str(mode).strip().lower()
    if mode not in ACCESS_MODES:
        raise errors.SettingsError(
            f"--profile-access-modes: {args.profile_access_modes!r} is not a mode; choose both,"
            " on or off"
        )
    if args.profile_access and mode == "off":
        raise errors.SettingsError(
            "--profile-access and --profile-access-modes off contradict each other"
        )
    return ACCESS_MODES[mode]


def assistant_of(args: argparse.Namespace) -> storm_run.AssistantKind:
    """Raises: SettingsError for an unknown kind."""
    from playground.storm import run as storm_run

    kind = str(args.assistant).strip()
    for k in storm_run.ASSISTANTS:
        if k == kind:
            return k
    raise errors.SettingsError(
        f"--assistant: {kind!r} is not an assistant; choose {' or '.join(storm_run.ASSISTANTS)}"
    )


def profiles_of(args: argparse.Namespace, seed: int) -> tuple[UserProfile, ...]:
    """The users: loaded from ``--profiles-dir``, or ``--profiles`` N generated by seed for
    ``--task`` (or round the 15 tasks when none is given) at ``--difficulty``.

    Raises:
        SettingsError: a bad flag, or a directory with no profile.
        ProfileError: a profile file that cannot be used (names the file and field).
    """

    if args.profiles_dir is not None:
        for flag in ("task", "difficulty", "profiles"):
            if getattr(args, flag) is not None:
                raise errors.SettingsError(
                    f"--{flag} and --profiles-dir: the saved profiles already have their tasks"
                    " and difficulties; give one or the other"
                )
        return runs.saved_profiles(args.profiles_dir, "--profiles-dir")
    return runs.generated_profiles(
        seed,
        1 if args.profiles is None else int(args.profiles),
        task=args.task,
        difficulty=None if args.difficulty is None else int(args.difficulty),
    )


def settings_of(args: argparse.Namespace) -> Settings:
    """Raises: SettingsError naming the flag."""
    from playground.experiments import runner as experiment

    return settings_from(
        args,
        LLM_FLAGS,
        {
            "preset": experiment.PRESET,
            "evaluation_mode": experiment.EVALUATION_MODE,
        },
    )


def protocol_of(args: argparse.Namespace, settings: Settings) -> storm_run.StormProtocol:
    """Raises: SettingsError naming the flag; ProfileError for a bad profile file."""

    seed = int(args.seed)
    return runs.storm_protocol(
        settings,
        profiles=profiles_of(args, seed),
        uncertainties=uncertainties_of(args),
        profile_access=access_of(args),
        turns=int(args.turns),
        seed=seed,
        assistant=assistant_of(args),
        reply_limit=_choice(args.reply_limit, "--reply-limit", ("cut", "keep")),
        user_speak_probability=float(args.user_speak_probability),
        agent_model=args.agent_model,
        judge_model=args.judge_model,
    )


# -- running -------------------------------------------------------------------------------------


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command, with Ctrl-C and SIGTERM handled as for ``experiment``."""
    return interrupts.run_interruptible(run(args, out, err), err)


async def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from playground.storm import summary

    try:
        settings = settings_of(args)
        protocol = protocol_of(args, settings)
        shard = parse_shard(args.shard) if args.shard else (0, 1)
        offline = settings.engine.engine == "offline"
        models = await runs.storm_models(
            settings,
            protocol,
            judge_model=None if args.no_judge else (args.judge_model or settings.llm.model),
            http=str(args.http),
        )
    except errors.PlaygroundError as exc:
        print(f"error: {exc}", file=err)
        return BAD_INPUT
    from playground.cli.experiment import _Bar, batch_options, exit_code, tell_outcome

    bar = _Bar(err, enabled=not args.no_progress)
    p = protocol

    def header(runner: experiment.Runner) -> None:
        print(
            f"STORM batch {runner.id}"
            + (f" ({args.name})" if args.name else "")
            + f": {len(p.profiles)} profile{'s' if len(p.profiles) != 1 else ''} ×"
            f" {', '.join(p.conditions)}; {p.turns} turns, {p.assistant} assistant, seed {p.seed},"
            f" {models.user_engine.label}"
            + ("" if offline else f", user {p.model}, assistant {p.agent_model}")
            + (f", shard {shard[0]}/{shard[1]}" if shard != (0, 1) else ""),
            file=err,
            flush=True,
        )
        if offline:
            print("Offline engine: no judge runs (Clarify and SSA need a judge model).", file=err)
        elif models.judge is None:
            print(
                "--no-judge: the dialogues are not judged (`playground storm-judge` later).",
                file=err,
            )

    end = await runs.run_storm(settings, protocol, models, batch_options(args, shard, bar, header))
    failed = tell_outcome(end.progress, err, "dialogue")

    rdb = open_for_reading(args.db)
    try:
        print(summary.format_summary(summary.summarise(rdb, end.batch_id)), file=out)
    finally:
        rdb.close()
    print(
        f"Full report: playground report --storm --db {args.db}"
        + ("" if offline else " (Clarify and SSA from the judge)"),
        file=err,
    )
    print(end.batch_id, file=out, flush=True)
    return exit_code(failed, end.batch_id, err, "dialogue")
