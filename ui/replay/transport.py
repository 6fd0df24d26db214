"""The replay transport: play/pause, step buttons, speed, typing speed, and a scrubbable timeline
with marks for interruptions, System-1 replies, forced expressions, human messages, notes, errors
and silences."""

from __future__ import annotations

import bisect

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from playground.history.recording import Recording
from playground.history.timeline import MARK_LABELS

MARK_COLORS = {
    "interruption": "#c62828",
    "system1": "#6a1b9a",
    "forced": "#ef6c00",
    "human": "#1565c0",
    "note": "#795548",
    "error": "#000000",
    "silence": "#9e9e9e",
    "fork": "#2e7d32",
}
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0)


class Timeline(QWidget):
    """A track of the session's moments; click or drag to scrub. Marks sit above the track."""

    scrubbed = Signal(int)  # seq

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recording: Recording | None = None
        self.position = 0
        self._seqs: list[int] = []  # the moments' positions
        # The track and its marks only change with the recording or the size: drawn once into a
        # pixmap, so moving the position repaints a copy and the cursor, not a thousand marks.
        self._track: QPixmap | None = None
        self.setMinimumHeight(34)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def sizeHint(self) -> QSize:
        return QSize(400, 34)

    def set_recording(self, recording: Recording | None) -> None:
        self.recording = recording
        self.position = recording.first if recording else 0
        self._seqs = [m.seq for m in recording.moments] if recording else []
        self._track = None
        self.update()

    def set_position(self, seq: int) -> None:
        self.position = seq
        self.update()

    # -- geometry ------------------------------------------------------------------------------

    def _x_of(self, seq: int) -> float:
        """Moments are evenly spaced; a position between two moments sits between them."""
        seqs = self._seqs
        if not seqs:
            return 8.0
        width = max(1.0, self.width() - 16.0)
        n = max(1, len(seqs) - 1)
        if seq <= seqs[0]:
            return 8.0
        if seq >= seqs[-1]:
            return 8.0 + width
        i = bisect.bisect_right(seqs, seq) - 1
        frac = (seq - seqs[i]) / max(1, seqs[i + 1] - seqs[i])
        return 8.0 + width * (i + frac) / n

    def seq_at(self, x: float) -> int:
        """The moment nearest to ``x``."""
        rec = self.recording
        if rec is None or not rec.moments:
            return 0
        width = max(1.0, self.width() - 16.0)
        n = max(1, len(rec.moments) - 1)
        i = round((x - 8.0) / width * n)
        return rec.moments[max(0, min(len(rec.moments) - 1, i))].seq

    # -- painting and mouse ------------------------------------------------------------------------

    def resizeEvent(self, event) -> None:
        self._track = None
        super().resizeEvent(event)

    def _draw_track(self) -> QPixmap:
        ratio = self.devicePixelRatioF()
        pix = QPixmap(round(self.width() * ratio), round(self.height() * ratio))
        pix.setDevicePixelRatio(ratio)
        pix.fill(Qt.GlobalColor.transparent)
        p = QPainter(pix)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        track_y = self.height() - 10
        p.fillRect(QRectF(8, track_y - 2, self.width() - 16, 4), QColor("#d0d0d0"))
        rec = self.recording
        if rec is not None:
            p.setPen(QPen(QColor("#9fa8da"), 1))
            for m in rec.moments:
                if m.kind == "message":
                    mx = self._x_of(m.seq)
                    p.drawLine(QPointF(mx, track_y - 4), QPointF(mx, track_y + 4))
            rows = {k: i for i, k in enumerate(MARK_COLORS)}
            p.setPen(Qt.PenStyle.NoPen)
            for mark in rec.marks:
                mx = self._x_of(mark.seq)
                y = 3 + (rows[mark.kind] % 3) * 5
                p.setBrush(QColor(MARK_COLORS[mark.kind]))
                p.drawEllipse(QPointF(mx, y + 2), 2.6, 2.6)
        p.end()
        return pix

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._track is None:
            self._track = self._draw_track()
        p = QPainter(self)
        p.drawPixmap(0, 0, self._track)
        rec = self.recording
        if rec is not None:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            track_y = self.height() - 10
            x = self._x_of(self.position)
            p.fillRect(QRectF(8, track_y - 2, x - 8, 4), QColor("#5c6bc0"))
            p.setBrush(QColor("#283593"))
            p.setPen(QPen(QColor("white"), 1.5))
            p.drawEllipse(QPointF(x, track_y), 6, 6)
        p.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.recording is not None:
            self.scrubbed.emit(self.seq_at(event.position().x()))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        rec = self.recording
        if rec is None:
            return
        x = event.position().x()
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.scrubbed.emit(self.seq_at(x))
        near = [m for m in rec.marks if abs(self._x_of(m.seq) - x) <= 4]
        moment = rec.moment_at(self.seq_at(x))
        where = ""
        if moment is not None:
            where = (
                f"message #{moment.message_id}"
                if moment.kind == "message"
                else f"decisions of step {moment.step}"
            )
        self.setToolTip("\n".join([where, *(m.label for m in near[:6])]).strip())


