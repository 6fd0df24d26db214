"""SessionCore: the state the session controller owns, and the boundary every command goes through.

:class:`ui.session.controller.SessionController` is a SessionCore, and so are its command groups
(:class:`ui.session.room_commands.RoomCommands`, :class:`ui.storm.commands.SimulatedUserCommands`): each
group reads and changes this state and runs its commands through :meth:`SessionCore.guarded`,
so a failure becomes one clear message and the session keeps everything it had. The core also
holds what a session is made from: the settings, the persona library, the databases and the
embedding model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from playground import domain, errors, factory, personas
from playground.embedding.cache import CachingEmbedder
from playground.room import loops
from playground.room.room import Room
from playground.room.run_control import RunControl
from playground.settings import Settings, load_settings
from playground.storage import open_database
from playground.storage.database import DEFAULT_DB
from playground.urls import redact
from ui.bridge import EngineBridge

if TYPE_CHECKING:
    import sqlite_utils

    from playground.storage.recorder import SessionRecorder

log = logging.getLogger(__name__)


class SessionCore(QObject):
    """Owns the current session: settings, engine, room, recorder and the running task.

    Every command is an ``async`` method; failures become ``error`` signals with a message that
    names what is wrong, and the session keeps everything it had.
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
        environ: dict[str, str] | None = None,
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
        self._embedder: CachingEmbedder | None = None
        self._embedder_task: asyncio.Task[Any] | None = None
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

    # -- boundary ----------------------------------------------------------------------------------

    async def guarded(self, what: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        """Run a command; expected failures become one clear message, never a crash."""
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

    def _require_room(self) -> Room:
        if self.room is None:
            raise errors.PlaygroundError(
                "there is no live session: start a new one, or fork a replay from its current moment"
            )
        return self.room

    def _require_live_room(self) -> Room:
        """The session on screen, if it has not ended.

        Raises:
            PlaygroundError: there is no session.
            SessionEnded: it has ended (the message says how and when).
        """
        room = self._require_room()
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

    def start_loading_embedder(self) -> None:
        """Load MiniLM in a worker thread right after the window shows (imports take seconds)."""
        if self._embedder_task is None:
            self._embedder = factory.local_embedder()
            self._embedder_task = asyncio.ensure_future(self._load_embedder())

    async def _load_embedder(self) -> None:
        assert self._embedder is not None
        try:
            await self._embedder.inner.load()  # type: ignore[attr-defined]
            self.embedder_ready.emit()
        except Exception as exc:
            log.exception("embedding model failed to load")
            self.error.emit(f"the embedding model failed to load: {exc}")

    async def embedder(self) -> CachingEmbedder:
        self.start_loading_embedder()
        assert self._embedder_task is not None
        assert self._embedder is not None
        await asyncio.shield(self._embedder_task)
        return self._embedder

    def _busy_loading_model(self) -> None:
        """Say in the conversation pane what the set-up waits for, while it waits."""
        if self._embedder_task is None or not self._embedder_task.done():
            name = getattr(getattr(self._embedder, "inner", None), "name", "all-MiniLM-L6-v2")
            self.busy_changed.emit(f"Loading the embedding model ({name.split(' (')[0]})…")

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
