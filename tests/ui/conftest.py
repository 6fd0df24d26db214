"""Qt tests run headless; async UI tests run on a qasync loop (pytest-asyncio loop-factory hook).

Never call qtbot.wait*/waitUntil inside an async test: it spins a nested Qt loop under the running
qasync loop and hangs the session. Poll with ``await asyncio.sleep`` instead (see ``until``).

A stuck test or teardown fails instead of hanging (see ``TestLoop`` and
``pytest_collection_modifyitems``).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    # Qt's offscreen screen is 800×800 unless configured; windows fit their screen
    # (ui/screen_fit.py), so the tests' screen is a 2560×1440 desktop: every window opens at
    # the size it asks for. tests/ui/test_window_fit.py checks small screens under a real X server.
    os.environ["QT_QPA_PLATFORM"] = "offscreen:configfile=" + os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "offscreen-screen.json"
    )

import asyncio
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, ClassVar

import PySide6  # noqa: F401 - bind qasync to PySide6
import pytest
import qasync
from PySide6.QtWidgets import QApplication

from ui.collector import MainThreadCollector

UI_TESTS = Path(__file__).resolve().parent
#: Seconds each step of a test's loop teardown may take (cancelling the tasks the test left,
#: closing async generators, ...) before it fails. Cancelled tasks normally end in milliseconds.
TEARDOWN_LIMIT = 60.0


class TestLoop(qasync.QEventLoop):
    """qasync's loop, whose ``run_until_complete`` gives up after :data:`TEARDOWN_LIMIT` seconds
    while a test is torn down.

    pytest-asyncio closes the loop as ``asyncio.Runner`` does: it cancels the tasks a test left and
    waits for them with ``run_until_complete(gather(...))``, without a limit. If one of them never
    ends (it swallows the cancellation, or waits on something that will not come), or qasync misses
    the stop, Qt's loop idles in C++ for ever: a pytest-xdist worker once sat there in
    ``_cancel_all_tasks`` after tests/ui/test_layout.py::test_a_real_session_at_1024_is_usable,
    where a signal-based timeout cannot reach it. The limit is a ``call_later``, which qasync runs
    from a Qt timer, so it fires while Qt idles; it stops Qt's loop itself (not only qasync's
    view of it) and the teardown fails, naming the tasks still pending.
    """

    __test__ = False  # not a test class, despite its name
    tearing_down: ClassVar[bool] = False  # set by pytest_runtest_teardown below

    def run_until_complete(self, future: Any) -> Any:
        if not TestLoop.tearing_down:
            return super().run_until_complete(future)
        future = asyncio.ensure_future(future, loop=self)
        give_up = self.call_later(TEARDOWN_LIMIT, self._give_up)
        try:
            return super().run_until_complete(future)
        except RuntimeError:  # "Event loop stopped before Future completed."
            if future.done():
                raise
        finally:
            give_up.cancel()
        pending = [t for t in asyncio.all_tasks(self) if not t.done()]
        stuck = "\n".join(f"  {t!r}" for t in pending) or f"  {future!r}"
        pytest.fail(
            f"the test's event loop did not shut down within {TEARDOWN_LIMIT:.0f} s; "
            f"still pending:\n{stuck}",
            pytrace=False,
        )

    def _give_up(self) -> None:
        self.stop()
        # Also when qasync already counts itself stopped but Qt's loop still runs (a stop lost).
        QApplication.exit()


def _qasync_loop() -> qasync.QEventLoop:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)  # instance() is typed as the core application
    app.setQuitOnLastWindowClosed(False)  # closing a window must not stop the loop under test
    if app.findChild(MainThreadCollector) is None:
        MainThreadCollector(
            parent=app
        )  # as the app does: no widget is ever freed off the GUI thread
    return TestLoop(app)


def pytest_asyncio_loop_factories(config, item):
    return {"qasync": _qasync_loop}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """The loop runner's teardown (a fixture finalizer) runs inside this hook: bound its waits."""
    TestLoop.tearing_down = True
    try:
        return (yield)
    finally:
        TestLoop.tearing_down = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """UI tests time out with pytest-timeout's ``thread`` method, not the configured ``signal``.

    SIGALRM cannot stop a test stuck in Qt's loop (checked): Python runs its handler only when
    Python code next runs, so with no Python timer pending it never runs at all; with one (the
    collector's) the handler's ``Failed: Timeout`` is raised inside that slot, pytest-qt reports
    it as "Exceptions caught in Qt event loop" and Qt's loop idles on. The thread method dumps every thread's stack and ends the process (under xdist the worker; xdist
    reports the test as crashed and starts a new one): a clear failure instead of a hang. It
    applies to setup, call and teardown alike (``timeout_func_only`` stays false: teardown is
    where the hang was). ``TestLoop`` catches the usual teardown case sooner and fails only that
    test; this is the backstop for anything else, such as a worker thread that never returns.
    """
    for item in items:
        if not item.path.is_relative_to(UI_TESTS):
            continue
        own = item.get_closest_marker("timeout")
        if own is not None and ("method" in own.kwargs or len(own.args) > 1):
            continue  # the test chose its method
        seconds = own.kwargs.get("timeout", own.args[0] if own.args else None) if own else None
        item.add_marker(pytest.mark.timeout(seconds, method="thread"), append=False)


