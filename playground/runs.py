"""The runs behind ``playground simulate``, ``experiment`` and ``storm``, one implementation each.

The commands wrap them in flags and printing (``playground/cli/``), the Python API in typed calls
(:mod:`playground.api.running`). What a run tells as it goes (loading, the batch's header, the
usage at the end) reaches its caller through callbacks, so the same code runs quietly for a
notebook and loudly for a terminal.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from playground import domain, errors, events, gc_tuning, personas
from playground.settings import Settings
from playground.storage import open_database

if TYPE_CHECKING:
    import sqlite_utils

    from playground.domain.simulated_user import UserProfile
    from playground.embedding.cache import CachingEmbedder
    from playground.experiments.protocol import ExperimentProtocol
    from playground.experiments.runner import Progress, Runner
    from playground.storm.protocol import AssistantKind, StormProtocol
    from playground.storm.run import Models

#: A database path as the commands and the API take it.
DbPath = str | os.PathLike[str]

#: The offline engine is CPU-bound: on 2 cores more conversations in flight only add CPU time
#: (bench/bench_experiment.py: 130, 142 and 156 CPU-seconds for 100 conversations at 1, 2 and 8).
OFFLINE_CONCURRENCY = 2
#: Conversations (or dialogues) in flight at once with a model server.
MODEL_CONCURRENCY = 8


@dataclass(frozen=True)
class RunEnd:
    """How a simulation ended, for whoever started it to report.

    Attributes:
        session_id: the saved session; None when none was opened, or when its writes failed (a
            run that was not saved has no id to show).
        usage: the model client's totals; None on the offline engine (no client).
        server: what the server was found to accept, in one line; None offline.
    """

    session_id: str | None
    usage: domain.Usage | None
    server: str | None


@dataclass(frozen=True)
class BatchEnd:
    """A batch (an experiment or a STORM batch) that ran: its id and its final progress."""

    batch_id: str
    progress: Progress


def _quiet(_: str) -> None:
    """Says nothing (the default of ``say``)."""


def start_local_embedder(settings: Settings) -> CachingEmbedder | None:
    """The local MiniLM embedder when the settings use it, already loading in its own thread.

    torch and the model load from now on while the rest of the run starts up (the openai
    import, the server probe): start-up costs the longer of the two. None for remote embeddings.

    Unlike :func:`playground.factory.local_embedder`, which always returns the local embedder and
    leaves it to load on first use, this one looks at the settings (None when the server embeds)
    and starts loading at once.
    """
    if settings.engine.engine != "offline" and settings.engine.embeddings != "local":
        return None
    from playground.embedding.cache import CachingEmbedder
    from playground.embedding.minilm import MiniLMEmbedder

    minilm = MiniLMEmbedder()
    minilm.start_loading()
    return CachingEmbedder(minilm)


def draw_icebreaker(directory: str | os.PathLike[str], seed: int) -> str:
    """The icebreaker of a simulation with ``seed``: a seeded choice from the directory's
    icebreakers (``playground simulate`` without ``--icebreaker``).

    Raises:
        PersonaError: the icebreakers file cannot be read.
    """
    return random.Random(f"{seed}:icebreaker").choice(
        personas.load_icebreakers(os.fspath(directory))
    )


def seat_count_check(library: Sequence[domain.Persona], agents: int, where: str, flag: str) -> None:
    """Raises: SettingsError naming ``flag`` when ``library`` (read from ``where``) has fewer
    personas than ``agents``."""
    if agents > len(library):
        raise errors.SettingsError(
            f"{flag}: {agents} asked but {where} has only {len(library)} personas"
        )


async def simulate_session(
    settings: Settings,
    library: Sequence[domain.Persona],
    *,
    agents: int,
    icebreaker: str,
    db: DbPath,
    busy_timeout: float,
    bus: events.EventBus | None = None,
    say: Callable[[str], None] = _quiet,
    on_end: Callable[[RunEnd], None] | None = None,
) -> RunEnd:
    """Run one conversation headless into the database ``db`` (``playground simulate``).

    ``agents`` personas of ``library`` are seated (a choice seeded by the settings' seed; all of
    them when there are no more). The session row exists once the room opens: from then on an
    interruption (Ctrl-C, a cancelled task) ends it ``interrupted``, and ``on_end`` is called
    even then, after the engine closed and before the database does.

    Args:
        settings: the engine, the room and the seed.
        library: the personas to choose from.
        agents: how many to seat.
        icebreaker: the first message.
        db: the session database (created when missing).
        busy_timeout: seconds a write waits for another program's lock.
        bus: where the run's events go besides the database (a live transcript).
        say: told what the run is waiting for (loading the embedding model, connecting).
        on_end: told how the run ended, also when it failed or was interrupted.

    Returns:
        How it ended.

    Raises:
        PlaygroundError: a server that cannot be used, a database that cannot be written.
    """
    from playground.room import loops

    embedder = start_local_embedder(settings)  # loading in its thread while the rest starts
    from playground import factory  # the engines' imports (openai, torch) only when simulating

    database = open_database(db, busy_timeout=busy_timeout)
    say(
        "Loading the embedding model…"
        if settings.engine.engine == "offline" or settings.engine.embeddings == "local"
        else "Connecting…"
    )
    try:
        engine = await factory.build_engine(settings, embedder=embedder)
    except BaseException:
        database.close()
        raise
    bus = bus if bus is not None else events.EventBus()
    room = None
    end = RunEnd(None, None, None)
    try:
        # The session row exists from open_room on, while the agents still wait for the model:
        # a signal from here on ends it `interrupted` in the `finally` below, with its id told.
        room, _ = factory.open_room(settings, engine, db=database, bus=bus)
        # Memories are embedded in the background: the icebreaker and its interpretation (LLM
        # calls) go ahead while the model still loads, and the first retrieval waits for it.
        await factory.add_agents(
            room,
            settings,
            factory.pick_personas(list(library), agents, settings.engine.seed),
            defer_memories=True,
        )
        await loops.run_simulation(room, icebreaker=icebreaker)
    finally:
        # A write that failed ends the run `failed` (the caller says why): never `interrupted`.
        unsaved = bus.failure
        if room is not None and isinstance(unsaved, errors.RecordingError):
            loops.fail_unrecorded(room, unsaved)
        elif room is not None and room.status == "running":
            room.finish("interrupted", "the command was stopped")
        await engine.close()
        if room is not None:
            client = engine.client
            end = RunEnd(
                room.session_id if unsaved is None else None,
                client.usage if client is not None else None,
                client.profile.summary() if client is not None else None,
            )
            if on_end is not None:
                on_end(end)
        database.close()
    return end


# -- batches: what ``experiment`` and ``storm`` share ------------------------------------------


def batch_concurrency(settings: Settings, given: int | None) -> int:
    """Runs in flight at once: ``given``, else 2 offline (CPU-bound) and 8 with a model (the
    runner checks that it is at least 1)."""
    if given is None:
        return OFFLINE_CONCURRENCY if settings.engine.engine == "offline" else MODEL_CONCURRENCY
    return given


@contextlib.asynccontextmanager
async def batch_database(
    db: DbPath, busy_timeout: float, close: Callable[[], Awaitable[None]]
) -> AsyncIterator[sqlite_utils.Database]:
    """A batch's database, closed with the batch's engine (``close``) when the batch ends; the
    engine is closed too when the database cannot be opened.

    Raises:
        PlaygroundError: the database cannot be opened.
    """
    try:
        database = open_database(db, busy_timeout=busy_timeout)
    except BaseException:
        await close()
        raise
    try:
        yield database
    finally:
        await close()
        database.close()


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs, besides what it is (its protocol).

    Attributes:
        db: the database (created when missing).
        busy_timeout: seconds a write waits for another program's lock.
        concurrency: runs in flight at once (None: :func:`batch_concurrency`'s default).
        shard: (K, N): only every N-th draw starting at K.
        name: a label for the batch.
        on_progress: told the progress after each run and each call.
        on_start: told the runner once it holds the batch's id, before any run starts.
        display: entered around the runs (the command line's progress bar).
    """

    db: DbPath
    busy_timeout: float
    concurrency: int | None = None
    shard: tuple[int, int] = (0, 1)
    name: str | None = None
    on_progress: Callable[[Progress], None] | None = None
    on_start: Callable[[Runner], None] | None = None
    display: contextlib.AbstractContextManager[object] | None = None


