"""Running from Python: ``pg.simulate``, ``pg.experiment`` and ``pg.storm``, blocking in a script
and awaitable in a notebook.

Each run is the command's own (:mod:`playground.runs`), with the command's defaults and
settings, except that the engine is the offline one unless ``engine``, ``base_url`` or
``api_key`` asks for a model server (the commands also switch to a server when
``$OPENAI_API_KEY`` or ``$OPENAI_BASE_URL`` is set; a notebook should not spend money because a
variable happens to be set).

**Blocking in a script, awaitable in a notebook.** With no event loop running (a script, a
test), :func:`simulate` runs to the end and returns its result. Inside a running loop (Jupyter,
an ``async def``), where ``asyncio.run`` cannot be called, it starts the run as a task on that
loop and returns the :class:`asyncio.Task`: ``result = await pg.simulate(...)``. The
``*_async`` forms (:func:`simulate_async`...) are plain coroutines, typed for code that awaits
them.

Each returns a typed result read back from the database, the same figures as ``playground show
--json``: the session id(s), how each ended and why, and the usage (calls, tokens, dropped and
cut answers).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeAlias, TypeVar, Unpack

from playground import domain, errors, events, runs
from playground import personas as personas_lib
from playground.api import options as keywords
from playground.api import people, results
from playground.settings import EngineSettings as EngineSettings
from playground.settings import LLMSettings as LLMSettings
from playground.settings import RoomSettings as RoomSettings
from playground.settings import Settings as Settings
from playground.storage.database import DEFAULT_BUSY_TIMEOUT, DEFAULT_DB, open_for_reading

if TYPE_CHECKING:
    from playground.domain.simulated_user import UserProfile

T = TypeVar("T")
P = ParamSpec("P")

#: What a run returns: its result when no loop was running, else the task running it.
Outcome: TypeAlias = "T | asyncio.Task[T]"

#: Tasks started in a running loop, kept until they end (the loop holds only weak references).
_STARTED: set[asyncio.Task[Any]] = set()


def blocking_or_task(work: Coroutine[Any, Any, T]) -> Outcome[T]:
    """Run ``work`` to the end when no event loop is running; else start it as a task on the
    running loop and return the task (``await`` it for the result).

    A notebook's loop is already running, where ``asyncio.run`` fails; a task started there runs
    whether or not it is awaited, and is kept referenced until it ends.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    task = loop.create_task(work)
    _STARTED.add(task)
    task.add_done_callback(_STARTED.discard)
    return task


def blocking_or_awaitable(
    run: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Outcome[T]]:
    """``run`` (an ``async def``) as a function taking the same arguments that blocks with no
    loop running and returns a task inside one (see :func:`blocking_or_task`)."""

    @functools.wraps(run)
    def call(*args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        return blocking_or_task(run(*args, **kwargs))

    signature = inspect.signature(run)
    result = signature.return_annotation
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        return_annotation=f"{result} | asyncio.Task[{result}]"
    )
    summary, _, rest = (run.__doc__ or "").partition("\n\n")
    call.__doc__ = (
        f"{summary}\n\n    The blocking form of ``{run.__name__}`` (the same arguments): with no"
        " event loop running it runs to the end and returns the result; inside a running loop (a"
        " notebook) it returns the :class:`asyncio.Task` running it, to ``await``.\n\n" + rest
    )
    return call


# -- simulate ---------------------------------------------------------------------------------


