"""Dyadic STORM runs: a simulated user talks with an assistant, as a resumable batch.

docs/spec.md §2.1 and §2.9; STORM paper §2.2 and §3.1. A batch is profiles × uncertainties ×
profile-access modes (its design: :mod:`playground.storm.protocol`). It runs on the experiment machinery
(:class:`playground.experiments.runner.Runner`: queue, concurrency, resumability through
``experiment_runs``, interrupted and failed runs, progress, shards); each dialogue's design is its
``storm_dialogues`` row, written in the transaction that opens the session and its run row (so a
killed process never leaves a dialogue row without its run, nor a run without its design), and
the dialogue itself is run by :mod:`playground.storm.dyad` (what a turn is, when a dialogue ends).
A dialogue counts once its run row is ``finished``, written after the judge; a rerun redoes any
other, replacing its session (see :mod:`playground.experiments.runner`).

After each dialogue on a model engine the judge (:mod:`playground.storm.judge`) rates its turn
pairs unless ``judge`` is off; the offline engine has no judge (the command says so).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Unpack

import sqlite_utils

from playground import domain, errors
from playground.cognition.user import UserSimulator
from playground.domain.simulated_user import UserProfile
from playground.experiments import runner as experiment
from playground.experiments.protocol import Draw
from playground.settings import PRESETS, Settings
from playground.storage.writes import immediate
from playground.storm import assistant as assistant_mod
from playground.storm.dyad import open_dialogue, run_dialogue, seat_user
from playground.storm.protocol import (
    ASSISTANTS,
    POLICY,
    USER_SPEAK_PROBABILITY,
    AssistantKind,
    StormProtocol,
    check_uncertainties,
    condition_label,
    draws,
)

if TYPE_CHECKING:
    from playground.embedding.cache import CachingEmbedder
    from playground.llm.client import ChatClient

#: Re-exported: the design and the room side lived here first.
__all__ = [
    "ASSISTANTS",
    "POLICY",
    "USER_SPEAK_PROBABILITY",
    "AssistantKind",
    "Models",
    "StormProtocol",
    "StormRunner",
    "build_models",
    "check_uncertainties",
    "condition_label",
    "draws",
    "open_dialogue",
    "run_dialogue",
    "seat_user",
]


@dataclasses.dataclass
class Models:
    """What a batch runs on: the user's and the assistant's minds and clients, and the judge.

    Args:
        user_engine: the engine of the user's model (its client makes the user's calls; its
            embedder is shared by everything).
        assistant_client: the assistant model's client (the user's when the models are the
            same; None offline).
        simulator: makes a simulated user's turns for a given dialogue seed.
        judge: rates a finished dialogue's turn pairs (None: no judge).
    """

    user_engine: Any
    assistant_client: Any
    simulator: Callable[[int], UserSimulator]
    judge: Callable[[sqlite_utils.Database, str], Awaitable[Any]] | None = None
    #: Clients other than the user engine's (another model for the assistant or the judge).
    extra_clients: list[Any] = dataclasses.field(default_factory=list)

    async def close(self) -> None:
        for c in self.extra_clients:
            await c.close()
        await self.user_engine.close()


async def build_models(
    settings: Settings,
    protocol: StormProtocol,
    *,
    judge_model: str | None,
    http: str = "httpx",
    embedder: CachingEmbedder | None = None,
) -> Models:
    """The user's engine, the assistant's client, the simulator and the judge of a batch.

    One client per model over the same server (the user's engine's for the user's model); each
    is probed once, so a wrong model name is reported before anything runs. Every call of a
    dialogue, whichever client makes it, is counted in that dialogue's usage scope.

    Args:
        settings: the server and the user's model (``settings.llm.model``).
        protocol: the batch (its assistant model).
        judge_model: the judge's model, or None for no judge (always None offline).
        http: the HTTP library of the clients.
        embedder: the local embedder to share (one is made when None).

    Raises:
        LLMError: a server or model that cannot be used.
        SettingsError: a bad base URL or HTTP library.
    """
    from playground import factory
    from playground.storm import judge, user

    user_engine = await factory.build_engine(settings, embedder=embedder, http=http)
    clients: dict[str, ChatClient] = {}
    try:
        if user_engine.client is not None:
            clients[settings.llm.model] = user_engine.client
            for model in (protocol.agent_model,):
                if model is not None and model not in clients:
                    llm = settings.llm.model_copy(update={"model": model})
                    c = factory.make_chat_client(
                        settings.model_copy(update={"llm": llm}), http=http
                    )
                    clients[model] = c
                    c.logprobs_supported = await c.probe()
            if judge_model is not None:
                # A client of its own at temperature 0, like `playground storm-judge`: the same
                # pairs get the same labels whichever command judged them.
                llm = settings.llm.model_copy(update={"model": judge_model, "temperature": 0.0})
                c = factory.make_chat_client(settings.model_copy(update={"llm": llm}), http=http)
                clients[f"judge:{judge_model}"] = c
                c.logprobs_supported = await c.probe()
    except BaseException:
        for c in clients.values():
            await c.close()  # the user engine's client among them
        raise
    judge_client = clients.get(f"judge:{judge_model}") if judge_model is not None else None

    async def judge_one(db: sqlite_utils.Database, session_id: str) -> Any:
        assert judge_client is not None
        return await judge.judge_session(db, session_id, judge_client)

    def simulator(seed: int) -> UserSimulator:
        return user.simulator_for(user_engine, seed=seed)

    return Models(
        user_engine=user_engine,
        assistant_client=clients.get(protocol.agent_model),
        simulator=simulator,
        judge=judge_one if judge_client is not None else None,
        extra_clients=[c for c in clients.values() if c is not user_engine.client],
    )


class StormRunner(experiment.Runner):
    """Runs (or resumes) a batch of dyadic STORM runs into a database.

    The queue, concurrency, resumability, shards, progress and the bookkeeping of each run
    (opening its session, usage, finished / failed / interrupted) are
    :class:`experiment.Runner`'s; this class supplies the design (:func:`draws`, the conditions
    of :class:`StormProtocol`) and the dialogue (:meth:`_conversation`).

    Args:
        db: the session database.
        protocol: the batch.
        settings: engine, model, server and limits (the user's model is ``settings.llm.model``).
        models: the minds and clients the dialogues run on (see :class:`Models`).
        **options: :class:`experiment.Runner`'s (:class:`experiment.RunOptions`), passed on:
            ``concurrency``, dialogues in flight at once (4 unless given); ``shard``, (K, N) to
            run every N-th profile starting at K; ``name``, a label for the batch;
            ``on_progress``, called after every change of :attr:`progress`.
    """

    job_noun = "profile"
    stopped_reason = "the batch was stopped"

    def __init__(
        self,
        db: sqlite_utils.Database,
        protocol: StormProtocol,
        settings: Settings,
        models: Models,
        **options: Unpack[experiment.RunOptions],
    ) -> None:
        options.setdefault("concurrency", 4)
        # The base class reads only ``experiment_id`` of its protocol; everything that reads
        # more (config, design, conditions, turns, the conversation) is overridden here.
        super().__init__(
            db,
            protocol,  # type: ignore[arg-type]
            settings,
            models.user_engine,
            **options,
        )
        self.storm = protocol
        self.models = models
        self._cells = protocol.cells()
        #: Dialogues whose judge failed (their sessions stay finished): session id → error.
        self.judge_errors: dict[str, str] = {}

    # -- the design ------------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        return {
            "kind": "storm",
            "protocol": {
                **self.storm.model_dump(mode="json"),
                # what `playground experiments` lists for any experiment
                "conditions": list(self.storm.conditions),
                "conversations": len(self.storm.profiles),
                "agents": 2,
            },
            "settings": self.settings.snapshot(),
        }

    def design(self) -> list[Draw]:
        return draws(self.storm)

    def conditions(self) -> tuple[str, ...]:
        return self.storm.conditions

    def profile_for(self, draw: Draw, uncertainty: int) -> UserProfile:
        """The draw's profile with ``uncertainty`` percent of its attributes unknown to the user
        (drawn by the draw's seed, so every access mode masks the same attributes)."""
        from playground.storm import profiles

        base = self.storm.profiles[draw.index]
        return profiles.with_uncertainty(base, uncertainty, draw.seed)

    # -- one dialogue ----------------------------------------------------------------------------

    def _max_turns(self) -> int:
        return 2 * self.storm.turns  # each user turn and the assistant's answer

    def _record_design(
        self, session_id: str, profile: UserProfile, uncertainty: int, access: bool
    ) -> None:
        p = self.storm
        with immediate(self.db):
            self.db.execute(
                "INSERT OR REPLACE INTO storm_dialogues (session_id, experiment_id, user_name,"
                " profile_id, category, task, difficulty, uncertainty, profile_access, assistant,"
                " assistant_model, user_model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    session_id,
                    self.id,
                    profile.name,
                    profile.id,
                    profile.task.category,
                    profile.task.task,
                    profile.difficulty.level,
                    uncertainty,
                    int(access),
                    p.assistant,
                    p.agent_model,
                    p.model,
                ],
            )

    async def _conversation(self, attempt: experiment.Attempt) -> None:
        """One dialogue: the user with the condition's uncertainty, the assistant with or
        without the masked profile, then the judge.

        Raises:
            PlaygroundError: the dialogue could not be run (the job is recorded failed).
        """
        from playground import factory

        job = attempt.job
        uncertainty, access = self._cells[job.condition]
        settings = self._settings_for(job.draw)
        profile = self.profile_for(job.draw, uncertainty)
        view = profile.masked() if access else None
        user_engine = self.models.user_engine
        inner = factory.make_cognition(settings, user_engine.embedder, self.models.assistant_client)
        mind = assistant_mod.AssistantCognition(
            inner,
            client=self.models.assistant_client,
            embedder=user_engine.embedder,
            view=view if self.storm.assistant == "plain" else None,
            seed=job.draw.seed,
            cut=self.storm.reply_limit == "cut",
        )
        policy = POLICY[self.storm.assistant]
        engine = dataclasses.replace(user_engine, cognition=mind, model=self.storm.agent_model)
        with self.opening(attempt):
            room = self._open_room(attempt, settings, engine, domain.condition_of([policy]))
            self._record_design(room.session_id, profile, uncertainty, access)
        with self._usage_scope(room):
            # the usage scope is the task's: the assistant's client is counted in it too
            seat_user(
                room,
                profile,
                self.models.simulator(job.draw.seed),
                speak_probability=self.storm.user_speak_probability,
            )
            await room.add_agent(
                assistant_mod.assistant_persona(
                    view if self.storm.assistant == "inner-thoughts" else None
                ),
                PRESETS[settings.preset],
                policy=policy,
            )
            await run_dialogue(room, user=profile.name, turns=self.storm.turns)
            if self.models.judge is not None and room.status == "finished":
                await self._judge(room.session_id)

    async def _judge(self, session_id: str) -> None:
        """Rate a finished dialogue's turn pairs; a judge that fails is reported, and the
        dialogue stays finished (rerun ``playground storm-judge`` for it)."""
        assert self.models.judge is not None
        try:
            await self.models.judge(self.db, session_id)
        except errors.RecordingError:
            raise
        except errors.PlaygroundError as exc:
            self.judge_errors[session_id] = str(exc)
            self.progress.errors += 1
            self.progress.last_error = f"judge of {session_id}: {exc}"
