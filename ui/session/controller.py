"""SessionController: the GUI's commands to the engine, and the boundary that turns failures into messages.

One class, composed of the parts it holds (each a plain class with an explicit constructor, not a
base or a mixin):

- :attr:`SessionController.embedding` (:class:`ui.session.embedding.EmbeddingModel`): the
  embedding model, handed in ready or loaded in the background;
- :attr:`SessionController.room_commands` (:class:`ui.session.room_commands.RoomCommands`): the
  live room's participants and the agents' minds;
- :attr:`SessionController.simulated` (:class:`ui.session.simulated.SimulatedUsers`): STORM
  profiles and simulated users;
- :attr:`SessionController.study` (:class:`ui.session.study.StudyHost`): invited people in
  browsers;
- the run state, derived from the controller's facts (:mod:`ui.session.run_state`).

The parts see the controller as :class:`ui.session.live.LiveSession`: the session on screen and
the failure boundary (:meth:`SessionController.guarded`). The controller itself owns the state
(settings, engine, room, recorder, the running task), the resources (personas, databases) and the
session's life: set-up (a new session, a fork), run control, the human participant, shutdown.
Signals are the controller's: the window connects to one object.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, Signal

from playground import domain, errors, events, factory, personas
from playground.room import loops
from playground.room.room import Room
from playground.room.run_control import RunControl
from playground.settings import PRESETS, Settings, load_settings
from playground.storage import open_database
from playground.storage.database import DEFAULT_DB
from playground.urls import redact
from ui.bridge import EngineBridge
from ui.session.embedding import EmbeddingModel
from ui.session.room_commands import RoomCommands
from ui.session.run_state import RunState, state_of
from ui.session.simulated import SimulatedSeat, SimulatedUsers
from ui.session.study import StudyHost

if TYPE_CHECKING:
    import sqlite_utils

    from playground.embedding.cache import CachingEmbedder
    from playground.history.recording import Recording
    from playground.storage.recorder import SessionRecorder

log = logging.getLogger(__name__)

T = TypeVar("T")


class SessionController(QObject):
    """Owns the current session: settings, engine, room, recorder and the running task.

    Every command is an ``async`` method; failures become ``error`` signals with a message that
    names what is wrong, and the session keeps everything it had.

    Args:
        bridge: Re-emits the session's engine events as Qt signals (attached to each new bus).
        db_path: The session database (created on first use).
        personas_dir: The persona library (default: the packaged personas).
        environ: The environment settings are read from (default: the process's).
        embedder: An embedding model ready to use (already loaded): nothing is loaded then.
            None: the packaged MiniLM is loaded in the background (:meth:`EmbeddingModel.start`).
        parent: The Qt parent (the window, once it is built).
    """

    error = Signal(str)
    notice = Signal(str)
    session_changed = Signal(str)  # session id
    running_changed = Signal(bool)
    mode_changed = Signal(str)  # "simulation" | "realtime"
    engine_changed = Signal(str)  # label for the status bar
    embedder_ready = Signal()
    pace_changed = Signal(str)  # "fast" | "typing"
    about_to_start = Signal()  # a new session replaces the current one: views start afresh
    busy_changed = Signal(str)  # what a session's set-up waits for ("" once it waits no more)
    thought_deleted_by_user = Signal(str, int)  # agent, thought id: the window offers an undo
    session_refused = Signal(str)  # a change to this ended session was refused (session id)

    def __init__(
        self,
        bridge: EngineBridge,
        *,
        db_path: str | os.PathLike[str] = DEFAULT_DB,
        personas_dir: str | None = None,
        environ: Mapping[str, str] | None = None,
        embedder: CachingEmbedder | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.db_path = db_path
        self.personas_dir = personas_dir or str(personas.DEFAULT_DIR)
        self.environ = dict(os.environ if environ is None else environ)
        self.settings: Settings = load_settings(self.environ)
        self.api_key: str | None = None  # a key typed in the window: kept in memory only
        self.db: sqlite_utils.Database | None = None
        self.engine: factory.Engine | None = None
        self.room: Room | None = None
        self.recorder: SessionRecorder | None = None
        self.control = RunControl()
        self.task: asyncio.Task[Any] | None = None
        self.mode = "simulation"
        self.human: str | None = None
        self.closed = False
        self._other_dbs: dict[str, sqlite_utils.Database] = {}
        #: Done when the set-up of a new session (or fork) in progress ends: Run and Step wait for it.
        self._setup: asyncio.Future[None] | None = None
        self.stepping = False  # a Step's trigger is in flight (see ui.session.run_state)
        #: The engine and model of the session on screen (None: no session): what the status
        #: bar names, whatever the Engine dialog has set for the next session since.
        self.session_engine: str | None = None
        #: The speed before a person joined (joining slows the agents to typing speed): the
        #: next session gets it back instead of inheriting the human session's.
        self._pace_before_join: str | None = None
        # -- the parts -------------------------------------------------------------------------------
        #: The embedding model every session shares.
        self.embedding = EmbeddingModel(
            ready=embedder, on_loaded=self.embedder_ready.emit, on_failed=self.error.emit
        )
        #: The live room's participants and the agents' minds (Participants, thoughts, memories).
        self.room_commands = RoomCommands(
            self, notify=self.notice.emit, thought_deleted=self.thought_deleted_by_user.emit
        )
        #: STORM profiles and simulated users.
        self.simulated = SimulatedUsers(
            self, personas_dir=self.personas_dir, notify=self.notice.emit
        )
        #: Invited people in browsers (Session ▸ Invite people…): serves the live session.
        self.study = StudyHost(self, parent=self)

    # -- boundary ----------------------------------------------------------------------------------

    async def guarded(self, what: str, fn: Callable[[], Awaitable[T]]) -> T | None:
        """Run a command; expected failures become one clear message (None is returned), never
        a crash."""
        try:
            return await fn()
        except errors.RecordingError as exc:
            await self._stop_unsaved(exc)
            self.error.emit(f"{what}: {exc}")
        except errors.SessionEnded as exc:
            self.error.emit(f"{what}: {exc}")
            if self.room is not None:
                self.session_refused.emit(self.room.session_id)  # the window offers a way on
        except errors.PlaygroundError as exc:
            self.error.emit(f"{what}: {exc}")
        except Exception as exc:
            # The GUI boundary: an unexpected bug is logged and shown, and the window stays usable.
            log.exception("%s failed", what)
            self.error.emit(f"{what} failed unexpectedly: {type(exc).__name__}: {exc}")
        return None

    async def _stop_unsaved(self, exc: errors.RecordingError) -> None:
        """The database could not be written: the session ends failed (a run must not go on unsaved)."""
        if self.room is not None and self.room.status == "running":
            loops.fail_unrecorded(self.room, exc)
        await self._cancel_task()

    async def _cancel_task(self) -> None:
        if self.task is not None and not self.task.done():
            # Stop the loop as well as cancelling it: on 3.11 wait_for can swallow a cancellation.
            # The session's status was settled by the caller.
            if self.room is not None:
                self.room.stop()
            self.task.cancel()
            # The task's own errors were already reported.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        self.task = None
        self.running_changed.emit(False)

    def require_room(self) -> Room:
        """The session on screen.

        Raises:
            PlaygroundError: there is none (the message says how to get one).
        """
        if self.room is None:
            raise errors.PlaygroundError(
                "there is no live session: start a new one, or fork a replay from its current moment"
            )
        return self.room

    def require_live_room(self) -> Room:
        """The session on screen, if it has not ended.

        Raises:
            PlaygroundError: there is no session.
            SessionEnded: it has ended (the message says how and when).
        """
        room = self.require_room()
        room.require_open()
        return room

    # -- resources -----------------------------------------------------------------------------------

    def library(self) -> list[domain.Persona]:
        return personas.load_personas(self.personas_dir)

    def save_persona(self, persona: domain.Persona) -> None:
        """Write an edited persona back to the library. Raises PersonaError naming what is wrong."""
        personas.save_persona(persona, self.personas_dir)

    def icebreakers(self) -> list[str]:
        return personas.load_icebreakers(self.personas_dir)

    def database(self) -> sqlite_utils.Database:
        if self.db is None:
            self.db = open_database(self.db_path)
        return self.db

    def database_at(self, path: str | os.PathLike[str]) -> sqlite_utils.Database:
        """The database at ``path``: the session database itself, or another one the user opened
        (kept open; never created). Raises PlaygroundError naming the file when it cannot be used."""
        if Path(path).resolve() == Path(self.db_path).resolve():
            return self.database()
        key = str(Path(path).resolve())
        if key not in self._other_dbs:
            self._other_dbs[key] = open_database(path, create=False)
        return self._other_dbs[key]

    def _busy_loading_model(self) -> None:
        """Say in the conversation pane what the set-up waits for, while it waits."""
        if self.embedding.loading:
            self.busy_changed.emit(f"Loading the embedding model ({self.embedding.name})…")

    def status_engine_label(self) -> str:
        """What the status bar names: the session on screen's engine, else the next session's."""
        return self.session_engine or self.engine_label()

    def engine_label(self) -> str:
        """The engine and model the next new session will use (the Engine dialog's settings)."""
        s = self.settings
        if s.engine.engine == "offline":
            return "offline engine (no language model)"
        return (
            f"{s.llm.model} @ {redact(s.llm.base_url or 'api.openai.com')}"
            f" · {s.engine.evaluation_mode} ratings"
        )

    # -- settings ------------------------------------------------------------------------------------

    def configure(self, overrides: dict[str, Any]) -> Settings:
        """Apply settings from the window. Raises SettingsError naming the bad value."""
        if overrides.get("api_key"):
            self.api_key = str(overrides["api_key"])
        merged = {k: v for k, v in overrides.items() if k != "api_key"}
        merged["api_key"] = self.api_key
        self.settings = load_settings(self.environ, merged)
        self.engine_changed.emit(self.status_engine_label())  # a live session keeps its engine
        return self.settings

    async def test_connection(self, overrides: dict[str, Any]) -> str:
        """Probe a server with the given settings; returns a one-line verdict. Raises LLMError/SettingsError."""
        key = overrides.get("api_key") or self.api_key
        settings = load_settings(self.environ, {**overrides, "api_key": key, "engine": "openai"})
        client = factory.make_chat_client(settings)
        try:
            logprobs = await client.probe()
        finally:
            await client.close()
        method = settings.engine.rating_method
        if method == "auto":
            method = "logprobs" if logprobs else "sampled"
        how = {
            "logprobs": "ratings from the rating token's logprobs",
            "sampled": f"ratings sampled {settings.engine.rating_samples} times (no logprobs)",
            "parsed": "the parsed rating alone",
        }.get(method, method)
        learned = "".join(f"\n• {why}" for why in client.profile.learned)
        return (
            f"Connected to {client.where} with model {settings.llm.model}: {how}."
            f"\nServer: {client.profile.summary()}{learned}"
        )

    # -- sessions ------------------------------------------------------------------------------------

    async def release(self, reason: str) -> None:
        """End the live session (saved as interrupted with ``reason``) so the window can show
        something else, such as a replay."""
        await self._end_current(reason)
        self.human = None
        self.mode = "simulation"
        self.mode_changed.emit(self.mode)
        self.running_changed.emit(False)

    async def new_session(
        self,
        people: list[domain.Persona],
        *,
        icebreaker: str | None,
        preset: str | None = None,
        policies: Mapping[str, domain.Policy] | None = None,
        simulated: Sequence[SimulatedSeat] = (),
    ) -> Room | None:
        """Start a session with ``people`` as AI agents, each with its turn-taking policy
        (``policies`` by persona name; Inner Thoughts when not given), and the ``simulated``
        users (STORM profiles). The session's condition is the policy the agents share, or
        ``mixed``."""
        return await self._setting_up(
            self.guarded(
                "New session",
                lambda: self._new_session(people, icebreaker, preset, policies, simulated),
            )
        )

    @property
    def setting_up(self) -> bool:
        """True while a new session (or fork) is being set up."""
        return self._setup is not None

    def run_state(self) -> RunState:
        """What the session on screen is doing (see :mod:`ui.session.run_state`)."""
        return state_of(self)

    async def _setting_up(self, work: Awaitable[T]) -> T:
        """Run a set-up: the run controls wait for it, and Run or Step asked meanwhile apply to
        the new session once it is ready (never to the one it replaces, never half set up)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._setup = done
        self.running_changed.emit(False)
        try:
            return await work
        finally:
            if self._setup is done:
                self._setup = None
            done.set_result(None)
            self.busy_changed.emit("")
            self.running_changed.emit(False)

    async def _after_setup(self) -> None:
        """Wait for a set-up in progress (Run or Step pressed while a new session is set up)."""
        while self._setup is not None:
            await asyncio.shield(self._setup)

    async def _new_session(
        self,
        people: list[domain.Persona],
        icebreaker: str | None,
        preset: str | None,
        policies: Mapping[str, domain.Policy] | None = None,
        simulated: Sequence[SimulatedSeat] = (),
    ) -> Room:
        if not people:
            raise errors.PlaygroundError("choose at least one participant")
        unknown = sorted({str(p) for p in (policies or {}).values()} - set(domain.POLICIES))
        if unknown:
            raise errors.PlaygroundError(
                f"unknown turn-taking policy {unknown[0]!r}; choose one of {', '.join(domain.POLICIES)}"
            )
        settings = self.settings.model_copy(update={"preset": preset}) if preset else self.settings
        self.notice.emit("Loading the embedding model…" if self.embedding.loading else "Starting…")
        self.embedding.start()
        self._busy_loading_model()
        embedder = await self.embedding.get()
        self.busy_changed.emit(f"Setting up the session: seating {len(people)} participants…")
        # Connect first: if the server cannot be used, the current session carries on untouched.
        engine = await factory.build_engine(settings, embedder=embedder)
        await self._end_current("a new session was started")
        self.settings, self.engine = settings, engine
        self.about_to_start.emit()
        bus = events.EventBus()
        self.bridge.attach(bus)
        room, recorder = await factory.create_room(
            self.settings,
            self.engine,
            db=self.database(),
            personas=people,
            bus=bus,
            policies=dict(policies or {}),
        )
        self._take_over(room, recorder)
        if simulated:
            await self.simulated.seat(room, simulated)
        if icebreaker:
            await room.post(self._initiator(), icebreaker, origin="icebreaker")
        return room

    async def fork(
        self,
        recording: Recording,
        seq: int,
        *,
        preset: str | None = None,
        more_messages: int = 10,
        human: str | None = None,
    ) -> Room | None:
        """Continue a replayed session live from position ``seq`` (saved as a new, linked session)."""
        return await self._setting_up(
            self.guarded("Fork", lambda: self._fork(recording, seq, preset, more_messages, human))
        )

    async def _fork(
        self, recording: Recording, seq: int, preset: str | None, more: int, human: str | None
    ) -> Room:
        from playground.history import fork

        shown = recording.messages_shown(seq)
        settings = self.settings.model_copy(
            update={
                "room": self.settings.room.model_copy(update={"max_turns": shown + max(1, more)})
            }
        )
        self._busy_loading_model()
        embedder = await self.embedding.get()
        self.busy_changed.emit("Setting up the fork…")
        engine = await factory.build_engine(settings, embedder=embedder)
        await self._end_current("a replay was forked")
        # The fork's own turn cap (messages shown + more) is the fork's: the user's settings keep
        # theirs, so the next session and the dialogs do not inherit it.
        self.engine = engine
        self.about_to_start.emit()
        bus = events.EventBus()
        self.bridge.attach(bus)
        room, recorder = await fork.fork(
            settings,
            engine,
            recording=recording,
            seq=seq,
            db=recording.db,
            bus=bus,
            proactivity=PRESETS[preset] if preset else None,
        )
        self._take_over(room, recorder)
        if human:
            await self._join(human)
        return room

    def _take_over(self, room: Room, recorder: SessionRecorder | None) -> None:
        """Make a new, paused session the window's current one."""
        self.room, self.recorder = room, recorder
        self.control = RunControl()
        self.control.on_parked = self._on_parked
        self.control.pause()
        self.stepping = False
        self.mode = "simulation"
        self.human = None
        self.session_changed.emit(room.session_id)
        self.mode_changed.emit(self.mode)
        self.session_engine = self.engine_label()  # self.settings are this session's here
        self.engine_changed.emit(self.session_engine)

    def _initiator(self) -> str:
        assert self.room is not None
        return random.Random(f"{self.settings.engine.seed}:room").choice(
            [a.name for a in self.room.agents]
        )

    async def _end_current(self, reason: str) -> None:
        await self.study.stop("The session ended. Thank you for taking part.")
        # Mark the session first, so the loop being cancelled cannot record a different ending.
        if self.room is not None and self.room.status == "running":
            self.room.finish("interrupted", reason)
        await self._cancel_task()
        if self._pace_before_join is not None:  # the person's typing speed ends with the session
            self.set_pace(self._pace_before_join)
            self._pace_before_join = None
        if self.recorder is not None:
            self.recorder.detach()
            self.recorder = None
        if self.engine is not None:
            await self.engine.close()
        self.room = None
        self.engine = None

    # -- run control (simulation) ------------------------------------------------------------------

    async def run(self) -> None:
        await self.guarded("Run", self._run)

    async def _simulated_room(self) -> Room:
        """The live session, ready to be run or stepped by the simulation loop.

        Raises:
            PlaygroundError: no live session, or a human has joined (it runs in real time).
        """
        await self._after_setup()
        room = self.require_live_room()
        if self.mode == "realtime":
            raise errors.PlaygroundError("a human has joined: the conversation runs in real time")
        return room

    async def _run(self) -> None:
        room = await self._simulated_room()
        self.control.play()
        self._ensure_simulation_task(room)

    async def step(self) -> None:
        await self.guarded("Step", self._step)

    async def _step(self) -> None:
        room = await self._simulated_room()
        if self.run_state() in ("stepping", "running", "pausing"):
            return  # a step is in flight: Run and Step wait for it (the buttons are disabled)
        self.stepping = True
        self.control.step()
        self._ensure_simulation_task(room)

    def pause(self) -> None:
        """Pause: a step in flight finishes (its message is posted), then the run state is
        ``paused`` (``pausing`` until then; see :mod:`ui.session.run_state`)."""
        self.control.pause()
        self.running_changed.emit(False)

    def _on_parked(self) -> None:
        """The simulation loop waits for permission: the step before has ended."""
        self.stepping = False
        self.running_changed.emit(False)

    async def stop(self) -> None:
        await self.guarded("Stop", self._stop)

    async def _stop(self) -> None:
        room = self.require_room()
        room.finish("interrupted", "stopped by the user")
        await self._cancel_task()

    def _ensure_simulation_task(self, room: Room) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._simulate(room))
        self.running_changed.emit(not self.control.paused)

    async def _simulate(self, room: Room) -> None:
        try:
            await loops.run_simulation(room, control=self.control)
        except errors.PlaygroundError as exc:
            self.error.emit(f"The simulation stopped: {exc}")
        finally:
            self.running_changed.emit(False)

    def set_pace(self, pace: str) -> None:
        if self.settings.room.pace != pace:
            self.settings.room.pace = pace  # type: ignore[assignment]
            self.pace_changed.emit(pace)

    # -- the human participant -----------------------------------------------------------------------

    async def join_as_human(self, name: str) -> None:
        await self.guarded("Join", lambda: self._join(name))

    async def _join(self, name: str) -> None:
        room = self.require_live_room()
        if self.human:
            raise errors.PlaygroundError(f"you already joined as {self.human}")
        room.add_human(name.strip())
        self.human = name.strip()
        await self.go_realtime()

    async def go_realtime(self) -> None:
        """People take part (at the window or from browsers): the simulation hands over to the
        real-time loop, and agents write no faster than they could type (for this session)."""
        room = self.require_live_room()
        if self.mode == "realtime" and self.task is not None and not self.task.done():
            self.mode_changed.emit(self.mode)  # already: someone else takes part now too
            return
        self.control.hand_over()  # the simulation loop ends; the session stays open
        await self._cancel_task()
        self.mode = "realtime"
        # A person reads along: agents post no faster than they could type (for this session).
        if self._pace_before_join is None:
            self._pace_before_join = self.settings.room.pace
        self.set_pace("typing")
        self.mode_changed.emit(self.mode)
        self.task = asyncio.ensure_future(self._realtime(room))
        self.running_changed.emit(True)

    async def _realtime(self, room: Room) -> None:
        try:
            await loops.run_realtime(room)
        except errors.PlaygroundError as exc:  # the database could not be written
            self.error.emit(f"The conversation stopped: {exc}")
        finally:
            self.running_changed.emit(False)

    async def send(self, text: str) -> domain.Message | None:
        async def go() -> domain.Message:
            room = self.require_room()
            if not self.human:
                raise errors.PlaygroundError("join the conversation as a human first")
            return await room.post_human_message(self.human, text)

        return await self.guarded("Send", go)

    async def annotate(self, message_id: int, text: str) -> None:
        async def go() -> None:
            if not self.human:
                raise errors.PlaygroundError("join the conversation as a human first")
            self.require_room().annotate(self.human, message_id, text)

        await self.guarded("Private note", go)

    async def label(self, message_id: int, question: str, answer: str) -> None:
        async def go() -> None:
            if self.human:
                self.require_room().record_label(self.human, message_id, question, answer)

        await self.guarded("Answer", go)

    # -- shutdown -----------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop cleanly: the running session is marked interrupted; the database is closed."""
        await self._end_current("the window was closed")
        await self.embedding.close()  # no encode may call back into the loop after it closes
        if self.db is not None:
            self.db.close()
            self.db = None
        for other in self._other_dbs.values():
            other.close()
        self._other_dbs.clear()
        self.closed = True
