"""The session controller's embedding model: handed in ready, or loaded once in the background.

A part of :class:`ui.session.controller.SessionController`. Loading MiniLM takes seconds (torch
is imported first), so the app starts it as soon as the window shows and a new session waits for
it only if it has not finished. An embedder (tests, scripts, an embedding app) can be handed to
the controller ready instead: nothing is loaded then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from playground import factory
from playground.embedding.cache import CachingEmbedder

log = logging.getLogger(__name__)

#: How long closing the window waits for a model still loading (seconds).
LOAD_WAIT_AT_SHUTDOWN = 30.0


class EmbeddingModel:
    """The embedding model every session of the window shares.

    Args:
        ready: An embedder ready to use (already loaded): nothing is loaded, :meth:`get` returns
            it at once. None: :meth:`start` makes one with ``make`` and loads it in a worker
            thread.
        make: Makes the embedder to load (the packaged MiniLM, cached).
        on_loaded: Called once the loading has finished.
        on_failed: Called with a message when the loading failed.
    """

    def __init__(
        self,
        *,
        ready: CachingEmbedder | None = None,
        make: Callable[[], CachingEmbedder] = factory.local_embedder,
        on_loaded: Callable[[], None],
        on_failed: Callable[[str], None],
    ) -> None:
        self._embedder = ready
        self._make = make
        self._on_loaded = on_loaded
        self._on_failed = on_failed
        self._task: asyncio.Future[None] | None = None

    @property
    def started(self) -> bool:
        """The model was handed in ready, or its loading has started."""
        return self._embedder is not None

    @property
    def loading(self) -> bool:
        """Not ready to use yet: its loading has not started, or has not finished."""
        if self._task is None:
            return self._embedder is None
        return not self._task.done()

    @property
    def name(self) -> str:
        """The model's short name, as the busy message gives it."""
        inner = getattr(self._embedder, "inner", None)
        return str(getattr(inner, "name", "all-MiniLM-L6-v2")).split(" (")[0]

    def start(self) -> None:
        """Start loading in a worker thread (once; nothing happens when it was handed in ready)."""
        if self._embedder is None:
            self._embedder = self._make()
            self._task = asyncio.ensure_future(self._load(self._embedder))

    async def _load(self, embedder: CachingEmbedder) -> None:
        load: Callable[[], Awaitable[None]] | None = getattr(embedder.inner, "load", None)
        try:
            if load is not None:
                await load()
            self._on_loaded()
        except Exception as exc:
            # The GUI boundary: a model that cannot load is reported; the window stays usable.
            log.exception("embedding model failed to load")
            self._on_failed(f"the embedding model failed to load: {exc}")

    async def get(self) -> CachingEmbedder:
        """The model, loaded (loading starts now if it had not)."""
        self.start()
        if self._task is not None:
            await asyncio.shield(self._task)
        assert self._embedder is not None  # set by start()
        return self._embedder

    async def close(self) -> None:
        """Wait for a load in progress (for a while), then for any encode already handed to the
        worker thread: nothing may call back into the loop after it closes."""
        if self._task is not None and not self._task.done():
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._task), LOAD_WAIT_AT_SHUTDOWN)
        drain: Callable[[], Awaitable[None]] | None = getattr(
            getattr(self._embedder, "inner", None), "drain", None
        )
        if drain is not None:
            await drain()
