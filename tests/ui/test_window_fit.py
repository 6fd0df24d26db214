"""Windows and dialogs fit screens from 1024×700 to 2560×1440 (ui/screen_fit.py).

Under a real X server with a window manager (Xvfb and Openbox: ``apt-get install xvfb openbox``;
the test is skipped without them), one process per screen size opens every top-level window and
dialog of the app (tests/ui/window_fit_probe.py) and reports where the window manager put each
frame and each button, once they have settled (it waits on the windows, never for a time). A
window the probe does not know (shown, or a window class of ``ui`` it never opens) fails the
test by name. Every frame, and every button outside a scroll area, must lie within the
screen's available geometry; a dialog's button box never scrolls away.

In-process: the size and place given to a window are kept per window class in QSettings (a file
of the test's own) and restored, never off the screen or larger than it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMargins, QPoint, QRect, QSettings, QSize
from PySide6.QtWidgets import QApplication, QDialog, QVBoxLayout, QWidget

from ui import screen_fit
from ui.screen_fit import fit_window, fitted_size, placed, scrolling_body

ROOT = Path(__file__).resolve().parents[2]
SCREENS = [(1024, 700), (1440, 900), (2560, 1440)]
#: Every top-level window and dialog the probe opens (by class; the blind rating window also on
#: a session to rate and on a pair to compare).
WINDOWS = {
    "MainWindow",
    "NewSessionDialog",
    "PersonaEditorDialog",
    "GenerateProfileDialog",
    "EngineSettingsDialog",
    "ParticipantSettingsDialog",
    "JoinDialog",
    "ForkDialog",
    "ExperimentsWindow",
    "NewExperimentDialog",
    "StudyPlansWindow",
    "NewStudyPlanDialog",
    "StormWindow",
    "AddSimulatedUserDialog",
    "ProfileEditorDialog",
    "SessionLibraryDialog",
    "ShortcutsDialog",
    "RaterWindow",
    "RaterWindow rating a session",
    "RaterWindow comparing two",
    "RatingPlanDialog",
    "ReportView",
    "StudyReportView",
    "QuestionnaireDialog",
    "JoinedSessionPicker",
    "MemoryEditDialog",
    "EvaluationPopup",
    "InviteDialog",
    "InviteRatersDialog",
    "ReviewsWindow",
    "LeaveLiveQuestion",
}


def _wait_for(check: Any, what: str, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def x_display(width: int, height: int, tmp: Path) -> Iterator[str]:
    """A fresh Xvfb display of ``width``×``height`` with Openbox running on it: its name."""
    missing = [b for b in ("Xvfb", "openbox") if shutil.which(b) is None]
    if missing:
        why = (
            f"{' and '.join(missing)} not installed (apt-get install xvfb openbox):"
            " the window-geometry tests need a real X server with a window manager"
        )
        if os.environ.get("PLAYGROUND_REQUIRE_X") == "1":  # ./test installed them
            pytest.fail(why)
        pytest.skip(why)
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
        ],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    procs = [xvfb]
    try:
        with os.fdopen(read) as f:
            number = f.readline().strip()  # written once the server accepts connections
        assert number, "Xvfb did not start"
        display = f":{number}"
        ready = tmp / f"openbox-started-{number}"
        procs.append(
            subprocess.Popen(
                ["openbox", "--startup", f"touch {ready}"],
                env={**os.environ, "DISPLAY": display},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        _wait_for(ready.exists, "Openbox to start")
        yield display
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def x_screen(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, QRect]]:
    """A fresh Xvfb display of the parametrized size with Openbox running on it."""
    width, height = request.param
    with x_display(width, height, tmp_path) as display:
        yield display, QRect(0, 0, width, height)


def _inside(r: list[int], area: QRect) -> bool:
    return area.contains(QRect(*r))


def _start_probe(display: str) -> subprocess.Popen[str]:
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "ui" / "window_fit_probe.py")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _report(probe: subprocess.Popen[str], screen: QRect) -> dict[str, Any]:
    """The probe's report, once it has checked the screen and found every window it knows."""
    try:
        stdout, stderr = probe.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        probe.kill()
        stdout, stderr = probe.communicate()
    line = next((ln for ln in stdout.splitlines() if ln.startswith("FIT ")), None)
    assert probe.returncode == 0, stderr[-3000:]
    assert line, stderr[-3000:]
    report = json.loads(line[4:])
    available = QRect(*report["available"])
    assert QRect(*report["screen"]) == screen
    assert screen.contains(available)
    assert not report["unknown"], "windows the probe does not measure:\n" + "\n".join(
        report["unknown"]
    )
    assert {w["name"] for w in report["windows"]} == WINDOWS
    return report