async def _run_batch(
    runner_class: Callable[..., Runner],
    protocol: object,
    settings: Settings,
    minds: object,
    options: BatchOptions,
    close: Callable[[], Awaitable[None]],
) -> BatchEnd:
    """Open the database, make the runner (an experiment's over an engine, a STORM batch's over
    its models: ``minds``), run it (resuming what an earlier run left) and close ``close``."""
    async with batch_database(options.db, options.busy_timeout, close) as database:
        runner = runner_class(
            database,
            protocol,
            settings,
            minds,
            concurrency=batch_concurrency(settings, options.concurrency),
            shard=options.shard,
            name=options.name,
            on_progress=options.on_progress,
        )
        if options.on_start is not None:
            options.on_start(runner)
        with options.display or contextlib.nullcontext(), gc_tuning.batch():
            progress = await runner.run()
    return BatchEnd(runner.id, progress)


def check_conditions(conditions: Iterable[str], flag: str) -> tuple[domain.Policy, ...]:
    """The conditions as policies, each once, in the order given.

    Raises:
        SettingsError: an unknown condition, or none (named by ``flag``).
    """
    out: list[domain.Policy] = []
    for c in conditions:
        policy = next((p for p in domain.POLICIES if p == c), None)
        if policy is None:
            raise errors.SettingsError(
                f"{flag}: unknown condition {c!r}; choose from {', '.join(domain.POLICIES)}"
            )
        if policy not in out:
            out.append(policy)
    if not out:
        raise errors.SettingsError(f"{flag}: give at least one condition")
    return tuple(out)


