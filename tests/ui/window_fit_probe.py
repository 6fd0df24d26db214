"""Open every top-level window and dialog of the app on the display in ``$DISPLAY`` and print where
each one and its buttons landed (run by tests/ui/test_window_fit.py, one process per screen size).

Prints one line ``FIT <json>``: the screen's available geometry, and for each window its title,
class, frame geometry (global), client geometry and every visible QPushButton (QDialogButtonBox
buttons included) with its global geometry, whether it sits in a scroll area, and whether it
belongs to a dialog's button box; and ``unknown``: every window the probe did not open itself
(shown anyway), and every window class of ``ui`` it never opened, so that a new window cannot
escape the test. Run it under a window manager, with QT_QPA_PLATFORM=xcb.

The windows are measured once they have settled, not after a while: each is shown, exposed and
framed by the window manager, its fitting to that frame is done (ui.screen_fit.fitting), a
report view has computed what it shows (WorkerView.computing), and
its geometry and its buttons' stayed the same over several turns of the event loop, each after
a round trip to the X server (QApplication.sync) and the layouts' pending requests.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import pkgutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import PySide6  # noqa: E402,F401 - bind qasync to PySide6
import qasync  # noqa: E402
from PySide6.QtCore import QMargins, QPoint, QRect, QTimer  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QApplication,
    QDialog,
    QDialogButtonBox,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QWidget,
)

import ui  # noqa: E402
from playground import domain  # noqa: E402
from playground.settings import ProactivitySettings  # noqa: E402
from ui import screen_fit  # noqa: E402
from ui.app import build, use_app_font  # noqa: E402
from ui.collector import MainThreadCollector  # noqa: E402
from ui.rating.worker_view import WorkerView  # noqa: E402
from ui.widgets.tool_window import ToolWindow  # noqa: E402

#: Turns of the event loop (each after an X round trip) over which nothing may move.
STILL_TURNS = 3
#: Seconds after which windows that never settle are reported (a bound, not a wait).
SETTLE_LIMIT = 120.0


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def global_rect(w: QWidget) -> QRect:
    return QRect(w.mapToGlobal(QPoint(0, 0)), w.size())


def frame_rect(top: QWidget) -> QRect:
    """``top`` with the frame the window system reports around it (``QWindow.frameMargins``;
    ``QWidget.frameGeometry()`` can keep a stale frame on a busy machine)."""
    handle = top.windowHandle()
    return top.geometry().marginsAdded(handle.frameMargins() if handle else QMargins())


def in_scroll_area(w: QWidget, top: QWidget) -> bool:
    p = w.parentWidget()
    while p is not None and p is not top:
        if isinstance(p, QScrollArea):
            return True
        p = p.parentWidget()
    return False


def describe(top: QWidget, label: str) -> dict[str, Any]:
    buttons = []
    for b in top.findChildren(QPushButton):
        if b.window() is not top or not b.isVisibleTo(top):
            continue
        buttons.append(
            {
                "text": b.text().replace("&", ""),
                "global": rect(global_rect(b)),
                "in_scroll": in_scroll_area(b, top),
                "button_box": isinstance(b.parentWidget(), QDialogButtonBox),
            }
        )
    return {
        "name": label,
        "class": type(top).__name__,
        "title": top.windowTitle(),
        "visible": top.isVisible(),
        "frame": rect(frame_rect(top)),
        "geometry": rect(top.geometry()),
        "buttons": buttons,
    }


def window_classes() -> set[type]:
    """Every window class of ``ui`` (a dialog, main window or tool window) that is not a base of
    another: importing every module finds them."""
    for info in pkgutil.walk_packages(ui.__path__, "ui."):
        importlib.import_module(info.name)
    found: set[type] = set()
    todo: list[type] = [QDialog, QMainWindow, ToolWindow]
    while todo:
        cls = todo.pop()
        subs: list[type] = cls.__subclasses__()
        todo.extend(subs)
        if cls.__module__.startswith("ui.") and not any(
            sub.__module__.startswith("ui.") for sub in subs
        ):
            found.add(cls)
    return found


def unknown_windows(opened: list[tuple[QWidget, str]]) -> list[str]:
    """Windows shown that the probe did not open, and window classes it never opened."""
    ours = {id(w) for w, _ in opened}
    out = [
        f"{type(w).__name__} ({w.windowTitle()!r}) is shown but not measured"
        for w in QApplication.topLevelWidgets()
        if w.isVisible() and w.isWindow() and id(w) not in ours
    ]
    seen = {type(w) for w, _ in opened}
    out += [
        f"{cls.__module__}.{cls.__qualname__} is a window the probe never opens"
        for cls in sorted(window_classes() - seen, key=lambda c: c.__qualname__)
    ]
    return out


def not_settled(w: QWidget) -> str:
    """Why ``w`` cannot be measured yet ("" once it can)."""
    handle = w.windowHandle()
    if not w.isVisible() or handle is None or not handle.isExposed():
        return "not exposed"
    if not screen_fit.framed(w):
        return "not framed by the window manager"
    if screen_fit.fitting(w):
        return "still being fitted to its frame"
    if isinstance(w, WorkerView) and w.computing:
        return "still computing what it shows"  # its results change its contents
    return ""


async def settled(opened: list[tuple[QWidget, str]]) -> None:
    """Return once every window can be measured and nothing moved for :data:`STILL_TURNS` turns
    of the event loop (checked from a zero timer, outside any task: a round trip to the X
    server processes events, which a running task must not do).

    Raises:
        RuntimeError: naming the windows that did not settle within :data:`SETTLE_LIMIT`.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    deadline = loop.time() + SETTLE_LIMIT
    last: list[list[dict[str, Any]]] = []
    still = [0]
    timer = QTimer()
    timer.setInterval(0)

    def check() -> None:
        if done.done():
            return
        QApplication.sync()  # the window manager's configure events so far have arrived
        waiting = [f"{label}: {why}" for w, label in opened if (why := not_settled(w))]
        now = [describe(w, label) for w, label in opened]
        still[0] = still[0] + 1 if not waiting and last and now == last[-1] else 0
        last[:] = [now]
        if still[0] >= STILL_TURNS:
            timer.stop()
            done.set_result(None)
        elif loop.time() > deadline:
            timer.stop()
            why = "; ".join(waiting) or "their geometry kept changing"
            done.set_exception(RuntimeError(f"windows did not settle: {why}"))

    timer.timeout.connect(check)
    timer.start()
    await done


