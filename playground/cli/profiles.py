"""``playground profiles generate`` (write profile files) and ``playground profiles list``."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any, TextIO

from playground import errors
from playground.cli import signals as interrupts
from playground.cli.flag_ranges import MAX_RETRIES, PROFILES, SEED, TIMEOUT, setting
from playground.cli.flags import LLM_FLAGS, settings_from
from playground.domain import simulated_user as model
from playground.storm import compose, profile_files


def add_parsers(sub: Any) -> None:
    """The ``profiles`` subcommand and its ``generate`` and ``list``."""
    p = sub.add_parser(
        "profiles",
        help="simulated users' profiles (STORM): generate files, list a directory",
        description="Simulated users' profiles are TOML files, by default in"
        f" {profile_files.DEFAULT_DIR}.",
    )
    ps = p.add_subparsers(dest="profiles_command")
    g = ps.add_parser(
        "generate",
        help="draw profiles from the paper's pools (and enrich them with a model)",
        description="Draws profiles from the STORM value pools, reproducibly by seed, and writes"
        " one file per profile (<task>-s<seed>.toml). With a model (--engine openai) each is"
        " enriched: name, description, task attributes, requirements, success criteria, examples.",
    )
    g.add_argument("--n", type=PROFILES, default=1, help="profiles per task (seeds S, S+1, ...)")
    g.add_argument("--seed", type=SEED, default=1)
    g.add_argument(
        "--task",
        help="one of the 15 tasks (any case), your own words (category custom), or 'all' for one"
        " per task; default: a task drawn by seed",
    )
    g.add_argument(
        "--difficulty",
        type=setting(model.Difficulty, "content"),
        help="1 (precise) to 5 (ambiguous) on all four dimensions; default: each drawn by seed",
    )
    g.add_argument(
        "--uncertainty",
        default="0",
        help="share of attributes unknown to the user, 0, 40, 60 or 80 (a comma-separated list"
        " is used in turn: 0,40,60,80)",
    )
    g.add_argument(
        "--vague-by",
        choices=compose.VAGUE_BY,
        default="content",
        help="the difficulty dimension that makes requirements vague: content (default) or the"
        " overall level (the mean of the four)",
    )
    g.add_argument("--out", default=str(profile_files.DEFAULT_DIR), help="directory to write to")
    g.add_argument("--engine", choices=["offline", "openai"])
    g.add_argument("--model")
    g.add_argument("--base-url")
    g.add_argument("--api-key", help="API key (else $OPENAI_API_KEY); never stored")
    g.add_argument("--timeout", type=TIMEOUT, help="seconds per LLM call")
    g.add_argument("--max-retries", type=MAX_RETRIES)
    ls = ps.add_parser("list", help="the profiles of a directory, and its bad files")
    ls.add_argument("dir", nargs="?", default=str(profile_files.DEFAULT_DIR), metavar="DIR")


def cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``profiles generate`` or ``profiles list``.

    Raises:
        PlaygroundError: a bad flag (named), an unusable server, a file that cannot be written.
    """
    if args.profiles_command == "generate":
        return interrupts.run_interruptible(generate(args, out, err), err)
    if args.profiles_command == "list":
        return list_profiles(Path(args.dir), out, err)
    print("usage: playground profiles {generate,list} ...", file=err)
    return 2


def _uncertainties(text: str) -> list[int]:
    """Raises: SettingsError naming ``--uncertainty`` and the value."""
    from playground.storm import profiles

    values: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        try:
            values.append(profiles.check_uncertainty(int(part)))
        except (ValueError, errors.SettingsError) as exc:
            allowed = ", ".join(str(u) for u in model.UNCERTAINTIES)
            raise errors.SettingsError(
                f"--uncertainty: {part!r} is not one of {allowed}", field="uncertainty"
            ) from exc
    return values


def plan(args: argparse.Namespace) -> list[model.UserProfile]:
    """The offline profiles the flags ask for, in order (names unique within the batch).

    Raises:
        SettingsError: a flag out of range, naming it.
    """
    from playground.storm import profiles

    if args.n < 1:
        raise errors.SettingsError(f"--n: must be at least 1 (got {args.n})")
    if args.difficulty is not None and not 1 <= args.difficulty <= 5:
        raise errors.SettingsError(f"--difficulty: {args.difficulty} is not a level from 1 to 5")
    uncertainties = _uncertainties(args.uncertainty)
    if args.task is None:
        tasks: list[str | None] = [None]
    elif args.task.strip().casefold() == "all":
        tasks = [t for _, t in profiles.all_tasks()]
    else:
        try:
            tasks = [profiles.find_task(args.task)[1]]
        except errors.SettingsError as exc:
            raise errors.SettingsError(f"--task: {exc.reason}", field="task") from exc
    made: list[model.UserProfile] = []
    for i in range(args.n):
        for task in tasks:
            made.append(
                profiles.generate_profile(
                    args.seed + i,
                    task=task,
                    difficulty=args.difficulty,
                    uncertainty=uncertainties[len(made) % len(uncertainties)],
                    avoid_names=[p.name for p in made],
                    vague_by=args.vague_by,
                )
            )
    return made


async def generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Raises: PlaygroundError (a bad flag, an unusable server, an unwritable directory)."""
    from playground.storm import profiles

    made = plan(args)
    settings = settings_from(args, LLM_FLAGS)
    source = "offline pools"
    if settings.engine.engine != "offline":
        from playground import factory

        client = factory.make_chat_client(settings)
        source = client.model
        notes: list[str] = []
        try:
            made = list(
                await asyncio.gather(
                    *(
                        profiles.enrich_profile(p, client, vague_by=args.vague_by, notes=notes)
                        for p in made
                    )
                )
            )
        finally:
            await client.close()
        for note in notes:
            print(f"note: {note}", file=err)
    directory = Path(args.out)
    for p in made:
        path = profiles.save_profile(p, directory)
        print(path, file=out, flush=True)
    print(f"{len(made)} profile(s) written to {directory} ({source}).", file=err)
    return 0


def list_profiles(directory: Path, out: TextIO, err: TextIO) -> int:
    """A table of a directory's profiles; bad files are listed with their error (exit 1).

    Raises:
        ProfileError: the directory is missing or unreadable.
    """
    found = profile_files.scan_profiles(directory)
    if not found:
        print(f"No profiles in {directory}.", file=out)
        return 0
    rows = [("FILE", "NAME", "TASK", "DIFFICULTY S/L/C/T", "UNCERTAINTY")]
    bad: list[tuple[Path, errors.ProfileError]] = []
    for path, item in found:
        if isinstance(item, errors.ProfileError):
            bad.append((path, item))
            continue
        d = item.difficulty
        rows.append(
            (
                path.name,
                item.name,
                item.task.task if len(item.task.task) <= 40 else item.task.task[:39] + "…",
                f"{d.style}/{d.length}/{d.content}/{d.tone} (level {d.level})",
                f"{item.uncertainty} %",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=out)
    for path, exc in bad:
        print(f"{path.name}: error: {exc}", file=out)
    if bad:
        print(f"error: {len(bad)} of {len(found)} profile files cannot be used", file=err)
        return 1
    return 0