def _off_screen(report: dict[str, Any]) -> list[str]:
    """Every window whose frame, or a button outside a scroll area, is not on the screen."""
    available = QRect(*report["available"])
    problems = []
    for w in report["windows"]:
        name = w["name"]
        if not w["visible"]:
            problems.append(f"{name} is not shown")
        if not _inside(w["frame"], available):
            problems.append(f"{name}: frame {w['frame']} is not within {report['available']}")
        frame = QRect(*w["frame"])
        for b in w["buttons"]:
            if b["button_box"] and b["in_scroll"]:
                problems.append(f"{name}: {b['text']!r} scrolls away with the form")
            if b["in_scroll"]:
                continue  # reached by scrolling its scroll area (which lies in the frame)
            if not _inside(b["global"], available) or not frame.contains(QRect(*b["global"])):
                problems.append(f"{name}: button {b['text']!r} at {b['global']} is off screen")
    return problems


@pytest.mark.parametrize("x_screen", SCREENS, indirect=True, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_window_and_its_buttons_fit_the_screen(x_screen: tuple[str, QRect]) -> None:
    display, screen = x_screen
    report = _report(_start_probe(display), screen)
    problems = _off_screen(report)
    assert not problems, "\n".join(problems)
    windows = {w["name"]: w for w in report["windows"]}
    if screen.width() >= 2560:  # room to spare: each window opens at the size it asks for
        assert windows["MainWindow"]["geometry"][2:] == [1440, 900]
        assert windows["QuestionnaireDialog"]["geometry"][2:] == [720, 760]
        assert windows["RaterWindow"]["geometry"][2:] == [1200, 800]


def test_windows_fit_when_several_apps_open_at_once(tmp_path: Path) -> None:
    """On a busy machine Qt was seen to keep a stale frame around a framed window ([0, 0, 1, 1]
    around the main window): the margins worked out from it let the next windows open larger
    than a 1024×700 screen, and moving a window by it left its title bar above the screen. Four
    apps opening every window at once, each on its own 1024×700 screen, make that likely; the
    frames are the window system's own (QWindow.frameMargins)."""
    screen = QRect(0, 0, 1024, 700)
    with contextlib.ExitStack() as stack:
        displays = [stack.enter_context(x_display(1024, 700, tmp_path)) for _ in range(4)]
        probes = [_start_probe(d) for d in displays]
        reports = [_report(p, screen) for p in probes]
    problems = [f"app {i}: {p}" for i, r in enumerate(reports, 1) for p in _off_screen(r)]
    assert not problems, "\n".join(problems)


def test_a_frame_the_window_system_has_not_settled_is_not_taken() -> None:
    """The margins seen worked out from that stale frame, and the window system's own."""
    stale = QRect(0, 0, 1018, 664)
    seen = QMargins(0, 0, -1017, -663)  # geometry [0, 0, 1018, 664] in a frame of [0, 0, 1, 1]
    assert screen_fit.plausible_frame(seen) is None
    assert screen_fit.plausible_frame(QMargins()) is None  # not framed yet
    assert screen_fit.plausible_frame(QMargins(1, 20, 1, 300)) is None
    assert screen_fit.plausible_frame(QMargins(1, 20, 1, 5)) == QMargins(1, 20, 1, 5)
    assert stale.marginsAdded(QMargins(1, 20, 1, 5)) == QRect(-1, -20, 1020, 689)


# -- in-process: the fitting arithmetic and the kept geometry -------------------------------------


def test_a_size_is_fitted_into_the_screen_less_the_frame() -> None:
    frame = QMargins(1, 20, 1, 4)
    small = QRect(0, 0, 1024, 700)
    assert fitted_size(QSize(1440, 900), small, frame) == QSize(1022, 676)
    assert fitted_size(QSize(600, 400), small, frame) == QSize(600, 400)
    assert fitted_size(QSize(1440, 900), QRect(0, 0, 2560, 1440), frame) == QSize(1440, 900)


def test_a_frame_is_moved_onto_the_screen() -> None:
    screen = QRect(0, 30, 1024, 670)  # a panel above
    assert placed(QRect(100, 100, 400, 300), screen) == QPoint(100, 100)
    assert placed(QRect(900, 600, 400, 300), screen) == QPoint(624, 400)
    assert placed(QRect(-50, 0, 400, 300), screen) == QPoint(0, 30)
    assert placed(QRect(200, 100, 2000, 2000), screen) == QPoint(0, 30), "too big: top-left"


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[Path]:
    """Window geometry kept in a settings file of this test's own."""
    path = tmp_path / "windows.ini"
    screen_fit.keep_geometry(lambda: QSettings(str(path), QSettings.Format.IniFormat))
    yield path
    screen_fit.keep_geometry(None)


class _Tool(QWidget):
    def __init__(self) -> None:
        super().__init__()
        fit_window(self, (900, 600))


class _Other(QWidget):
    def __init__(self) -> None:
        super().__init__()
        fit_window(self, (500, 400))


def _available() -> QRect:
    screen = QApplication.primaryScreen()
    assert screen is not None
    return screen.availableGeometry()


def test_nothing_is_kept_unless_asked(qtbot: Any, tmp_path: Path) -> None:
    w = _Tool()
    qtbot.addWidget(w)
    w.show()
    w.resize(700, 500)
    w.hide()
    assert screen_fit._store is None
    again = _Tool()
    qtbot.addWidget(again)
    assert again.size() == QSize(900, 600)


def test_the_last_size_and_place_are_restored_per_window_class(qtbot: Any, kept: Path) -> None:
    w = _Tool()
    qtbot.addWidget(w)
    assert w.size() == QSize(900, 600), "first time: the size it asks for"
    w.show()
    w.resize(760, 520)
    w.move(QPoint(140, 90))
    w.close()
    assert kept.exists()
    again = _Tool()
    qtbot.addWidget(again)
    assert again.size() == QSize(760, 520)
    assert again.pos() == QPoint(140, 90)
    other = _Other()  # another class keeps its own
    qtbot.addWidget(other)
    assert other.size() == QSize(500, 400)


def test_a_kept_geometry_never_lands_off_screen_or_larger_than_it(qtbot: Any, kept: Path) -> None:
    available = _available()
    key = f"{screen_fit.GROUP}/_Tool"
    s = QSettings(str(kept), QSettings.Format.IniFormat)
    s.setValue(f"{key}/size", QSize(available.width() + 900, available.height() + 700))
    s.setValue(f"{key}/pos", QPoint(available.right() - 200, available.bottom() - 100))
    s.sync()
    w = _Tool()
    qtbot.addWidget(w)
    frame = screen_fit.frame_margins()
    assert w.width() <= available.width() - frame.left() - frame.right()
    assert w.height() <= available.height() - frame.top() - frame.bottom()
    assert available.contains(QRect(w.pos(), w.size().grownBy(frame)))
    s.setValue(f"{key}/size", QSize(600, 400))
    s.setValue(f"{key}/pos", QPoint(-30000, -30000))  # a screen that is gone
    s.sync()
    w2 = _Tool()
    qtbot.addWidget(w2)
    w2.show()
    assert w2.size() == QSize(600, 400)
    assert available.contains(w2.frameGeometry()), "placed on the screen it opens on"


class _Big(QWidget):
    def __init__(self) -> None:
        super().__init__()
        fit_window(self, (9000, 6000))  # more than any screen here


def test_a_size_a_small_screen_imposed_is_not_kept_as_a_choice(qtbot: Any, kept: Path) -> None:
    available = _available()
    w = _Big()
    qtbot.addWidget(w)
    w.show()
    assert w.width() < available.width(), "fitted"
    assert w.height() < available.height(), "fitted"
    w.close()
    s = QSettings(str(kept), QSettings.Format.IniFormat)
    assert s.value(f"{screen_fit.GROUP}/_Big/size") == QSize(9000, 6000), "what it asked for"
    again = _Big()
    qtbot.addWidget(again)
    again.show()
    assert available.contains(again.frameGeometry())


def test_a_scrolling_dialog_keeps_its_buttons_below_the_form(qtbot: Any) -> None:
    from PySide6.QtWidgets import QDialogButtonBox, QLabel

    dialog = QDialog()
    qtbot.addWidget(dialog)
    body, outer = scrolling_body(dialog)
    for i in range(40):
        body.addWidget(QLabel(f"row {i}"))
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok)
    outer.addWidget(buttons)
    dialog.resize(400, 300)  # much shorter than the 40 rows
    dialog.show()
    QApplication.processEvents()
    assert dialog.height() == 300, "the form does not make the dialog taller"
    ok = buttons.buttons()[0]
    assert dialog.rect().contains(QRect(ok.mapTo(dialog, QPoint(0, 0)), ok.size()))
    bar = dialog.scroll_area.verticalScrollBar()  # type: ignore[attr-defined]  # set by scrolling_body
    assert bar.maximum() > 0, "the form scrolls"
    assert not dialog.scroll_area.horizontalScrollBar().isVisible()  # type: ignore[attr-defined]  # as above
    assert isinstance(dialog.layout(), QVBoxLayout)