async def open_everything() -> dict[str, Any]:
    from ui.dialogs.participant_settings import ParticipantSettingsDialog
    from ui.panes.decisions.evaluation_popup import EvaluationPopup
    from ui.panes.memory.memory_edit import MemoryEditDialog
    from ui.rating.questionnaire import JoinedSessionPicker, QuestionnaireDialog
    from ui.rating.rater_window import RaterWindow
    from ui.replay.fork_dialog import ForkDialog
    from ui.replay.leave_live import LeaveLiveQuestion
    from ui.replay.reviews import ReviewsWindow

    tmp = tempfile.mkdtemp()
    sid = write_session(Path(tmp) / "fit.db")
    win, controller = build(db_path=f"{tmp}/fit.db", environ={})
    win.show()
    await settled([(win, "MainWindow")])
    db = controller.database()
    opened: list[tuple[QWidget, str]] = [(win, "MainWindow")]

    def add(w: Any, label: str | None = None) -> None:
        assert w is not None
        opened.append((w, label or type(w).__name__))

    new_session = win.dialogs.open_new_session()
    add(new_session)
    assert new_session is not None
    add(win.dialogs.open_persona_editor(new_session))
    add(new_session.simulated.open_generate())  # type: ignore[attr-defined]  # set by session_dialogs
    add(win.dialogs.open_engine_settings())
    settings = ParticipantSettingsDialog("Ana", ProactivitySettings(), win)
    settings.open()  # the menu opens it for the selected agent of a live session
    add(settings)
    add(win.dialogs.open_join())
    fork = ForkDialog("message #3", "offline engine", win)  # the replay's Fork from here…
    fork.open()
    add(fork)
    add(win.experiments.open_view())
    add(win.experiments.new_experiment())
    add(win.experiments.plans.open_view())
    add(win.experiments.plans.new_plan())
    add(win.storm.open_view())
    add(win.storm.open_add())
    profile = controller.simulated.generate_profile(1, task=None, difficulty=None, uncertainty=0)
    add(win.storm.open_editor(profile))
    add(win.open_library())
    add(win.keys.show_shortcuts())
    add(win.rating.open_rater())
    add(win.rating.open_plans())
    add(win.rating.open_report())
    add(win.rating.open_study_report())
    add(win.rating.open_invite())
    rating = RaterWindow(db, win)  # the blind rating window on a session: conversation and form
    rating.show()
    rating.rate_session(sid)
    rating.start("rater-1")
    add(rating, "RaterWindow rating a session")
    pair = RaterWindow(db, win)  # a pairwise preference: two conversations side by side
    pair.show()
    pair.start("rater-2")
    pair._show_pair(sid, sid)
    add(pair, "RaterWindow comparing two")
    questionnaire = QuestionnaireDialog(db, "20260101-000000-none", "", win)
    questionnaire.open()  # the Rating menu offers it when a person leaves a session
    add(questionnaire)
    picker = JoinedSessionPicker(db, win)
    picker.open()
    add(picker)
    memory = MemoryEditDialog("Add a memory", None, win)
    memory.open()
    add(memory)
    add(win.dialogs.open_invite())
    leave = LeaveLiveQuestion(win, "A live session of 4 messages is running.", "opening another")
    leave.open()  # before a live session is ended for a saved one
    add(leave)
    add(ReviewsWindow(db, sid, win))
    opened[-1][0].show()
    thought = domain.Thought(
        id=1, agent="Ana", text="A thought.", system=2, created_step=1, last_access=1
    )
    popup = EvaluationPopup(thought, [full_evaluation()], win)  # as tall as they get
    popup.show()
    add(popup)
    await settled(opened)
    screen = win.screen()
    out = {
        "screen": rect(screen.geometry()),
        "available": rect(screen.availableGeometry()),
        "windows": [describe(w, label) for w, label in opened],
        "unknown": unknown_windows(opened),
    }
    return out


