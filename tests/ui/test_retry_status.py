"""The status bar says when LLM calls were retried, and how many waited out a 429."""

from __future__ import annotations

import pytest

from playground.embedding.cache import CachingEmbedder
from testbed.llm_server import FakeLLMServer
from ui.app import build

pytestmark = pytest.mark.asyncio


async def test_retries_after_429_show_in_the_status_bar(qtbot, tmp_path, minilm):
    with FakeLLMServer() as srv:
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "test-key"}
        win, controller = build(
            db_path=str(tmp_path / "r.db"), environ=env, embedder=CachingEmbedder(minilm)
        )
        qtbot.addWidget(win)
        win.show()
        controller.configure({"model": "fake-model", "retry_base_delay": 0.01})
        room = await controller.new_session(
            controller.library()[:2], icebreaker="What did you do last weekend?"
        )
        assert room is not None
        assert "retr" not in win.messages.usage_label.text()  # nothing retried yet: nothing said
        srv.fail_next(429, count=3, retry_after=0.02)
        await room.step_once()
        text = win.messages.usage_label.text()
        assert "3 retries, 3 after 429 (" in text
        assert "LLM calls" in text
        await controller.shutdown()