class TransportBar(QWidget):
    """Replay controls. Emits requests; the replay controller does the work."""

    play_toggled = Signal()
    step_requested = Signal(int, str)  # direction (+1/-1), "" for any moment or "message"
    speed_changed = Signal(float)
    cps_changed = Signal(float)
    fork_requested = Signal()
    reviews_requested = Signal()
    close_requested = Signal()

    def __init__(self, default_cps: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transport")
        self.setStyleSheet(
            "#transport { background:#eef0fb; border:1px solid #c5cae9; border-radius:4px; }"
        )
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 3, 6, 3)
        outer.setSpacing(2)
        row = QHBoxLayout()
        row.setSpacing(4)
        icon = self.style().standardIcon
        sp = QStyle.StandardPixmap
        self.title = QLabel("<b>Replay</b>")
        row.addWidget(self.title)

        def button(pix: QStyle.StandardPixmap, tip: str) -> QToolButton:
            b = QToolButton()
            b.setIcon(icon(pix))
            b.setToolTip(tip)
            b.setAutoRaise(True)
            row.addWidget(b)
            return b

        self.prev_message = button(sp.SP_MediaSkipBackward, "Previous message (Shift+←)")
        self.prev_moment = button(sp.SP_MediaSeekBackward, "Previous message or decision (←)")
        self.play_button = button(sp.SP_MediaPlay, "Play / pause (Space)")
        self.next_moment = button(sp.SP_MediaSeekForward, "Next message or decision (→)")
        self.next_message = button(sp.SP_MediaSkipForward, "Next message (Shift+→)")
        self.prev_message.clicked.connect(lambda: self.step_requested.emit(-1, "message"))
        self.prev_moment.clicked.connect(lambda: self.step_requested.emit(-1, ""))
        self.play_button.clicked.connect(self.play_toggled)
        self.next_moment.clicked.connect(lambda: self.step_requested.emit(1, ""))
        self.next_message.clicked.connect(lambda: self.step_requested.emit(1, "message"))
        self.where = QLabel("")
        self.where.setMinimumWidth(120)
        # Its text changes at every step: a fixed size hint keeps that from re-laying out the
        # window each time.
        self.where.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row.addWidget(self.where, 1)
        row.addWidget(QLabel("Speed"))
        self.speed = QComboBox()
        for s in SPEEDS:
            self.speed.addItem(f"{s:g}×", s)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.setToolTip("Replay speed (messages are typed at the typing speed × this)")
        self.speed.currentIndexChanged.connect(
            lambda: self.speed_changed.emit(float(self.speed.currentData()))
        )
        row.addWidget(self.speed)
        self.cps = QDoubleSpinBox()
        self.cps.setRange(1, 200)
        self.cps.setDecimals(0)
        self.cps.setSuffix(" chars/s")
        self.cps.setValue(default_cps)
        self.cps.setToolTip("Human typing speed used to animate messages")
        self.cps.valueChanged.connect(self.cps_changed)
        row.addWidget(self.cps)
        self.fork_button = QToolButton()
        self.fork_button.setText("Fork from here…")
        self.fork_button.setToolTip(
            "Start a new live session that continues from this moment, with the same or changed settings"
        )
        self.fork_button.clicked.connect(self.fork_requested)
        row.addWidget(self.fork_button)
        self.reviews_button = QToolButton()
        self.reviews_button.setToolTip(
            "People's reviews: what those who took part from a browser noted afterwards, message"
            " by message"
        )
        self.reviews_button.clicked.connect(self.reviews_requested)
        self.reviews_button.hide()  # shown for a session that has reviews
        row.addWidget(self.reviews_button)
        self.close_button = QToolButton()
        self.close_button.setText("Close replay")
        self.close_button.clicked.connect(self.close_requested)
        row.addWidget(self.close_button)
        outer.addLayout(row)
        self.timeline = Timeline()
        outer.addWidget(self.timeline)
        legend = " ".join(
            f"<span style='color:{MARK_COLORS[k]}'>●</span>&nbsp;{MARK_LABELS[k]}"
            for k in MARK_COLORS
        )
        self.legend = QLabel(f"<small>{legend}</small>")
        self.legend.setWordWrap(True)
        outer.addWidget(self.legend)

    def set_playing(self, playing: bool) -> None:
        sp = QStyle.StandardPixmap
        self.play_button.setIcon(
            self.style().standardIcon(sp.SP_MediaPause if playing else sp.SP_MediaPlay)
        )
