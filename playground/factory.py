"""Composition root: settings in, a ready room with its mind, embedder and recorder out.

Only this module (and the GUI's ``ui/app.py``, which calls it) knows concrete backends.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import os
import random
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

import sqlite_utils

from playground import domain, errors, events, urls
from playground.clock import Clock
from playground.cognition.base import Cognition
from playground.embedding.cache import CachingEmbedder
from playground.llm.client import ChatClient
from playground.room.room import Room
from playground.settings import PRESETS, Settings
from playground.storage.recorder import SessionRecorder


@dataclass
class Engine:
    """A mind and what it runs on."""

    cognition: Cognition
    embedder: CachingEmbedder
    client: ChatClient | None
    label: str
    model: str
    logprobs_supported: bool | None = None

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()


def local_embedder() -> CachingEmbedder:
    from playground.embedding.minilm import MiniLMEmbedder

    return CachingEmbedder(MiniLMEmbedder())


#: The HTTP libraries the chat client can send with.
HTTP_LIBRARIES = ("httpx", "aiohttp")


def make_chat_client(settings: Settings, *, http: str = "httpx") -> ChatClient:
    """The chat client for the settings' server.

    ``http`` picks the HTTP library under the openai client: ``httpx`` (the SDK's default, on any
    asyncio loop, the window's qasync loop included) or ``aiohttp`` (the SDK's optional transport:
    about half the client CPU per call under many concurrent conversations, measured in
    ``bench/bench_experiment.py``; it ignores proxy variables, see :func:`http_library`).

    A user name and password written into the base URL are sent as HTTP Basic authentication (for
    a proxy that asks for them) and never stored or shown: the client names the server by
    :func:`playground.urls.redact` of its URL.

    Raises:
        SettingsError: the base URL is not an http(s) URL with a host, or it has credentials and
            an API key is set too: the server would only ever receive the URL's credentials (HTTP
            Basic replaces the key's header).
    """
    import openai

    llm = settings.llm
    problem = urls.check_base_url(llm.base_url) if llm.base_url else None
    if problem:
        raise errors.SettingsError(f"base URL: {problem}")
    if llm.api_key and urls.has_credentials(llm.base_url):
        raise errors.SettingsError(
            f"base URL: {urls.redact(llm.base_url or '')} has a user name and password written"
            " into it, which are sent instead of the API key, so the key would never reach the"
            " server; put a key in OPENAI_API_KEY or --api-key and leave it out of the URL"
        )
    if http not in HTTP_LIBRARIES:
        raise errors.SettingsError(
            f"HTTP library: {http!r} is not one of {', '.join(HTTP_LIBRARIES)}"
        )
    client = openai.AsyncOpenAI(
        http_client=openai.DefaultAioHttpClient() if http == "aiohttp" else None,
        base_url=llm.base_url or None,
        # Local servers (Ollama, llama.cpp, vLLM, LM Studio) need no key, but the client insists on one.
        api_key=llm.api_key.get_secret_value() if llm.api_key else "not-needed",
        timeout=llm.call_timeout(),
        max_retries=0,
    )
    return ChatClient(client, llm, seed=settings.engine.seed)


def _coalesce(emb: CachingEmbedder, on: bool) -> None:
    """Merge concurrent embedding requests into batches for model engines, not offline.

    Merged batches are faster under load (an experiment's conversations), but a vector then
    differs at the 1e-7 level with its batch: the offline engine keeps its bit-for-bit reruns.
    The model is shared by the sessions of one window, so the engine built last decides.
    """
    if hasattr(emb.inner, "coalesce"):
        emb.inner.coalesce = on


def http_library(choice: str = "auto") -> str:
    """``auto``: aiohttp, unless a proxy variable is set (aiohttp here does not read them, httpx
    does) or aiohttp is not installed; otherwise the choice as given."""
    if choice != "auto":
        return choice
    proxied = any(
        os.environ.get(v)
        for v in (
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
            "ALL_PROXY",
            "all_proxy",
        )
    )
    if proxied or importlib.util.find_spec("aiohttp") is None:
        return "httpx"
    return "aiohttp"


def make_cognition(
    settings: Settings, embedder: CachingEmbedder, client: ChatClient | None
) -> Cognition:
    """The mind for the settings: the offline engine over ``embedder`` when there is no client
    (seeded by the settings' seed: it keeps per-conversation state), else the LLM mind over
    ``client`` with the settings' evaluation mode and rating method. Cheap to make: a batch gives
    each conversation its own over one shared embedder and client."""
    if client is None:
        from playground.cognition.offline import OfflineCognition

        return OfflineCognition(embedder, seed=settings.engine.seed)
    from playground.cognition.llm import LLMCognition

    return LLMCognition(
        client,
        evaluation_mode=settings.engine.evaluation_mode,
        rating_method=settings.engine.rating_method,
        rating_samples=settings.engine.rating_samples,
        rating_call=settings.engine.rating_call,
        rating_alternatives=settings.engine.rating_alternatives,
    )


async def build_engine(
    settings: Settings,
    *,
    embedder: CachingEmbedder | None = None,
    probe: bool = True,
    http: str = "httpx",
) -> Engine:
    """Build the configured mind.

    Args:
        embedder: reuse an existing local embedder (its cache and loaded model).
        probe: for an OpenAI-compatible server, make one cheap call to learn whether it returns logprobs.
        http: the HTTP library of the chat client (see :func:`make_chat_client`).

    Raises:
        LLMError: the server cannot be used (unreachable, key refused...).
    """
    if settings.engine.engine == "offline":
        emb = embedder or local_embedder()
        _coalesce(emb, False)
        return Engine(make_cognition(settings, emb, None), emb, None, "offline engine", "offline")
    client = make_chat_client(settings, http=http)
    if settings.engine.embeddings == "remote":
        from playground.embedding.openai_compat import OpenAIEmbedder

        emb = CachingEmbedder(OpenAIEmbedder(client, settings.llm.embedding_model))
    else:
        emb = embedder or local_embedder()
        # The model loads in its worker thread while the server is probed (and the room set up):
        # start-up costs the longer of the two, not their sum. The first embedding waits for it.
        start = getattr(emb.inner, "start_loading", None)
        if start is not None:
            start()
        _coalesce(emb, True)
    engine = Engine(
        make_cognition(settings, emb, client),
        emb,
        client,
        f"OpenAI-compatible ({client.where})",
        settings.llm.model,
    )
    if probe:
        try:
            engine.logprobs_supported = await client.probe()
        except BaseException:
            await client.close()
            raise
    return engine


def new_session_id(clock_iso: str | None = None, db: sqlite_utils.Database | None = None) -> str:
    """A session id stamped with the start time; one not yet used in ``db`` when it is given.

    Several rooms can start in the same second (an experiment runs conditions concurrently), and a
    4-hex suffix alone collides once in a while: a collision would fail the run at its first write.
    """
    now = dt.datetime.fromisoformat(clock_iso) if clock_iso else dt.datetime.now(dt.UTC)
    while True:
        sid = f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
        if db is None or "sessions" not in db.table_names():
            return sid
        if db.execute("SELECT 1 FROM sessions WHERE id = ?", [sid]).fetchone() is None:
            return sid


def pick_personas(personas: list[domain.Persona], n: int, seed: int) -> list[domain.Persona]:
    """A seeded random choice of ``n`` personas (all of them when n ≥ the library)."""
    rng = random.Random(f"{seed}:personas")
    if n >= len(personas):
        return list(personas)
    return sorted(rng.sample(personas, n), key=lambda p: personas.index(p))


def open_room(
    settings: Settings,
    engine: Engine,
    *,
    db: sqlite_utils.Database | None,
    bus: events.EventBus | None = None,
    clock: Clock | None = None,
    condition: domain.Condition = "inner-thoughts",
    experiment_id: str | None = None,
    draw: int | None = None,
    track_usage: bool = True,
) -> tuple[Room, SessionRecorder | None]:
    """A started room with no agents yet; when ``db`` is given, every event is recorded into it.

    With ``track_usage`` the engine's client reports its calls to this room; a client shared by
    several rooms (an experiment) counts each room's calls in a usage scope instead.

    The session exists (``running``) from here on: whoever opens it must finish it, also when adding
    the agents is interrupted. :func:`create_room` does both.
    """
    bus = bus or events.EventBus()
    room = Room(
        cognition=engine.cognition,
        embedder=engine.embedder,
        settings=settings,
        bus=bus,
        session_id=new_session_id(db=db),
        clock=clock,
    )
    recorder = None
    if db is not None:
        recorder = SessionRecorder(db)
        recorder.attach(bus)
    if engine.client is not None and track_usage:
        engine.client.on_usage = room.record_usage
    room.start(
        engine=engine.label,
        model=engine.model,
        condition=condition,
        logprobs_supported=engine.logprobs_supported,
        experiment_id=experiment_id,
        draw=draw,
    )
    return room, recorder


async def add_agents(
    room: Room,
    settings: Settings,
    personas: list[domain.Persona],
    *,
    defer_memories: bool = False,
    policies: Mapping[str, domain.Policy] | None = None,
) -> None:
    """Seat the personas as agents with the settings' proactivity preset and their turn-taking
    policy (``policies`` by persona name; Inner Thoughts when not given).

    The first embeddings of their memories wait for the embedding model to load; with
    ``defer_memories`` they are made in the background and the first retrieval waits for them
    instead, so the icebreaker and its interpretation do not wait for the model.
    """
    for persona in personas:
        await room.add_agent(
            persona,
            PRESETS[settings.preset],
            policy=(policies or {}).get(persona.name, "inner-thoughts"),
            defer_memories=defer_memories,
        )


async def create_room(
    settings: Settings,
    engine: Engine,
    *,
    db: sqlite_utils.Database | None,
    personas: list[domain.Persona],
    bus: events.EventBus | None = None,
    clock: Clock | None = None,
    condition: domain.Condition | None = None,
    policies: Mapping[str, domain.Policy] | None = None,
) -> tuple[Room, SessionRecorder | None]:
    """A started room with the given agents; when ``db`` is given, every event is recorded into it.

    ``policies`` sets each agent's turn-taking policy by persona name (Inner Thoughts when not
    given); the session's condition defaults to :func:`playground.domain.condition_of` them.

    If seating the agents is cancelled or fails (the model load takes seconds), the session is
    ended ``interrupted`` or ``failed`` before the exception propagates: never left ``running``.
    """
    if condition is None:
        condition = domain.condition_of(
            (policies or {}).get(p.name, "inner-thoughts") for p in personas
        )
    room, recorder = open_room(settings, engine, db=db, bus=bus, clock=clock, condition=condition)
    try:
        await add_agents(room, settings, personas, policies=policies)
    except (asyncio.CancelledError, KeyboardInterrupt):
        room.finish("interrupted", "stopped while the participants were being seated")
        raise
    except Exception as exc:
        room.finish("failed", f"could not seat the participants: {exc}")
        raise
    return room, recorder
