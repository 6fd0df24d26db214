"""SessionController: the GUI's commands to the engine, and the boundary that turns failures into messages.

The session's life is here: set-up (a new session, a fork), run control, the human participant and
shutdown. The state and the failure boundary are :class:`ui.session.core.SessionCore`'s; the
commands on participants and minds, and on STORM simulated users, are the bases it inherits.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from playground import domain, errors, events, factory
from playground.room import loops
from playground.room.room import Room
from playground.room.run_control import RunControl
from playground.settings import PRESETS
from ui.session.room_commands import RoomCommands
from ui.session.run_state import RunState, state_of
from ui.session.study import StudyHost
from ui.storm.commands import SimulatedSeat, SimulatedUserCommands

if TYPE_CHECKING:
    from playground.history.recording import Recording
    from playground.storage.recorder import SessionRecorder

T = TypeVar("T")


class SessionController(RoomCommands, SimulatedUserCommands):
    """Owns the current session: settings, engine, room, recorder and the running task.

    Every command is an ``async`` method; failures become ``error`` signals with a message that
    names what is wrong, and the session keeps everything it had. The state, the failure
    boundary and the resources are :class:`ui.session.core.SessionCore`'s; this class adds the
    session's life (set-up, run control, the human participant, shutdown) to the command groups
    it inherits.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        #: Invited people in browsers (Session ▸ Invite people…): serves the live session.
        self.study = StudyHost(self, parent=self)

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
        self.notice.emit(
            "Loading the embedding model…"
            if self._embedder_task is None or not self._embedder_task.done()
            else "Starting…"
        )
        self.start_loading_embedder()
        self._busy_loading_model()
        embedder = await self.embedder()
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
            await self._seat_simulated(room, simulated)
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
        embedder = await self.embedder()
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
        import random

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
        room = self._require_live_room()
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
        room = self._require_room()
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
        room = self._require_live_room()
        if self.human:
            raise errors.PlaygroundError(f"you already joined as {self.human}")
        room.add_human(name.strip())
        self.human = name.strip()
        await self.go_realtime()

    async def go_realtime(self) -> None:
        """People take part (at the window or from browsers): the simulation hands over to the
        real-time loop, and agents write no faster than they could type (for this session)."""
        room = self._require_live_room()
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
            room = self._require_room()
            if not self.human:
                raise errors.PlaygroundError("join the conversation as a human first")
            return await room.post_human_message(self.human, text)

        return await self.guarded("Send", go)

    async def annotate(self, message_id: int, text: str) -> None:
        async def go() -> None:
            if not self.human:
                raise errors.PlaygroundError("join the conversation as a human first")
            self._require_room().annotate(self.human, message_id, text)

        await self.guarded("Private note", go)

    async def label(self, message_id: int, question: str, answer: str) -> None:
        async def go() -> None:
            if self.human:
                self._require_room().record_label(self.human, message_id, question, answer)

        await self.guarded("Answer", go)

    # -- shutdown -----------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop cleanly: the running session is marked interrupted; the database is closed."""
        await self._end_current("the window was closed")
        if self._embedder_task is not None and not self._embedder_task.done():
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._embedder_task), 30)
        drain = getattr(self._embedder.inner, "drain", None) if self._embedder else None
        if drain is not None:
            await drain()  # no encode may call back into the loop after it closes
        if self.db is not None:
            self.db.close()
            self.db = None
        for other in self._other_dbs.values():
            other.close()
        self._other_dbs.clear()
        self.closed = True