@pytest.fixture(autouse=True)
def _own_qsettings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What the windows remember (QSettings: e.g. the New experiment dialog's last values) goes
    to a fresh folder for each test: never the user's ~/.config, never another test's."""
    from PySide6.QtCore import QSettings

    folder = tmp_path_factory.mktemp("qsettings")
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))


async def until(pred: Callable[[], object], timeout: float = 60.0, what: str = "condition") -> None:  # noqa: ASYNC109
    """Wait on ``pred``, turning the loop, until it holds. ``timeout`` is a bound for a failure,
    never a wait: a test costs it only when it fails (60 s: a busy 2-core machine took longer
    than 20 s for one refresh of the agreement report)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def step_session(win: Any, room: Any, steps: int) -> None:
    """Press Step ``steps`` times, each once it is offered, waiting for the step to be taken and
    every participant idle again."""

    def idle() -> bool:
        return all(state == "idle" for state in room.states.values())

    for i in range(steps):
        await until(win.act_step.isEnabled, timeout=60, what="Step to be offered")
        before = room.step
        win.act_step.trigger()
        await until(
            lambda: room.step > before and idle(),  # noqa: B023
            timeout=60,
            what=f"step {i + 1}",
        )


async def run_experiment(win: Any, condition: str, turns: int, **values: int) -> tuple[Any, str]:
    """Launch a one-conversation offline experiment of ``condition`` from Experiments ▸ New
    (other spin boxes of the dialog by name in ``values``), wait for it, and select its run:
    the Experiments view and the run's session id."""
    view = win.experiments.open_view()
    dlg = view.open_new_dialog()
    assert dlg is not None
    for c, box in dlg.conditions.items():
        box.setChecked(c == condition)
    dlg.conversations.setValue(1)
    dlg.turns.setValue(turns)
    for name, value in values.items():
        getattr(dlg, name).setValue(value)
    dlg.engine.setCurrentIndex(dlg.engine.findData("offline"))
    dlg.buttons.accepted.emit()
    job = view.job
    assert job is not None
    await until(lambda: not job.running, timeout=240, what="the experiment")
    view.runs.selectRow(0)
    sid = view.selected_session()
    assert sid is not None
    return view, sid


def app_window(qtbot, db_path, minilm, size: tuple[int, int] | None = (1440, 900)):
    """The app's main window on ``db_path`` with the shared, already-loaded MiniLM, shown at
    ``size`` (None: Qt's default) and closed by ``qtbot`` after the test: ``(window, controller)``."""
    from playground.embedding.cache import CachingEmbedder
    from ui.app import build

    win, controller = build(db_path=str(db_path), environ={}, embedder=CachingEmbedder(minilm))
    qtbot.addWidget(win)
    if size is not None:
        win.resize(*size)
    win.show()
    return win, controller
