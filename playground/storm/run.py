"""Dyadic STORM runs: a simulated user talks with an assistant, as a resumable batch.

SPEC.md §2, storm.txt §2.2 and §3.1. A batch is profiles × uncertainties × profile-access modes.
It runs on the experiment machinery (:class:`playground.experiment.Runner`: queue, concurrency,
resumability through ``experiment_runs``, interrupted and failed runs, progress, shards):

- a **draw** is one profile: ``experiment_draws`` holds ``participants = [user, "Assistant"]``,
  ``initiator = user`` and ``icebreaker = the task``; its seed drives that profile's dialogues;
- a **condition** is one (uncertainty, profile access) pair, labelled e.g. ``u40/profile`` (the
  assistant sees the masked profile) or ``u40/no-profile`` (the dialogue only); every profile
  runs under every condition (a paired design, as the paper's Table 2 compares them);
- each dialogue's design is its ``storm_dialogues`` row, written when the session opens.

**A turn** is one message of the user and the assistant's answer to it (the paper's turn pair
analysis reads turns the same way): ``--turns 10`` is 10 user messages, each followed by the
assistant's reply, so a plain assistant's dialogue has 20 messages and ends with a reply that no
later hidden state rates. The user opens the dialogue. **An Inner Thoughts assistant may stay
silent**: the step passes silently, and at the next step (a pause) the user, who speaks with
probability 1 in a dyadic run, writes again; that message is its next turn. So its dialogue has
``--turns`` user messages and at most as many replies. A dialogue also ends after
``max_silent_steps`` silent steps in a row (4 by default), and it ends once the user has had its
last turn and the assistant has answered it or stayed silent once.

After each dialogue on a model engine the judge (:mod:`playground.storm.judge`) rates its turn
pairs unless ``judge`` is off; the offline engine has no judge (the command says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import sqlite_utils
from pydantic import BaseModel, ConfigDict, Field

from playground import domain, errors, events, experiment, loops
from playground.room import Room
from playground.settings import PRESETS, Settings
from playground.storm import assistant as assistant_mod
from playground.storm.model import UNCERTAINTIES, UserProfile
from playground.storm.user import UserSimulator

if TYPE_CHECKING:
    from playground.embedding.cache import CachingEmbedder
    from playground.llm.client import ChatClient

AssistantKind = Literal["plain", "inner-thoughts"]
ASSISTANTS: tuple[AssistantKind, ...] = ("plain", "inner-thoughts")
#: The assistant's turn-taking policy by kind: the plain assistant answers when addressed (in a
#: dyad, always), the Inner Thoughts assistant decides by its motivation.
POLICY: dict[AssistantKind, domain.Policy] = {
    "plain": "reactive",
    "inner-thoughts": "inner-thoughts",
}
#: The simulated user's speak probability in a dyad: it always writes when it is its turn.
USER_SPEAK_PROBABILITY = 1.0


def condition_label(uncertainty: int, access: bool) -> str:
    """``u40/profile`` (the assistant sees the masked profile) or ``u40/no-profile``."""
    return f"u{uncertainty}/{'profile' if access else 'no-profile'}"


class StormProtocol(BaseModel):
    """What defines a batch of dyadic STORM runs; its id is a hash of this.

    ``profiles`` are the users as drawn or loaded (before each uncertainty is applied);
    ``model`` is the user's model, ``agent_model`` the assistant's (both ``offline`` on the
    offline engine). The judge is not part of it: judging never changes a dialogue.
    """

    model_config = ConfigDict(frozen=True)

    profiles: tuple[UserProfile, ...] = Field(min_length=1)
    uncertainties: tuple[int, ...] = Field(min_length=1)
    profile_access: tuple[bool, ...] = Field(min_length=1)
    turns: int = Field(ge=1, le=200)
    seed: int
    assistant: AssistantKind = "plain"
    #: An assistant reply over 150 characters: ``cut`` at a word boundary, or ``keep`` it whole.
    reply_limit: Literal["cut", "keep"] = "cut"
    #: The user's chance of writing again after an Inner Thoughts assistant stayed silent.
    user_speak_probability: float = Field(USER_SPEAK_PROBABILITY, ge=0, le=1)
    engine: str
    model: str
    agent_model: str
    base_url: str | None = None

    @property
    def experiment_id(self) -> str:
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return "s" + hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def conditions(self) -> tuple[str, ...]:
        """Every (uncertainty, access) label, uncertainty first."""
        return tuple(condition_label(u, a) for u in self.uncertainties for a in self.profile_access)

    def cells(self) -> dict[str, tuple[int, bool]]:
        """Each condition label's (uncertainty, profile access)."""
        return {
            condition_label(u, a): (u, a) for u in self.uncertainties for a in self.profile_access
        }


