"""A job the windows run on the GUI's asyncio loop (an experiment, a study plan): one task, started
once, with an engine built on the window's shared embedding model, that ends by emitting ``ended``
once; cancelled, and waited for, from the window."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from playground import factory
from playground.embedding.cache import CachingEmbedder
from playground.settings import Settings


class LoopJob(QObject):
    """One job running as a task on the GUI's loop (qasync).

    A subclass does the work in :meth:`_main`, which sets ``outcome`` and ``message`` and emits
    ``ended`` as its last act, and says in :meth:`cancel` how the work is stopped.

    Args:
        db: the session database.
        embedder: returns the window's shared, loaded local embedding model.

    Attributes:
        task: the task, once started.
        outcome: how the job ended (None: it has not).
        message: what the window says about the ending.
    """

    ended = Signal(str, str)  # outcome, message

    def __init__(
        self,
        db: Any,
        embedder: Callable[[], Awaitable[CachingEmbedder]],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.db = db
        self._embedder = embedder
        self.task: asyncio.Task[None] | None = None
        self.outcome: str | None = None
        self.message = ""

    @property
    def running(self) -> bool:
        """Started and not ended (``ended`` is emitted as the task's last act)."""
        return self.task is not None and not self.task.done() and self.outcome is None

    def start(self) -> asyncio.Task[None]:
        """Start the job as a task on the running loop (once; later calls return that task)."""
        if self.task is None:
            self.task = asyncio.ensure_future(self._main())
            self._started(self.task)
        return self.task

    def _started(self, task: asyncio.Task[None]) -> None:
        """Called once the task is made (a subclass may watch it)."""

    def cancel(self) -> None:
        """Stop the job; it ends on its own, saving what it must."""
        raise NotImplementedError

    async def wait(self) -> None:
        """Until the job has ended."""
        if self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)

    async def stop(self) -> None:
        """Cancel and wait until the job has ended."""
        self.cancel()
        await self.wait()

    async def _engine(self, s: Settings) -> factory.Engine:
        """The engine for ``s``: with the window's shared embedding model where it embeds
        locally (loaded in its own thread on first use)."""
        local = s.engine.engine == "offline" or s.engine.embeddings == "local"
        embedder = await self._embedder() if local else None
        return await factory.build_engine(s, embedder=embedder)

    async def _main(self) -> None:
        raise NotImplementedError
