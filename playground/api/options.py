"""The keywords every run from Python takes (the engine, the server, how a batch runs), and how
they become the commands' settings and batch options, with errors that name the keyword."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal, TypedDict, TypeVar

from playground import errors, runs
from playground.settings import Settings, load_settings
from playground.storage.database import DEFAULT_BUSY_TIMEOUT, DEFAULT_DB

if TYPE_CHECKING:
    from playground.experiments.runner import Progress

T = TypeVar("T")

#: The thinking engine: the offline one (templates over real embeddings) or a model server.
EngineKind = Literal["offline", "openai"]
#: The HTTP library of a batch's model clients (auto: aiohttp unless a proxy variable is set).
HttpLibrary = Literal["auto", "aiohttp", "httpx"]


class ServerOptions(TypedDict, total=False):
    """Which engine a run thinks with, and how it talks to a model server (each a setting of
    :class:`~playground.settings.Settings`; unset: the ``settings`` given, else the defaults).

    Attributes:
        engine: ``offline`` (the default: templates over real embeddings, no key) or ``openai``
            (any OpenAI-compatible server: OpenAI, llama.cpp, Ollama, vLLM).
        model: the chat model on the server.
        base_url: the server, e.g. ``http://localhost:11434/v1``; given alone it means openai.
        api_key: the server's key; never stored.
        embeddings: local MiniLM (default) or the server's /embeddings.
        timeout: seconds per model call.
        max_retries: retries on 429, 5xx, timeouts.
        settings: complete settings to start from instead of the environment's.
    """

    engine: EngineKind
    model: str
    base_url: str
    api_key: str
    embeddings: Literal["local", "remote"]
    timeout: float
    max_retries: int
    settings: Settings


class BatchOptions(ServerOptions, total=False):
    """:class:`ServerOptions` and how a batch runs.

    Attributes:
        concurrency: runs in flight at once (default 2 offline, 8 with a model).
        shard: (K, N): only every N-th draw starting at K (default all: (0, 1)).
        name: a label for the batch.
        http: the model clients' HTTP library (default auto).
        db: the database (default: the commands' ``sessions/playground.db``).
        busy_timeout: seconds a write waits for another program's lock (default 30).
        on_progress: called with the progress after each run and each call.
    """

    concurrency: int
    shard: tuple[int, int]
    name: str
    http: HttpLibrary
    db: runs.DbPath
    busy_timeout: float
    on_progress: Callable[[Progress], None]


_SERVER_KEYS = ("engine", "model", "base_url", "api_key", "embeddings", "timeout", "max_retries")


# -- settings ---------------------------------------------------------------------------------

#: The keyword a setting is given by, where the two names differ.
_KEYWORDS = {"max_turns": "turns"}


def build_settings(settings: Settings | None, overrides: Mapping[str, object | None]) -> Settings:
    """``settings`` (or, when None, the environment's, as the commands read it, on the offline
    engine unless ``engine``, ``base_url`` or ``api_key`` is given) with ``overrides`` (flat
    setting names, None for unset) over them.

    Raises:
        SettingsError: naming the keyword whose value is invalid.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    if settings is None:
        environ: Mapping[str, str] = os.environ
        if not any(k in given for k in ("engine", "base_url", "api_key")):
            given["engine"] = "offline"
        flat = given
    else:
        environ = {}
        key = settings.llm.api_key
        flat = {
            **settings.llm.model_dump(),
            **settings.engine.model_dump(),
            **settings.room.model_dump(),
            "preset": settings.preset,
            "api_key": key.get_secret_value() if key is not None else None,
            **given,
        }
    try:
        return load_settings(environ, flat)
    except errors.SettingsError as exc:
        name = _KEYWORDS.get(exc.field)
        if name is None or exc.field not in given:
            raise
        raise errors.SettingsError(
            f"{name}: {exc.reason}", field=exc.field, reason=exc.reason
        ) from exc


def positive(name: str, value: int | None) -> None:
    """Raises: SettingsError when ``value`` is given and below 1."""
    if value is not None and value < 1:
        raise errors.SettingsError(f"{name}: must be at least 1 (got {value})")


def run_settings(options: ServerOptions, **more: object) -> Settings:
    """The settings of a run: ``options`` and ``more`` (flat setting names) over its settings."""
    given: dict[str, object] = {k: options.get(k) for k in _SERVER_KEYS}
    return build_settings(options.get("settings"), {**given, **more})


def study_settings(options: ServerOptions) -> Settings:
    """A batch's settings: the paper's simulation preset and per-thought ratings, as for the
    commands."""
    from playground.experiments import runner as experiment_runner

    return run_settings(
        options,
        preset=experiment_runner.PRESET,
        evaluation_mode=experiment_runner.EVALUATION_MODE,
    )


def batch_options(options: BatchOptions) -> runs.BatchOptions:
    """Raises: SettingsError for a concurrency below 1 or a shard that is not 0 ≤ K < N."""
    concurrency = options.get("concurrency")
    positive("concurrency", concurrency)
    k, n = options.get("shard", (0, 1))
    if n < 1 or not 0 <= k < n:
        raise errors.SettingsError(f"shard: {(k, n)!r} needs 0 ≤ K < N (K counts from 0)")
    return runs.BatchOptions(
        db=options.get("db", DEFAULT_DB),
        busy_timeout=options.get("busy_timeout", DEFAULT_BUSY_TIMEOUT),
        concurrency=concurrency,
        shard=(k, n),
        name=options.get("name"),
        on_progress=options.get("on_progress"),
    )


def named(build: Callable[[], T]) -> T:
    """``build()``, its errors naming the keyword (``agents:``) rather than the commands' flag
    (``--agents:``)."""
    try:
        return build()
    except errors.SettingsError as exc:
        flag, colon, rest = str(exc).partition(":")
        if not (flag.startswith("--") and colon):
            raise
        keyword = flag[2:].replace("-", "_")
        raise errors.SettingsError(f"{keyword}:{rest}", field=exc.field, reason=exc.reason) from exc