def check_uncertainties(values: Sequence[int], flag: str = "--uncertainties") -> tuple[int, ...]:
    """The paper's levels, each once, in the order given.

    Raises:
        SettingsError: a value that is not one of 0, 40, 60, 80 (named with the flag).
    """
    out: list[int] = []
    for u in values:
        if u not in UNCERTAINTIES:
            raise errors.SettingsError(
                f"{flag}: {u} is not an uncertainty level; choose from"
                f" {', '.join(str(x) for x in UNCERTAINTIES)} (percent of unknown attributes)"
            )
        if u not in out:
            out.append(u)
    if not out:
        raise errors.SettingsError(f"{flag}: give at least one uncertainty level")
    return tuple(out)


def draws(protocol: StormProtocol) -> list[experiment.Draw]:
    """One draw per profile: the user, the assistant, the user opening with the task."""
    out = []
    for i, p in enumerate(protocol.profiles):
        rng = random.Random(f"{protocol.seed}:storm:{i}")
        out.append(
            experiment.Draw(
                index=i,
                seed=rng.randrange(2**31),
                participants=(p.name, assistant_mod.ASSISTANT_NAME),
                initiator=p.name,
                icebreaker=p.task.task,
            )
        )
    return out


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

    def simulator(seed: int) -> user.UserSimulator:
        if user_engine.client is None:
            return user.OfflineUserSimulator(user_engine.embedder, seed)
        return user.LLMUserSimulator(user_engine.client)

    return Models(
        user_engine=user_engine,
        assistant_client=clients.get(protocol.agent_model),
        simulator=simulator,
        judge=judge_one if judge_client is not None else None,
        extra_clients=[c for c in clients.values() if c is not user_engine.client],
    )