async def simulate_async(
    personas: Sequence[domain.Persona] | str | os.PathLike[str] | None = None,
    *,
    agents: int | None = None,
    turns: int | None = None,
    seed: int | None = None,
    preset: str | None = None,
    icebreaker: str | None = None,
    evaluation_mode: Literal["batched", "per-thought"] | None = None,
    max_silent_steps: int | None = None,
    db: runs.DbPath = DEFAULT_DB,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    on_event: events.Handler | None = None,
    **server: Unpack[keywords.ServerOptions],
) -> results.SessionResult:
    """Run one conversation and save it: ``playground simulate``.

    Args:
        personas: who may take part: personas built in code (all seated, in this order, unless
            ``agents`` picks fewer), or a directory of persona files (default: ``personas/``).
        agents: how many to seat, a seeded choice (default 4 from a directory, else all given).
        turns: messages to post, the icebreaker included (default 15).
        seed: the seed of the seating, the icebreaker and the engine (default 0).
        preset: the proactivity preset of every agent (default ``simulation``).
        icebreaker: the first message (default: a seeded choice of the icebreakers).
        evaluation_mode: one rating call per thought (default) or per agent.
        max_silent_steps: stop after this many silent steps in a row (default 4).
        db: the session database (default: the commands' ``sessions/playground.db``).
        busy_timeout: seconds a write waits for another program's lock.
        on_event: called with every event of the run as it happens (messages, thoughts...).
        **server: the engine and server (:class:`~playground.api.options.ServerOptions`).

    Returns:
        The saved session.

    Raises:
        SettingsError: a value out of range, named by its keyword.
        PersonaError: a persona that cannot be used, named with its field.
        LLMError: a server that cannot be used.
        PlaygroundError: a database that cannot be written.
    """
    run_settings = keywords.run_settings(
        server,
        seed=seed,
        preset=preset,
        max_turns=turns,
        evaluation_mode=evaluation_mode,
        max_silent_steps=max_silent_steps,
    )
    keywords.positive("agents", agents)
    where = personas_lib.DEFAULT_DIR if personas is None else personas
    if isinstance(where, (str, os.PathLike)):
        source = os.fspath(where)
        library = personas_lib.load_personas(source)
        seats = 4 if agents is None else agents
    else:
        source, library = "the personas given", _checked(where)
        seats = len(library) if agents is None else agents
    runs.seat_count_check(library, seats, source, "agents")
    if icebreaker is None:
        icebreaker = runs.draw_icebreaker(
            where if isinstance(where, (str, os.PathLike)) else personas_lib.DEFAULT_DIR,
            run_settings.engine.seed,
        )
    bus = events.EventBus()
    if on_event is not None:
        bus.subscribe(on_event)
    end = await runs.simulate_session(
        run_settings,
        library,
        agents=seats,
        icebreaker=icebreaker,
        db=db,
        busy_timeout=busy_timeout,
        bus=bus,
    )
    if end.session_id is None:  # a run whose writes failed raises before this
        raise errors.PlaygroundError("the session was not saved")
    rdb = open_for_reading(db)
    try:
        return results.session_result(rdb, end.session_id)
    finally:
        rdb.close()


#: :func:`simulate_async`, blocking with no loop running, else the task running it (``await`` it).
simulate = blocking_or_awaitable(simulate_async)


def _checked(given: Sequence[domain.Persona]) -> list[domain.Persona]:
    """The personas given, as a list.

    Raises:
        SettingsError: no persona, something else than a persona, or a name given twice.
    """
    library = list(given)
    if not library:
        raise errors.SettingsError("personas: give at least one persona")
    seen: set[str] = set()
    for p in library:
        if not isinstance(p, domain.Persona):
            raise errors.SettingsError(
                f"personas: {p!r} is not a Persona (build one with pg.persona(name, facts))"
            )
        if p.name.casefold() in seen:
            raise errors.SettingsError(f"personas: the name {p.name!r} is given twice")
        seen.add(p.name.casefold())
    return library


# -- experiment -------------------------------------------------------------------------------


async def experiment_async(
    conditions: Sequence[domain.Policy] = ("inner-thoughts", "next-speaker"),
    *,
    conversations: int = 50,
    agents: int = 4,
    turns: int = 15,
    seed: int = 1,
    personas: Sequence[domain.Persona] | str | os.PathLike[str] | None = None,
    **options: Unpack[keywords.BatchOptions],
) -> results.BatchResult:
    """Run (or resume) the simulation study: every condition over the same draws of
    participants, initiator and icebreaker (``playground experiment``). The same call again
    resumes it: finished conversations are skipped.

    Args:
        conditions: the turn-taking policies compared (default Inner Thoughts and next-speaker).
        conversations: per condition (default 50).
        agents: participants per conversation (default 4).
        turns: messages per conversation (default 15).
        seed: the seed of the draws (default 1).
        personas: a directory of persona files (default ``personas/``), or personas built in
            code (each enriched with facts borrowed from the others, as the files' are).
        **options: the engine, server and batch (:class:`~playground.api.options.BatchOptions`); the study's preset and
            per-thought ratings always apply, as for the command.

    Returns:
        The experiment, run by run, with each run's session.

    Raises:
        SettingsError: a value out of range or an unknown condition, named by its keyword.
        PersonaError: a persona file that cannot be used, named with its field.
        LLMError: a server that cannot be used.
        PlaygroundError: a database that cannot be written.
    """
    from playground.experiments.protocol import build_protocol

    chosen = keywords.named(lambda: runs.check_conditions(conditions, "--conditions"))
    default = personas_lib.DEFAULT_DIR
    where = default if personas is None else personas
    batch = keywords.batch_options(options)
    run_settings = keywords.study_settings(options)
    protocol = keywords.named(
        lambda: build_protocol(
            run_settings,
            conditions=chosen,
            conversations=conversations,
            agents=agents,
            turns=turns,
            seed=seed,
            personas_dir=os.fspath(where if isinstance(where, (str, os.PathLike)) else default),
            library=None if isinstance(where, (str, os.PathLike)) else _checked(where),
        )
    )
    end = await runs.run_experiment(run_settings, protocol, batch, http=options.get("http", "auto"))
    return results.batch_result("experiment", batch.db, end)


