"""Start-up: the icebreaker and its interpretation do not wait for the embedding model (issue 7).

The command line seats the agents with their memories deferred: the first trigger fires and the
interpretation goes to the server while the model still loads; the first retrieval waits for it.
A MiniLM embedder whose load is held back until the icebreaker's first call reaches the server
stands for a model still loading.
"""

from __future__ import annotations

import threading

import pytest

from playground import events, factory
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.room import loops
from testbed.llm_server import FakeLLMServer
from tests.conftest import server_settings
from tests.support.rooms import library, of

pytestmark = pytest.mark.asyncio


class SlowToLoad(MiniLMEmbedder):
    """The real MiniLM, whose load finishes only once ``ready`` is set (or after ``patience`` s):
    a model still loading, for as long as the test needs."""

    def __init__(self, patience: float) -> None:
        super().__init__()
        self.ready = threading.Event()
        self.patience = patience
        self.waited_out = False

    def load_sync(self):
        if not self.ready.wait(self.patience):
            self.waited_out = True  # kept: a later call must not hide that the wait ran out
            self.ready.set()
        return super().load_sync()


async def test_the_first_interpretation_overlaps_the_model_load(db):
    slow = SlowToLoad(patience=10)
    with FakeLLMServer(latency=0.05) as srv:

        def note(body: dict) -> None:
            if len(srv.requests) >= 2:  # the probe, then a call about the icebreaker
                slow.ready.set()  # only now may the model finish loading

        srv.set_responder(note)  # answers as usual (None falls through)
        settings = server_settings(srv, max_turns=2, seed=4)
        engine = await factory.build_engine(settings, embedder=CachingEmbedder(slow))
        seen: list[events.BaseEvent] = []
        bus = events.EventBus(strict=True)
        bus.subscribe(seen.append)
        room, _ = factory.open_room(settings, engine, db=db, bus=bus)
        people = library(3)
        await factory.add_agents(room, settings, people, defer_memories=True)
        assert not of(events.MemoryChanged, seen), "seating did not wait for the model"
        await loops.run_simulation(room, icebreaker="What did you do last weekend?")
        await engine.close()
    assert room.status == "finished"
    # The icebreaker's interpretation went to the server while the model was still loading.
    assert not slow.waited_out, "nothing reached the server until the model had loaded"
    first_trigger = next(e for e in seen if isinstance(e, events.TriggerFired))
    first_memory = next(e for e in seen if isinstance(e, events.MemoryChanged))
    assert first_trigger.seq < first_memory.seq
    # Memories are still numbered in the order the agents were seated, whatever the timing.
    by_agent = [e.agent for e in of(events.MemoryChanged, seen)]
    assert by_agent == sorted(by_agent, key=[p.name for p in people].index)
    assert [e.memory.id for e in of(events.MemoryChanged, seen)] == list(
        range(1, len(by_agent) + 1)
    )
    # The first retrieval came after every persona memory was in place.
    first_retrieval = next(e for e in seen if isinstance(e, events.MemoriesRetrieved))
    assert first_retrieval.seq > of(events.MemoryChanged, seen)[-1].seq