class StormRunner(experiment.Runner):
    """Runs (or resumes) a batch of dyadic STORM runs into a database.

    The queue, concurrency, resumability, shards and progress are :class:`experiment.Runner`'s;
    this class supplies the design (:func:`draws`, the conditions of :class:`StormProtocol`) and
    the dialogue.

    Args:
        db: the session database.
        protocol: the batch.
        settings: engine, model, server and limits (the user's model is ``settings.llm.model``).
        models: the minds and clients the dialogues run on (see :class:`Models`).
        concurrency: dialogues in flight at once.
        shard: (K, N) to run every N-th profile starting at K.
        name: a label for the batch.
        on_progress: called after every change of :attr:`progress`.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        protocol: StormProtocol,
        settings: Settings,
        models: Models,
        *,
        concurrency: int = 4,
        shard: tuple[int, int] = (0, 1),
        name: str | None = None,
        on_progress: Callable[[experiment.Progress], None] | None = None,
    ) -> None:
        # The base class reads only ``experiment_id`` of its protocol; everything that reads
        # more (config, design, conditions, the conversation) is overridden here.
        super().__init__(
            db,
            protocol,  # type: ignore[arg-type]
            settings,
            models.user_engine,
            concurrency=concurrency,
            shard=shard,
            name=name,
            on_progress=on_progress,
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

    def design(self) -> list[experiment.Draw]:
        return draws(self.storm)

    def conditions(self) -> tuple[str, ...]:
        return self.storm.conditions

    def profile_for(self, draw: experiment.Draw, uncertainty: int) -> UserProfile:
        """The draw's profile with ``uncertainty`` percent of its attributes unknown to the user
        (drawn by the draw's seed, so every access mode masks the same attributes)."""
        from playground.storm import profiles

        base = self.storm.profiles[draw.index]
        return profiles.with_uncertainty(base, uncertainty, draw.seed)

    # -- one dialogue ----------------------------------------------------------------------------

    def _dialogue_settings(self, draw: experiment.Draw) -> Settings:
        s = self.settings
        return s.model_copy(
            update={
                "preset": experiment.PRESET,
                "engine": s.engine.model_copy(
                    update={"seed": draw.seed, "evaluation_mode": experiment.EVALUATION_MODE}
                ),
                "room": s.room.model_copy(update={"max_turns": 2 * self.storm.turns}),
            }
        )

    def _record_design(
        self, session_id: str, profile: UserProfile, uncertainty: int, access: bool
    ) -> None:
        p = self.storm
        with self.db.atomic():
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

    async def _one(self, job: experiment.Job) -> None:
        from playground import factory

        uncertainty, access = self._cells[job.condition]
        bus = events.EventBus()
        errors_seen: list[str] = []
        bus.subscribe(
            lambda e: errors_seen.append(e.message) if isinstance(e, events.ErrorOccurred) else None
        )
        room: Room | None = None
        prog = self.progress.conditions[job.condition]
        self.progress.running += 1
        self._notify()
        try:
            self._forget_attempt(job)
            settings = self._dialogue_settings(job.draw)
            profile = self.profile_for(job.draw, uncertainty)
            view = profile.masked() if access else None
            user_engine = self.models.user_engine
            inner = experiment._mind_for(
                dataclasses.replace(user_engine, client=self.models.assistant_client), settings
            )
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
            room, _ = factory.open_room(
                settings,
                engine,
                db=self.db,
                bus=bus,
                condition=factory.condition_of([policy]),
                experiment_id=self.id,
                draw=job.draw.index,
                track_usage=False,
            )
            self._mark(job, "running", room.session_id, None)
            self._record_design(room.session_id, profile, uncertainty, access)
            client = user_engine.client
            scope = (
                client.usage_scope(
                    experiment._both(room.record_usage, self._usage_of(room.session_id))
                )
                if client is not None
                else contextlib.nullcontext()
            )
            with scope:
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
            self._mark(job, "finished", room.session_id, None)
            prog.done += 1
        except asyncio.CancelledError:
            if room is not None:
                room.finish("interrupted", "the batch was stopped")
                self._mark(job, "interrupted", room.session_id, "the batch was stopped")
            raise
        except errors.RecordingError:
            raise
        except Exception as exc:  # noqa: BLE001 - one dialogue's failure never stops the batch
            message = (
                str(exc)
                if isinstance(exc, errors.PlaygroundError)
                else f"{type(exc).__name__}: {exc}"
            )
            if room is not None and room.status == "running":
                room.finish("failed", message)
            self._mark(job, "failed", room.session_id if room else None, message)
            prog.failed += 1
            self.progress.last_error = f"profile {job.draw.index} ({job.condition}): {message}"
        finally:
            self.progress.errors += len(errors_seen)
            self.progress.running -= 1
            self._notify()

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


# -- the room side -------------------------------------------------------------------------------


def seat_user(
    room: Room,
    profile: UserProfile,
    simulator: UserSimulator,
    *,
    speak_probability: float = USER_SPEAK_PROBABILITY,
) -> None:
    """Seat the simulated user. It answers every reply (the dyad rule addresses it); after a
    silent step it writes again with ``speak_probability`` (1 by default).

    Raises:
        PlaygroundError: the profile's name is the assistant's, or already taken.
    """
    if profile.name == assistant_mod.ASSISTANT_NAME:
        raise errors.ProfileError(
            profile.id, "name", f"{profile.name!r} is the assistant's name in a dyadic run"
        )
    room.add_simulated_user(profile, simulator, speak_probability=speak_probability)


async def run_dialogue(room: Room, *, user: str, turns: int) -> str:
    """The user opens, then user and assistant alternate until the user has had ``turns`` turns
    and the assistant has answered the last one (or stayed silent once); see the module's notes.

    Returns the session's final status.

    Raises:
        LLMError: the server could not be used; the session is marked failed first.
        RecordingError: the database cannot be written.
    """
    s = room.settings.room
    try:
        await open_dialogue(room, user)
        silent = 0
        while True:
            loops.check_recording(room)
            said = sum(1 for m in room.messages if m.speaker == user)
            last = room.messages[-1] if room.messages else None
            if said >= turns and (silent or (last is not None and last.speaker != user)):
                room.finish("finished", f"{turns} user turns")
                break
            if silent >= s.max_silent_steps:
                room.finish("finished", f"{silent} silent steps in a row")
                break
            if room.stop_requested:
                room.finish("interrupted", "stopped")
                break
            msg = await room.step_once(silent_steps=silent)
            silent = 0 if msg else silent + 1
    except asyncio.CancelledError:
        room.finish("interrupted", "cancelled")
        raise
    except errors.RecordingError as exc:
        loops.fail_unrecorded(room, exc)
        raise
    except errors.PlaygroundError as exc:
        room.emit(
            events.ErrorOccurred(where="dialogue", message=str(exc), error_type=type(exc).__name__)
        )
        room.finish("failed", str(exc))
        raise
    return room.status


async def open_dialogue(room: Room, user: str) -> None:
    """The simulated user's first message (its turn 0), from its profile and task.

    Raises:
        PlaygroundError: ``user`` is not a simulated user of the room.
        LLMError: the user's model could not be used.
    """
    await room.simulated_turn(user)
