"""The window's embedder seam: an embedding model handed to ``ui.app.build`` is the one every
session uses, and the window loads none of its own (issue 34, point 11)."""

from __future__ import annotations

from typing import Any

import pytest

from playground.embedding.cache import CachingEmbedder
from tests.ui.conftest import until
from ui.app import build, start

pytestmark = pytest.mark.asyncio


async def test_an_embedder_handed_in_is_the_sessions_and_nothing_is_loaded(
    qtbot: Any, tmp_path: Any, minilm: Any
) -> None:
    shared = CachingEmbedder(minilm)
    win, controller = build(db_path=str(tmp_path / "seam.db"), environ={}, embedder=shared)
    qtbot.addWidget(win)
    busy: list[str] = []
    notices: list[str] = []
    controller.busy_changed.connect(busy.append)
    controller.notice.connect(notices.append)
    assert controller.embedding.started
    assert not controller.embedding.loading
    start(win, controller)  # the app's start loads the model unless it was handed in
    assert await controller.embedding.get() is shared
    room = await controller.new_session(controller.library()[:2], icebreaker="Hello there")
    assert room is not None
    assert controller.engine is not None
    assert controller.engine.embedder is shared
    await until(lambda: not controller.setting_up, what="the set-up to end")
    assert not any(b.startswith("Loading the embedding model") for b in busy), busy
    assert "Starting…" in notices
    assert shared.misses > 0, "the session embedded its memories with the model handed in"
    await controller.shutdown()


async def test_without_an_embedder_the_window_loads_the_packaged_model(
    qtbot: Any, tmp_path: Any
) -> None:
    win, controller = build(db_path=str(tmp_path / "own.db"), environ={})
    qtbot.addWidget(win)
    assert not controller.embedding.started
    assert controller.embedding.loading
    assert controller.embedding.name == "all-MiniLM-L6-v2"
    await controller.shutdown()