def full_evaluation() -> domain.Evaluation:
    """An evaluation with everything the pop-up can list: reasons, eight heuristics, history."""
    reason = "A reason long enough to wrap over two lines of the pop-up, as the model writes."
    return domain.Evaluation(
        thought_id=1,
        step=3,
        rating=4,
        distribution={1: 0.05, 2: 0.1, 3: 0.2, 4: 0.45, 5: 0.2},
        reasons_for=[reason, reason, reason],
        reasons_against=[reason, reason],
        heuristics={h: 0.5 for h in domain.HEURISTICS},
        expected=3.65,
        silence_factor=1.0404,
        score=3.8,
        method="offline-heuristic",
    )


def write_session(path: Path) -> str:
    """A finished session of a few messages, for the rating windows."""
    from playground import events
    from playground.storage import SessionRecorder, open_database

    sid = "20260101-000000-fit"
    db = open_database(path)
    rec = SessionRecorder(db)
    stream: list[events.Event] = [
        events.SessionStarted(
            engine="offline engine",
            model="offline",
            seed=1,
            condition="inner-thoughts",
            settings={},
        )
    ]
    names = ("Ana", "Ben")
    for i, name in enumerate(names):
        persona = domain.Persona(id=name.lower(), name=name, facts=[f"I am {name}."])
        stream.append(
            events.ParticipantJoined(
                name=name, participant_kind="ai", persona=persona, color_index=i
            )
        )
    for m in range(1, 9):
        msg = domain.Message(
            id=m, speaker=names[m % 2], text=f"Message {m}.", step=m, at="2026-01-01T00:00:00"
        )
        stream.append(events.MessagePosted(message=msg))
    stream.append(events.SessionFinished(status="finished", reason="probe"))
    for seq, e in enumerate(stream, 1):
        rec.handle(e.model_copy(update={"session_id": sid, "seq": seq, "step": seq}))
    db.close()
    return sid


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)  # instance() is typed as the core application
    app.setQuitOnLastWindowClosed(False)
    use_app_font(app)  # as the app (ui.app.run): the windows' sizes depend on it
    MainThreadCollector(parent=app)
    result: dict[str, Any] = {}

    async def run() -> None:
        result.update(await open_everything())

    qasync.run(run())
    sys.stdout.write("FIT " + json.dumps(result) + "\n")  # the answer the parent test reads
    sys.stdout.flush()
    os._exit(0)  # the windows' own shutdown (the session database, tasks) is not under test


if __name__ == "__main__":
    main()
