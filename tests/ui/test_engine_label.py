"""The status bar says which rating mode a session runs (live) or ran (replay)."""

from __future__ import annotations

import json

import pytest

from ui.app import build
from ui.replay.panel import engine_text


@pytest.mark.asyncio
async def test_the_status_bar_names_the_rating_mode_live_and_in_replay(qtbot, tmp_path) -> None:
    # async: closing the window at teardown shuts the controller down on the running loop
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    win, controller = build(db_path=str(tmp_path / "x.db"), environ=env)
    qtbot.addWidget(win)
    label = win.messages.engine_label
    assert label.text().endswith("· per-thought ratings")  # the default, as the paper
    controller.configure({"evaluation_mode": "batched", "base_url": env["OPENAI_BASE_URL"]})
    assert controller.engine_label().endswith("· batched ratings")
    saved = {
        "engine": "OpenAI-compatible (127.0.0.1:9)",
        "model": "m",
        "config": json.dumps({"engine": {"evaluation_mode": "per-thought"}}),
    }
    assert engine_text(saved) == "m · OpenAI-compatible (127.0.0.1:9) · per-thought ratings"
    assert engine_text({"engine": "offline engine"}) == "offline engine (no language model)"
    await controller.shutdown()
