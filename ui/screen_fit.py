"""Windows and dialogs that fit the screen they open on, from 1024×700 to 2560×1440 and beyond.

Every top-level window says which size it would like (:func:`fit_window`); it gets at most the
*available* geometry of its screen (``QScreen.availableGeometry``: without panels and docks) less
the window manager's frame, and it opens with its frame inside that geometry. A window's frame is
not known before the window manager has framed it, so the first window allows for
:data:`FRAME_GUESS`; once a window is framed, its real frame is used, and a window sized here is
fitted again with it.

The size and place a person last gave each kind of window (keyed by its class) are kept with
``QSettings`` and restored, but never larger than the screen's available geometry and never off
it: a window last seen on a screen that is gone, or on a bigger one, opens fitted to the screen it
opens on. Nothing is kept until :func:`keep_geometry` says where (the app does, in
:func:`ui.app.run`; tests and screenshot scripts keep nothing, or pass a file of their own).

A dialog whose form may be taller than a small screen puts it in :func:`scrolling_body`: the
form scrolls, the buttons under it always show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from PySide6.QtCore import QEvent, QMargins, QObject, QPoint, QRect, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QCursor, QGuiApplication, QScreen
from PySide6.QtWidgets import QDialog, QFrame, QScrollArea, QVBoxLayout, QWidget

#: The frame allowed for around a window before any window is framed: a title bar and thin
#: borders (Openbox draws 1 px sides and a 20 px title; GNOME's title is about 37 px).
FRAME_GUESS = QMargins(4, 32, 4, 4)
#: After a window is shown, how long (ms) to wait for the window manager's frame before fitting
#: the window again with it.
FRAMED_CHECKS = (0, 250, 800)
#: The widest side a window manager's frame is believed to have (px): a larger or negative
#: margin is a frame the window system has not settled yet, never a real one.
MAX_FRAME_SIDE = 200
#: QSettings group of the kept geometries; one subgroup per window class.
GROUP = "windows"

_store: Callable[[], QSettings] | None = None
_known_frame: QMargins | None = None


def keep_geometry(store: Callable[[], QSettings] | None) -> None:
    """Keep each window's last size and place in the settings ``store()`` opens (None: keep
    nothing, the default)."""
    global _store
    _store = store


def frame_margins() -> QMargins:
    """The window manager's frame around a window: as last seen, else :data:`FRAME_GUESS`."""
    return QMargins(_known_frame) if _known_frame is not None else QMargins(FRAME_GUESS)


def fitted_size(preferred: QSize, available: QRect, frame: QMargins) -> QSize:
    """``preferred``, made no larger than what ``available`` leaves inside ``frame``."""
    return QSize(
        max(1, min(preferred.width(), available.width() - frame.left() - frame.right())),
        max(1, min(preferred.height(), available.height() - frame.top() - frame.bottom())),
    )


def placed(frame_rect: QRect, available: QRect) -> QPoint:
    """Where a window's frame ``frame_rect`` goes so that it lies inside ``available``: moved as
    little as possible (top-left kept when the frame is larger than ``available``)."""
    x = min(frame_rect.x(), available.right() + 1 - frame_rect.width())
    y = min(frame_rect.y(), available.bottom() + 1 - frame_rect.height())
    return QPoint(max(x, available.x()), max(y, available.y()))


def screen_for(widget: QWidget, at: QPoint | None = None) -> QScreen:
    """The screen ``widget`` opens on: the one at ``at`` (a position to restore), else its
    parent window's, its own once shown, the one under the mouse, or the primary screen."""
    if at is not None:
        found = QGuiApplication.screenAt(at)
        if found is not None:
            return found
    parent = widget.parentWidget()
    if parent is not None and parent.window().isVisible():
        return parent.window().screen()
    if widget.isVisible():
        return widget.screen()
    return QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()


def available_geometry(widget: QWidget) -> QRect:
    """The available geometry of the screen ``widget`` opens on (see :func:`screen_for`)."""
    return screen_for(widget).availableGeometry()


def _settings_key(widget: QWidget) -> str:
    return f"{GROUP}/{type(widget).__name__}"


def _read(widget: QWidget) -> tuple[QSize | None, QPoint | None, bool]:
    """The kept (size, frame position, maximized) of ``widget``'s class."""
    if _store is None:
        return None, None, False
    s = _store()
    key = _settings_key(widget)
    size, pos = s.value(f"{key}/size"), s.value(f"{key}/pos")
    maximized = str(s.value(f"{key}/maximized", "false")).lower() == "true"
    size = size if isinstance(size, QSize) and size.isValid() else None
    pos = pos if isinstance(pos, QPoint) else None
    return size, pos, maximized