#: :func:`experiment_async`, blocking with no loop running, else the task running it.
experiment = blocking_or_awaitable(experiment_async)


# -- storm ------------------------------------------------------------------------------------


async def storm_async(
    profiles: int | Sequence[UserProfile] = 1,
    *,
    task: str | None = None,
    difficulty: int | None = None,
    uncertainties: Sequence[int] = (0,),
    profile_access: Sequence[bool] = (False,),
    turns: int = 10,
    assistant: Literal["plain", "inner-thoughts"] = "plain",
    reply_limit: Literal["cut", "keep"] = "cut",
    user_speak_probability: float = 1.0,
    seed: int = 1,
    judge: bool = True,
    judge_model: str | None = None,
    agent_model: str | None = None,
    **options: Unpack[keywords.BatchOptions],
) -> results.BatchResult:
    """Run (or resume) dyadic STORM runs, a simulated user with a hidden state talking with an
    assistant (``playground storm``): profiles × uncertainties × profile-access modes.

    Args:
        profiles: the users: N generated by seed (default 1; see
            :func:`~playground.api.people.generate_profiles`) or profiles built in code or
            loaded (:func:`~playground.api.people.load_profiles`).
        task: the generated users' task (default: round the 15 tasks).
        difficulty: the generated users' difficulty, 1 to 5 (default: drawn by seed).
        uncertainties: percent of attributes unknown to the user: some of 0, 40, 60, 80.
        profile_access: whether the assistant sees the masked profile; ``(False, True)`` both.
        turns: user turns per dialogue (default 10).
        assistant: a plain model or an Inner Thoughts agent.
        reply_limit: an assistant reply over 150 characters is cut at a word or kept.
        user_speak_probability: the user's chance of writing again after a silent assistant.
        seed: the seed of the profiles and dialogues (default 1).
        judge: judge the dialogues (never offline, which has no judge model).
        judge_model: the judge's model (default: ``model``).
        agent_model: the assistant's model (default: ``model``).
        **options: the engine, server and batch (:class:`~playground.api.options.BatchOptions`).

    Returns:
        The batch, dialogue by dialogue.

    Raises:
        SettingsError: a value out of range, named by its keyword.
        ProfileError: a profile that cannot be used, named with its field.
        LLMError: a server or model that cannot be used.
        PlaygroundError: a database that cannot be written.
    """
    from playground.storm import run as storm_run

    if isinstance(profiles, int):
        users = people.generate_profiles(profiles, seed=seed, task=task, difficulty=difficulty)
    elif task is not None or difficulty is not None:
        raise errors.SettingsError(
            "task and difficulty: the profiles given already have theirs; give one or the other"
        )
    else:
        users = tuple(profiles)
    if not users:
        raise errors.SettingsError("profiles: give at least one profile")
    keywords.positive("turns", turns)
    if not 0 <= user_speak_probability <= 1:
        raise errors.SettingsError(
            f"user_speak_probability: must be 0 to 1 (got {user_speak_probability})"
        )
    if not profile_access:
        raise errors.SettingsError("profile_access: give True, False or both")
    batch = keywords.batch_options(options)
    run_settings = keywords.study_settings(options)
    protocol = keywords.named(
        lambda: runs.storm_protocol(
            run_settings,
            profiles=users,
            uncertainties=storm_run.check_uncertainties(list(uncertainties), "uncertainties"),
            profile_access=tuple(dict.fromkeys(bool(a) for a in profile_access)),
            turns=turns,
            seed=seed,
            assistant=assistant,
            reply_limit=reply_limit,
            user_speak_probability=user_speak_probability,
            agent_model=agent_model,
            judge_model=judge_model,
        )
    )
    models = await runs.storm_models(
        run_settings,
        protocol,
        judge_model=(judge_model or run_settings.llm.model) if judge else None,
        http=options.get("http", "auto"),
    )
    end = await runs.run_storm(run_settings, protocol, models, batch)
    return results.batch_result("storm", batch.db, end)


#: :func:`storm_async`, blocking with no loop running, else the task running it.
storm = blocking_or_awaitable(storm_async)
