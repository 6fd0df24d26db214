"""Retrieval with the real MiniLM: threshold, weights, decay, τ refresh, caching, edits."""

import numpy as np
import pytest

from playground import events
from playground.embedding.cache import CachingEmbedder
from playground.inner_thoughts import memory

pytestmark = pytest.mark.asyncio


async def _store(embedder: CachingEmbedder, got: list) -> memory.MemoryStore:
    ids = iter(range(1, 1000))
    return memory.MemoryStore("Ana", embedder, ids, got.append)


async def test_only_memories_above_threshold_are_retrieved(embedder):
    got: list = []
    store = await _store(embedder, got)
    surf = await store.add("fact", "I go surfing at the beach every morning.")
    await store.add("fact", "I collect old postage stamps from Peru.")
    u = await embedder.embed_one("Does anyone here like surfing in the ocean?")
    hits = memory.salient(store.pool(), u, None, 0, threshold=0.3, decay=0.95, limit=8)
    assert [store.pool().refs[i] for i, _ in hits] == [surf.ref]
    assert hits[0][1] > 0.3


async def test_weight_scales_saliency_below_threshold(embedder):
    store = await _store(embedder, [])
    await store.add("fact", "I go surfing at the beach every morning.", weight=0.2)
    u = await embedder.embed_one("Does anyone here like surfing in the ocean?")
    assert memory.salient(store.pool(), u, None, 0, threshold=0.3, decay=0.95, limit=8) == []


async def test_decay_fades_unaccessed_memories_and_touch_refreshes_tau(embedder):
    store = await _store(embedder, [])
    m = await store.add("fact", "I go surfing at the beach every morning.")
    u = await embedder.embed_one("Does anyone here like surfing in the ocean?")
    fresh = memory.salient(store.pool(), u, None, 0, threshold=0.0, decay=0.95, limit=8)[0][1]
    old = memory.salient(store.pool(), u, None, 30, threshold=0.0, decay=0.95, limit=8)[0][1]
    assert old == pytest.approx(fresh * 0.95**30, rel=1e-4)
    assert memory.salient(store.pool(), u, None, 30, threshold=0.3, decay=0.95, limit=8) == []
    store.touch([m.ref], 30)
    assert store.items[m.id].last_access == 30
    assert memory.salient(store.pool(), u, None, 30, threshold=0.3, decay=0.95, limit=8)[0][
        1
    ] == pytest.approx(fresh, rel=1e-4)


async def test_interpretation_counts_when_closer_than_the_utterance(embedder):
    store = await _store(embedder, [])
    await store.add("interest", "I love baking sourdough bread.")
    u = await embedder.embed_one("Hey, what's up?")
    ui = await embedder.embed_one("Ben is hoping someone will talk about baking bread.")
    assert memory.salient(store.pool(), u, None, 0, threshold=0.3, decay=0.95, limit=8) == []
    assert len(memory.salient(store.pool(), u, ui, 0, threshold=0.3, decay=0.95, limit=8)) == 1


async def test_each_distinct_text_is_embedded_once(embedder):
    a = await embedder.embed(["hello there", "hello there", "general kenobi"])
    b = await embedder.embed_one("hello there")
    assert embedder.misses == 2
    assert embedder.hits == 2
    assert np.allclose(a[0], b)
    assert a.shape == (3, 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


async def test_add_edit_delete_publish_events_and_update_the_pool(embedder):
    got: list = []
    store = await _store(embedder, got)
    m = await store.add("interest", "I like chess.", weight=0.5)
    edited = await store.edit(m.id, text="I like playing chess in the park.", weight=0.9)
    assert edited.weight == 0.9
    assert store.pool().texts == ["I like playing chess in the park."]
    store.delete(m.id)
    assert len(store) == 0
    assert store.pool().refs == []
    assert [(e.change, e.memory.id) for e in got if isinstance(e, events.MemoryChanged)] == [
        ("added", m.id),
        ("edited", m.id),
        ("deleted", m.id),
    ]
    with pytest.raises(KeyError, match="no memory"):
        store.delete(m.id)