def save_geometry(widget: QWidget, size: QSize | None = None) -> None:
    """Keep ``widget``'s size (or ``size``), frame position and maximized state (see
    :func:`keep_geometry`)."""
    if _store is None:
        return
    maximized = bool(widget.windowState() & Qt.WindowState.WindowMaximized)
    if maximized:
        normal = widget.normalGeometry()
        kept = normal.size()
        pos = frame_geometry(widget).topLeft() if not normal.isValid() else normal.topLeft()
    else:
        kept, pos = widget.size(), frame_geometry(widget).topLeft()
    size = size or kept
    s = _store()
    key = _settings_key(widget)
    if size.isValid():
        s.setValue(f"{key}/size", size)
    s.setValue(f"{key}/pos", pos)
    s.setValue(f"{key}/maximized", maximized)
    s.sync()


class _Fit(QObject):
    """Fits its window on every show and keeps its geometry on every hide."""

    def __init__(self, widget: QWidget, preferred: QSize) -> None:
        super().__init__(widget)  # the window is this object's parent, not an attribute:
        # a Python reference back to it would make a cycle, which the garbage collector
        # breaks in any order, Qt still calling this filter on a half-cleared object.
        self.preferred = preferred
        #: The size this module gave the window last (None: the window's code or the person
        #: resized it since; it is then left alone, only kept on screen).
        self.given: QSize | None = None
        #: The size asked for when this module sized it (the kept one, else ``preferred``).
        self.asked = preferred
        self.restored_pos: QPoint | None = None
        self.shown_once = False
        self._checks: list[QTimer] = []
        widget.installEventFilter(self)

    @property
    def widget(self) -> QWidget:
        return cast(QWidget, self.parent())

    # -- sizing --------------------------------------------------------------------------------

    def apply(self) -> None:
        """Size the window (kept size, else the preferred one) for the screen it opens on."""
        w = self.widget
        size, pos, maximized = _read(w)
        screen = screen_for(w, _frame_center(pos, size) if pos is not None else None)
        available = screen.availableGeometry()
        on_screen = (
            pos is not None and QGuiApplication.screenAt(_frame_center(pos, size)) is not None
        )
        frame = frame_margins()
        self.asked = size or self.preferred
        target = fitted_size(self.asked, available, frame)
        w.resize(target)
        self.given = w.size()
        self.restored_pos = None
        if on_screen and pos is not None:
            outer = QRect(pos, target.grownBy(frame))
            self.restored_pos = placed(outer, available)
            w.move(self.restored_pos)
        if maximized:
            w.setWindowState(w.windowState() | Qt.WindowState.WindowMaximized)

    def _owned(self) -> bool:
        return self.given is not None and self.widget.size() == self.given

    def _first_place(self) -> None:
        """A window with no kept place: dialogs are centred by Qt; other windows here, over
        their parent window or the screen."""
        w = self.widget
        if isinstance(w, QDialog) or self.restored_pos is not None:
            return
        if w.testAttribute(Qt.WidgetAttribute.WA_Moved):
            return  # the window's code placed it
        available = available_geometry(w)
        outer = QRect(QPoint(0, 0), w.size().grownBy(frame_margins()))
        parent = w.parentWidget()
        around = frame_geometry(parent.window()) if parent is not None else available
        outer.moveCenter(around.center())
        w.move(placed(outer, available))

    def keep_on_screen(self) -> None:
        """Fit the window again with its real frame: shrunk (or grown back to what it asked
        for) when this module sized it, moved so that the frame lies inside the screen."""
        w = self.widget
        if not w.isVisible() or w.windowState() & (
            Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen
        ):
            return
        framed = _frame_of(w)
        if framed is not None:
            global _known_frame
            _known_frame = framed
        frame = framed or frame_margins()
        available = w.screen().availableGeometry()
        if self._owned():
            want = fitted_size(self.asked, available, frame)
            if want != w.size():
                w.resize(want)
                self.given = w.size()
        outer = w.geometry().marginsAdded(frame)
        target = placed(outer, available)
        if target != outer.topLeft():
            # The window itself is placed, not its frame: QWidget.move() places the frame by the
            # frame Qt last saw, which on a busy machine can be stale (a title bar left above
            # the screen, moved again and again to the same place).
            w.setGeometry(QRect(target + QPoint(frame.left(), frame.top()), w.size()))

    # -- events ----------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parent():
            kind = event.type()
            if kind == QEvent.Type.Show:
                if not self.shown_once:
                    self.shown_once = True
                    self._first_place()
                # A dialog is centred over its parent in its own showEvent, after this filter
                # (and only if nothing moved it): it is checked once shown.
                if not isinstance(self.widget, QDialog):
                    self.keep_on_screen()
                self._schedule_checks()
            elif kind == QEvent.Type.Hide and self.shown_once:
                # A size this module gave (a small screen's) is not a choice: the size asked
                # for is kept, and a bigger screen gets it back.
                save_geometry(self.widget, self.asked if self._owned() else None)
        return False

    def _schedule_checks(self) -> None:
        for timer in self._checks:
            timer.stop()
        self._checks = []
        for delay in FRAMED_CHECKS:
            timer = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(self.keep_on_screen)
            timer.start(delay)
            self._checks.append(timer)