async def run_experiment(
    settings: Settings,
    protocol: ExperimentProtocol,
    options: BatchOptions,
    *,
    http: str = "auto",
) -> BatchEnd:
    """Run (or resume) an experiment (``playground experiment``).

    Args:
        settings: the engine and server.
        protocol: the experiment.
        options: the database, concurrency, shard, name and what to tell as it goes.
        http: the HTTP library for the model server (auto, aiohttp, httpx).

    Returns:
        The experiment's id and its final progress.

    Raises:
        SettingsError: a concurrency below 1; LLMError: an unusable server;
        PlaygroundError: a database that cannot be opened or written.
    """
    from playground.experiments import runner as experiment

    embedder = start_local_embedder(settings)
    from playground import factory

    # an unusable server: stop here
    engine = await factory.build_engine(
        settings, embedder=embedder, http=factory.http_library(http)
    )

    return await _run_batch(experiment.Runner, protocol, settings, engine, options, engine.close)


def generated_profiles(
    seed: int, n: int, *, task: str | None = None, difficulty: int | None = None
) -> tuple[UserProfile, ...]:
    """``n`` simulated users generated by seed for ``task`` (round the 15 tasks when None) at
    ``difficulty`` (each dimension drawn by seed when None), as ``playground storm --profiles``.

    Raises:
        SettingsError: an unknown task or difficulty.
    """
    from playground.storm import profiles

    if task is not None:
        tasks = [profiles.find_task(task)[1]]
    else:
        tasks = [t for _, t in profiles.all_tasks()]
    out: list[UserProfile] = []
    for i in range(n):
        s = random.Random(f"{seed}:profile:{i}").randrange(2**31)
        out.append(
            profiles.generate_profile(
                s,
                task=tasks[i % len(tasks)],
                difficulty=difficulty,
                avoid_names=[p.name for p in out],
            )
        )
    return tuple(out)


def saved_profiles(directory: str | os.PathLike[str], flag: str) -> tuple[UserProfile, ...]:
    """The STORM profiles saved in ``directory``.

    Raises:
        SettingsError: not a directory, or none in it (named by ``flag``); ProfileError: a bad
            profile file.
    """
    from playground.storm import profiles

    path = Path(directory)
    if not path.is_dir():
        raise errors.SettingsError(f"{flag}: {path} is not a directory")
    found = profiles.load_profiles(path)
    if not found:
        raise errors.SettingsError(f"{flag}: {path} holds no profile (*.toml)")
    return tuple(found)


def storm_protocol(
    settings: Settings,
    *,
    profiles: tuple[UserProfile, ...],
    uncertainties: tuple[int, ...],
    profile_access: tuple[bool, ...],
    turns: int,
    seed: int,
    assistant: AssistantKind,
    reply_limit: Literal["cut", "keep"],
    user_speak_probability: float,
    agent_model: str | None,
    judge_model: str | None,
) -> StormProtocol:
    """The STORM batch of these values (``uncertainties`` already checked: see
    :func:`playground.storm.protocol.check_uncertainties`).

    Raises:
        SettingsError: a model named for the offline engine.
    """
    from playground.storm import run as storm_run

    offline = settings.engine.engine == "offline"
    if offline and (agent_model or judge_model):
        flag = "--agent-model" if agent_model else "--judge-model"
        raise errors.SettingsError(f"{flag}: the offline engine has no models; use --engine openai")
    return storm_run.StormProtocol(
        profiles=profiles,
        uncertainties=uncertainties,
        profile_access=profile_access,
        turns=turns,
        seed=seed,
        assistant=assistant,
        reply_limit=reply_limit,
        user_speak_probability=user_speak_probability,
        engine=settings.engine.engine,
        model="offline" if offline else settings.llm.model,
        agent_model="offline" if offline else (agent_model or settings.llm.model),
        base_url=None if offline else settings.snapshot()["llm"]["base_url"],  # type: ignore[index]
    )


async def storm_models(
    settings: Settings, protocol: StormProtocol, *, judge_model: str | None, http: str = "auto"
) -> Models:
    """The models of a STORM batch: the user's engine, the assistant's client, the judge (never
    offline; None for no judge).

    Raises:
        SettingsError: a bad HTTP library; LLMError: an unusable server or model.
    """
    from playground import factory
    from playground.storm import run as storm_run

    if http not in ("auto", "aiohttp", "httpx"):
        raise errors.SettingsError(f"--http: {http!r}: choose auto, aiohttp or httpx")
    return await storm_run.build_models(
        settings,
        protocol,
        judge_model=judge_model if settings.engine.engine != "offline" else None,
        http=factory.http_library(http),
        embedder=start_local_embedder(settings),
    )


async def run_storm(
    settings: Settings, protocol: StormProtocol, models: Models, options: BatchOptions
) -> BatchEnd:
    """Run (or resume) a STORM batch (``playground storm``) on models from :func:`storm_models`,
    which are closed when it ends.

    Raises:
        SettingsError: a bad concurrency; PlaygroundError: a database that cannot be opened.
    """
    from playground.storm import run as storm_run

    return await _run_batch(
        storm_run.StormRunner, protocol, settings, models, options, models.close
    )