def test_the_blind_rating_scales_are_not_cut_off_in_a_1024_window(
    qtbot: Any, tmp_path: Path, qapp: QApplication
) -> None:
    """At 1024×700 the rating form's share of the window was narrower than its 1–7 scales:
    "strongly agree" was cut off (its scroll area does not scroll sideways)."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QScrollArea

    from playground.storage import open_database
    from ui.app import use_app_font
    from ui.rating.rater_window import RaterWindow

    before = QFont(qapp.font())
    use_app_font(qapp)
    try:
        db = open_database(tmp_path / "rating.db")
        w = RaterWindow(db)
        qtbot.addWidget(w)
        w.resize(1022, 675)  # the window a 1024×700 screen gives under Openbox
        w.stack.setCurrentWidget(w.conversation_page)
        w.show()
        QApplication.processEvents()
        scroll = w.form.findChild(QScrollArea)
        assert scroll is not None
        inner = scroll.widget()
        assert inner is not None
        assert inner.width() <= scroll.viewport().width(), "the scales run past the form"
        for row in w.form.rows.values():
            assert row.minimumSizeHint().width() <= row.width()
        db.close()
    finally:
        qapp.setFont(before)


GC_SCRIPT = """
import gc
from PySide6.QtWidgets import QApplication, QDialog
from ui.screen_fit import fit_window
app = QApplication([])
for _ in range(10):
    d = QDialog()
    fit_window(d, (400, 300))
    d.show(); app.processEvents(); d.hide()
    del d
    gc.collect(); app.processEvents()
print("survived")
"""


def test_a_fitted_dialog_left_to_the_garbage_collector_does_not_crash_the_app():
    """A regression: the fitting helper once held its window in an attribute, a reference cycle
    the collector broke in any order; Qt then called the helper's event filter on a half-cleared
    object (AttributeError, then a segmentation fault at the next window)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", GC_SCRIPT],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "survived" in run.stdout, run.stderr[-2000:]


def test_the_evaluation_popup_keeps_the_size_a_person_gave_it(qtbot: Any, kept: Path) -> None:
    """The pop-up was the one window neither fitted nor kept: it opened as tall as its text."""
    from playground import domain
    from ui.panes.decisions.evaluation_popup import EvaluationPopup

    thought = domain.Thought(
        id=1, agent="Ana", text="A thought.", system=2, created_step=1, last_access=1
    )
    popup = EvaluationPopup(thought, [])
    qtbot.addWidget(popup)
    popup.show()
    popup.resize(560, 380)
    popup.move(QPoint(120, 80))
    popup.close()
    again = EvaluationPopup(thought, [])
    qtbot.addWidget(again)
    assert again.size() == QSize(560, 380)
    assert again.pos() == QPoint(120, 80)
