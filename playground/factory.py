"""Composition root: settings in, a ready room with its mind, embedder and recorder out.

Only this module (and the GUI's ``ui/app.py``, which calls it) knows concrete backends.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
from dataclasses import dataclass

import sqlite_utils

from playground import domain, events
from playground.clock import Clock
from playground.cognition.base import Cognition
from playground.embedding.cache import CachingEmbedder
from playground.llm.client import ChatClient
from playground.room import Room
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
    from playground.embedding.minilm import SentenceTransformerEmbedder

    return CachingEmbedder(SentenceTransformerEmbedder())


def make_chat_client(settings: Settings) -> ChatClient:
    import openai

    llm = settings.llm
    client = openai.AsyncOpenAI(
        base_url=llm.base_url or None,
        # Local servers (Ollama, llama.cpp, vLLM, LM Studio) need no key, but the client insists on one.
        api_key=llm.api_key.get_secret_value() if llm.api_key else "not-needed",
        timeout=llm.timeout,
        max_retries=0,
    )
    return ChatClient(client, llm)


async def build_engine(
    settings: Settings, *, embedder: CachingEmbedder | None = None, probe: bool = True
) -> Engine:
    """Build the configured mind.

    Args:
        embedder: reuse an existing local embedder (its cache and loaded model).
        probe: for an OpenAI-compatible server, make one cheap call to learn whether it returns logprobs.

    Raises:
        LLMError: the server cannot be used (unreachable, key refused...).
    """
    if settings.engine.engine == "offline":
        from playground.cognition.offline import OfflineCognition

        emb = embedder or local_embedder()
        return Engine(
            OfflineCognition(emb, seed=settings.engine.seed), emb, None, "offline engine", "offline"
        )
    from playground.cognition.llm import LLMCognition

    client = make_chat_client(settings)
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
    engine = Engine(
        LLMCognition(client, evaluation_mode=settings.engine.evaluation_mode),
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


def new_session_id(clock_iso: str | None = None) -> str:
    now = dt.datetime.fromisoformat(clock_iso) if clock_iso else dt.datetime.now(dt.UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def pick_personas(personas: list[domain.Persona], n: int, seed: int) -> list[domain.Persona]:
    """A seeded random choice of ``n`` personas (all of them when n ≥ the library)."""
    rng = random.Random(f"{seed}:personas")
    if n >= len(personas):
        return list(personas)
    return sorted(rng.sample(personas, n), key=lambda p: personas.index(p))


async def create_room(
    settings: Settings,
    engine: Engine,
    *,
    db: sqlite_utils.Database | None,
    personas: list[domain.Persona],
    bus: events.EventBus | None = None,
    clock: Clock | None = None,
    condition: str = "inner-thoughts",
) -> tuple[Room, SessionRecorder | None]:
    """A started room with the given agents; when ``db`` is given, every event is recorded into it."""
    bus = bus or events.EventBus()
    room = Room(
        cognition=engine.cognition,
        embedder=engine.embedder,
        settings=settings,
        bus=bus,
        session_id=new_session_id(),
        clock=clock,
    )
    recorder = None
    if db is not None:
        recorder = SessionRecorder(db)
        recorder.attach(bus)
    if engine.client is not None:
        engine.client.on_usage = room.record_usage
    room.start(
        engine=engine.label,
        model=engine.model,
        condition=condition,
        logprobs_supported=engine.logprobs_supported,
    )
    for persona in personas:
        await room.add_agent(persona, PRESETS[settings.preset])
    return room, recorder
