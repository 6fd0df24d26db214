"""Real sessions for the raters' web tests: offline simulations, with tell-tale markers.

Each session's condition, engine, model and message origins are set to unique marker strings
(with SQL), so a test can assert that none of them ever reaches a rater's page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testbed.raters import simulated_sessions


@pytest.fixture(scope="session")
def rater_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Four finished sessions, two per condition, in one experiment: (database, session ids)."""
    path = tmp_path_factory.mktemp("raters") / "template.db"
    return path, simulated_sessions(path)


@pytest.fixture
def rater_db(rater_template: tuple[Path, list[str]], tmp_path: Path) -> tuple[Path, list[str]]:
    """A private copy of the template: (database path, session ids)."""
    path = tmp_path / "raters.db"
    shutil.copy(rater_template[0], path)
    return path, rater_template[1]
