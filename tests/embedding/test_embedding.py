"""The embedding layer under concurrency: a text is encoded once however many ask for it at the
same time, and model engines merge waiting requests into one batch (the real MiniLM model)."""

import asyncio

import numpy as np
import pytest

from playground import factory
from playground.embedding.cache import CachingEmbedder
from playground.settings import Settings

pytestmark = pytest.mark.asyncio


class Counting:
    """The real model behind a delay, recording what reaches it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    async def embed(self, texts):
        self.calls.append(list(texts))
        await asyncio.sleep(0.05)
        return await self.inner.embed(texts)


async def test_a_text_asked_for_while_it_is_being_embedded_is_embedded_once(minilm):
    inner = Counting(minilm)
    emb = CachingEmbedder(inner)
    a, b, c = await asyncio.gather(
        emb.embed(["the weekend hike"]),
        emb.embed(["the weekend hike", "jazz in New Orleans"]),
        emb.embed_one("the weekend hike"),
    )
    assert sorted(t for call in inner.calls for t in call) == [
        "jazz in New Orleans",
        "the weekend hike",
    ]
    assert np.array_equal(a[0], b[0])
    assert np.array_equal(a[0], c)
    assert b.shape == (2, 384)


async def test_a_cancelled_caller_does_not_cancel_the_encode_others_wait_for(minilm):
    inner = Counting(minilm)
    emb = CachingEmbedder(inner)
    first = asyncio.ensure_future(emb.embed(["sailing boats"]))
    await asyncio.sleep(0.01)  # its encode is under way
    second = asyncio.ensure_future(emb.embed(["sailing boats"]))
    await asyncio.sleep(0.01)
    first.cancel()
    v = await second
    assert first.cancelled()
    assert v.shape == (1, 384)
    assert len(inner.calls) == 1
    assert emb.cached("sailing boats") is not None


async def test_the_local_models_dimension_comes_from_its_configuration_without_loading_it():
    from playground.embedding.minilm import MiniLMEmbedder

    fresh = MiniLMEmbedder()
    empty = await CachingEmbedder(fresh).embed([])
    assert fresh.dim == 384
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32
    assert fresh._model is None  # nothing was loaded for it


async def test_a_failed_encode_reaches_every_waiter_and_the_next_call_tries_again():
    class Broken:
        name = "broken"
        dim = 384
        calls = 0

        async def embed(self, texts):
            Broken.calls += 1
            await asyncio.sleep(0.01)
            raise RuntimeError("model gone")

    emb = CachingEmbedder(Broken())
    got = await asyncio.gather(emb.embed(["x"]), emb.embed(["x"]), return_exceptions=True)
    assert [type(e) for e in got] == [RuntimeError, RuntimeError]
    assert Broken.calls == 1
    assert emb.cached("x") is None
    with pytest.raises(RuntimeError, match="model gone"):
        await emb.embed(["x"])
    assert Broken.calls == 2


async def _batches(minilm, monkeypatch, coalesce: bool) -> tuple[list[int], list[np.ndarray]]:
    sizes: list[int] = []
    real = minilm.embed_sync

    def counted(texts):
        sizes.append(len(texts))
        return real(texts)

    monkeypatch.setattr(minilm, "embed_sync", counted)
    monkeypatch.setattr(minilm, "coalesce", coalesce)
    texts = [f"thought number {i} about the weekend" for i in range(9)]
    out = await asyncio.gather(*(minilm.embed([t]) for t in texts))
    alone = real(texts)
    for i, v in enumerate(out):  # each caller gets its own text's vector back
        assert v.shape == (1, 384)
        assert np.allclose(v[0], alone[i], atol=1e-5)
    return sizes, out


async def test_waiting_requests_go_in_as_one_batch_when_coalescing(minilm, monkeypatch):
    sizes, _ = await _batches(minilm, monkeypatch, coalesce=True)
    assert sizes == [9]


async def test_without_coalescing_each_request_is_encoded_on_its_own(minilm, monkeypatch):
    sizes, _ = await _batches(minilm, monkeypatch, coalesce=False)
    assert sizes == [1] * 9


async def test_a_failed_batch_fails_each_of_its_requests_and_the_next_batch_runs(
    minilm, monkeypatch
):
    monkeypatch.setattr(minilm, "coalesce", True)
    real = minilm.embed_sync
    fail = [True]

    def flaky(texts):
        if fail.pop() if fail else False:
            raise RuntimeError("out of memory")
        return real(texts)

    monkeypatch.setattr(minilm, "embed_sync", flaky)
    got = await asyncio.gather(minilm.embed(["a"]), minilm.embed(["b"]), return_exceptions=True)
    assert [type(e) for e in got] == [RuntimeError, RuntimeError]
    assert (await minilm.embed(["c"])).shape == (1, 384)


async def test_model_engines_coalesce_and_the_offline_engine_does_not(
    llm_server, minilm, monkeypatch
):
    from tests.conftest import server_settings

    monkeypatch.setattr(minilm, "coalesce", False)  # restored after the test
    emb = CachingEmbedder(minilm)
    engine = await factory.build_engine(server_settings(llm_server), embedder=emb, probe=False)
    await engine.close()
    assert minilm.coalesce is True
    engine = await factory.build_engine(Settings(), embedder=emb)
    await engine.close()
    assert minilm.coalesce is False  # offline reruns stay bit-for-bit