def _frame_center(pos: QPoint, size: QSize | None) -> QPoint:
    """The middle of a frame at ``pos`` (its top-left) around a window of ``size``."""
    if size is None:
        return pos
    return QRect(pos, size.grownBy(frame_margins())).center()


def plausible_frame(margins: QMargins) -> QMargins | None:
    """``margins`` if they can be a window manager's frame (None: no frame yet, or one the
    window system has not settled: a negative side, or one wider than :data:`MAX_FRAME_SIDE`)."""
    sides = (margins.left(), margins.top(), margins.right(), margins.bottom())
    if margins.isNull() or min(sides) < 0 or max(sides) > MAX_FRAME_SIDE:
        return None
    return QMargins(margins)


def _frame_of(widget: QWidget) -> QMargins | None:
    """The frame the window manager drew around ``widget`` (None: not framed yet), as the window
    system reports it (``QWindow.frameMargins``).

    ``QWidget.frameGeometry()`` is not used: on a busy machine it was seen to keep a stale frame
    of ``[0, 0, 1, 1]`` around a framed 1018×664 window, and the negative margins worked out
    from it fitted the next windows larger than the screen.
    """
    handle = widget.windowHandle()
    return None if handle is None else plausible_frame(handle.frameMargins())


def frame_geometry(widget: QWidget) -> QRect:
    """``widget``'s window with its frame, in screen coordinates (its geometry alone until the
    window manager has framed it)."""
    return widget.geometry().marginsAdded(_frame_of(widget) or QMargins())


def framed(widget: QWidget) -> bool:
    """True once the window manager has drawn its frame around ``widget``'s window."""
    return _frame_of(widget.window()) is not None


def fitting(widget: QWidget) -> bool:
    """True while ``widget`` (a window sized by :func:`fit_window`) waits to be fitted again
    with the window manager's frame (see :data:`FRAMED_CHECKS`)."""
    fit = widget.findChild(_Fit, options=Qt.FindChildOption.FindDirectChildrenOnly)
    return fit is not None and any(timer.isActive() for timer in fit._checks)


def fit_window(widget: QWidget, preferred: tuple[int, int] | QSize) -> None:
    """Open ``widget`` (a top-level window or dialog) at ``preferred`` size or the size it was
    last given, either no larger than its screen allows, with its frame on that screen.

    Call it once the window's contents exist (their minimum size still wins over the screen: a
    form that may be too tall belongs in :func:`scrolling_body`). Calling it again (contents
    added) asks for a new preferred size.
    """
    size = preferred if isinstance(preferred, QSize) else QSize(*preferred)
    fit = widget.findChild(_Fit, options=Qt.FindChildOption.FindDirectChildrenOnly)
    if fit is None:
        fit = _Fit(widget, size)
    else:
        fit.preferred = size
    fit.apply()


def preferred_size(widget: QWidget) -> QSize:
    """The size ``widget`` asked for with :func:`fit_window` (else its size now)."""
    fit = widget.findChild(_Fit, options=Qt.FindChildOption.FindDirectChildrenOnly)
    return QSize(fit.preferred) if fit is not None else widget.size()


class _ScrollingBody(QScrollArea):
    """A form's scroll area: as wide as the form needs (it never scrolls sideways), and as tall
    as the form when the screen allows (else it scrolls)."""

    def _extra(self) -> QSize:
        bar = self.verticalScrollBar().sizeHint().width()
        return QSize(2 * self.frameWidth() + bar, 2 * self.frameWidth())

    def sizeHint(self) -> QSize:
        inner = self.widget()
        return super().sizeHint() if inner is None else inner.sizeHint() + self._extra()

    def minimumSizeHint(self) -> QSize:
        inner = self.widget()
        if inner is None:
            return super().minimumSizeHint()
        least = super().minimumSizeHint()
        return QSize(inner.minimumSizeHint().width() + self._extra().width(), least.height())


def scrolling_body(dialog: QWidget) -> tuple[QVBoxLayout, QVBoxLayout]:
    """Lay ``dialog`` out as a scrolling form above what stays in view.

    Returns:
        ``(body, outer)``: fill ``body`` with the form (it scrolls vertically when the dialog is
        shorter than the form); add the buttons to ``outer`` after it, so they always show.
        The dialog's ``body`` attribute is ``body``, its ``scroll_area`` the scroll area.
    """
    outer = QVBoxLayout(dialog)
    scroll = _ScrollingBody()
    scroll.setObjectName("scrollingBody")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    inner = QWidget()
    inner.setObjectName("scrollingBodyContents")
    body = QVBoxLayout(inner)
    body.setContentsMargins(0, 0, 0, 0)
    scroll.setWidget(inner)
    outer.addWidget(scroll, 1)
    dialog.body = body  # type: ignore[attr-defined]
    dialog.scroll_area = scroll  # type: ignore[attr-defined]
    return body, outer
