"""The quick tier (``./test --quick``): which tests start something outside the test process.

``tests/conftest.py`` marks every collected test with the kinds below that it needs, from its
module's source and its fixtures, so that no test file has to remember a marker: ``--quick``
deselects them with :data:`QUICK`. A module is judged as a whole (a file that starts a process
for one test leaves the quick tier with all its tests): over-including costs the quick tier a
few unit tests, under-including would let a slow or environment-bound test in unseen.
tests/project/test_quick_tier.py checks the result against its own reading of the files.
"""

from __future__ import annotations

import functools
import inspect
from types import ModuleType
from typing import Literal

import pytest

Kind = Literal["real_server", "browser", "x_server", "subprocess"]
KINDS: tuple[Kind, ...] = ("real_server", "browser", "x_server", "subprocess")
#: The ``-m`` expression of the quick tier.
QUICK = "not (" + " or ".join(KINDS) + ")"

#: Text in a module's source that shows each kind (imports and calls alike).
SIGNS: dict[Kind, tuple[str, ...]] = {
    "real_server": ("testbed.real_server", "llama_cpp"),
    "browser": ("tests.support.browser", "playwright", "chromium"),
    "x_server": ("Xvfb", "PLAYGROUND_REQUIRE_X", "x_screen"),
    "subprocess": (
        "subprocess",
        "Popen",
        "run_process",
        "run_python",
        "multiprocessing",
        "os.fork",
        "tests.support.faults",
        "tests.support.tls",
    ),
}
#: Fixtures that bring each kind with them, wherever they are defined.
FIXTURES: dict[Kind, tuple[str, ...]] = {
    "real_server": ("real_server",),
    "browser": (),
    "x_server": ("x_screen",),
    "subprocess": (),
}


@functools.cache
def _source(module: ModuleType) -> str:
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        return ""


def kinds_of(item: pytest.Item) -> set[Kind]:
    """The kinds of outside work ``item`` does: from its module's source, the sources of the
    modules defining its fixtures (a conftest's or a support module's fixture), its fixture
    names and the markers it already carries."""
    modules: list[ModuleType] = []
    module = getattr(item, "module", None)
    if module is not None:
        modules.append(module)
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info is not None else ():
        for d in defs:
            owner = inspect.getmodule(d.func)
            # Only this repository's fixtures: pytest's own (tmp_path, pytester...) start nothing
            # that a test here asks of them.
            if owner is None or not owner.__name__.startswith(("tests.", "testbed.", "conftest")):
                continue
            if owner not in modules:
                modules.append(owner)
    names = set(getattr(item, "fixturenames", ()))
    found: set[Kind] = set()
    for kind in KINDS:
        marked = item.get_closest_marker(kind) is not None or names & set(FIXTURES[kind])
        if marked or any(sign in _source(m) for m in modules for sign in SIGNS[kind]):
            found.add(kind)
    return found


def mark(items: list[pytest.Item]) -> None:
    """Add each item's kinds as markers (``pytest -m`` then selects by them)."""
    for item in items:
        for kind in sorted(kinds_of(item)):
            if item.get_closest_marker(kind) is None:
                item.add_marker(getattr(pytest.mark, kind))
