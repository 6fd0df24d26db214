"""Shared fixtures: real MiniLM (loaded once), real SQLite files, a loopback OpenAI-compatible server."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlite_utils

from playground import events
from playground.embedding.cache import CachingEmbedder
from playground.embedding.minilm import MiniLMEmbedder
from playground.settings import load_settings
from playground.storage import open_database
from testbed.llm_server import FakeLLMServer
from tests.support import tiers
from tests.support.timed import write_timed_session

REPO = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that start a real model server, a browser, an X server or any other
    process (tests/support/tiers.py), so that ``./test --quick`` can leave them out."""
    tiers.mark(items)


@pytest.fixture(autouse=True)
def _no_real_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing in the test suite may reach a real provider: only the loopback server exists."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real all-MiniLM-L6-v2 model, loaded once for the whole run."""
    model = MiniLMEmbedder()
    model.load_sync()
    return model


@pytest.fixture
def embedder(minilm: MiniLMEmbedder) -> CachingEmbedder:
    """A fresh cache over the shared model (cache statistics start at zero)."""
    return CachingEmbedder(minilm)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
def db(db_path: Path):
    database = open_database(db_path)
    yield database
    database.close()


@pytest.fixture
def bus() -> events.EventBus:
    return events.EventBus(strict=True)


@pytest.fixture
def timed_db(tmp_path: Path) -> Iterator[sqlite_utils.Database]:
    """A short session whose triggers were timed (:mod:`tests.support.timed`), open."""
    write_timed_session(tmp_path / "timed.db")
    database = open_database(tmp_path / "timed.db")
    yield database
    database.close()


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as srv:
        yield srv


def offline_settings(**overrides: object):
    return load_settings({}, {"engine": "offline", **overrides})


def server_settings(srv: FakeLLMServer, **overrides: object):
    base = {
        "engine": "openai",
        "base_url": srv.base_url,
        "api_key": "test-key",
        "model": "fake-model",
        "retry_base_delay": 0.0,
    }
    return load_settings({}, {**base, **overrides})
