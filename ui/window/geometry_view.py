"""The Geometry view in the main window: the conversation's trajectory in 2-D and its cohesion
and volatility over turns, live and in replay.

The view sits above the three panes, under the participants bar and the replay timeline, in a
vertical splitter, so the panes keep their widths and the reader can drag its height. View ▸
Geometry (Ctrl+Shift+G) shows or hides it; opening a replay shows it and closing the replay
brings back the reader's choice.

Live, each posted message is embedded in the background with the window's own embedder (the
MiniLM model the agents use; its cache has usually seen the text already) and the features are
computed in a worker thread, so the event loop never waits. In replay, the whole session's
vectors come from the database's embedding cache (computed once and kept), the picture is drawn
once, and moving through the replay only moves the highlight and the series' marker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from playground import errors
from playground.geometry import features
from playground.history.recording import Recording
from playground.storage import library
from ui import theme
from ui.dialogs.common import keep, kept
from ui.panes.geometry.geometry_series import GeometrySeries
from ui.panes.geometry.trajectory import TrajectoryPlot
from ui.window.host import WindowHost

log = logging.getLogger(__name__)

#: The view's first height: this share of the height it shares with the panes, within
#: [MIN_HEIGHT, MAX_INITIAL_HEIGHT] (px); it can be dragged down to MIN_HEIGHT.
INITIAL_SHARE = 0.3
MAX_INITIAL_HEIGHT = 240
MIN_HEIGHT = 120
#: Replay opens the panel by itself only in a window at least this tall: at 700 px the transport
#: bar, the panel and the decision strip would leave the conversation room for two messages.
AUTO_OPEN_HEIGHT = 800
#: View ▸ Geometry's shortcut.
SHORTCUT = "Ctrl+Shift+G"
TITLE = "Geometry"
#: QSettings group and key of the person's last choice of View ▸ Geometry (shown or not).
SETTINGS = "view"
CHOSEN = "geometry"
EXPLAINED = (
    "Each message is a point: the first two principal components of its all-MiniLM-L6-v2"
    " embedding, coloured by speaker and numbered by turn; consecutive turns are joined. The"
    " ring is the current moment (the latest message, or the replay's position).\n"
    "Cohesion: cosine of a message with the mean of the messages before it."
    " Volatility: cosine distance from the previous message. See docs/geometry.md."
)


@dataclass(frozen=True)
class GeometryData:
    """What the view draws for a conversation's messages, in turn order."""

    turns: list[int]
    speakers: list[str]
    xy: np.ndarray
    cohesion: list[float | None]
    volatility: list[float | None]

    @classmethod
    def empty(cls) -> GeometryData:
        return cls([], [], np.zeros((0, 2)), [], [])


def compute(vectors: np.ndarray, speakers: list[str], turns: list[int]) -> GeometryData:
    """The trajectory and the per-turn series of one conversation (pure; run it in a thread).

    Args:
        vectors: One embedding per message, in turn order.
        speakers: Who said each message.
        turns: Each message's turn number.

    Returns:
        The data to draw.

    Raises:
        ValueError: the three arguments describe different numbers of messages.
    """
    if len(speakers) == 0:
        return GeometryData.empty()
    series = features.turn_series(vectors, speakers)
    return GeometryData(
        turns=list(turns),
        speakers=list(speakers),
        xy=features.trajectory_2d(vectors),
        cohesion=series["cohesion"],
        volatility=series["volatility"],
    )


class GeometryPanel(QWidget):
    """The trajectory plot beside the cohesion and volatility series, with a one-line header.

    Attributes:
        trajectory: The 2-D trajectory plot.
        series: The cohesion / volatility plot.
        status: What the view is doing or why it shows nothing.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("geometryPanel")
        self.setMinimumHeight(MIN_HEIGHT)
        self.setToolTip(EXPLAINED)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 0)
        lay.setSpacing(1)
        head = QHBoxLayout()
        head.setContentsMargins(4, 0, 4, 0)
        self.title = QLabel(
            "<b>Geometry</b> <span style='color:#666'>· trajectory (PCA of the message"
            " embeddings) · cohesion and volatility per turn</span>"
        )
        self.status = QLabel("")
        self.status.setStyleSheet("color:#555;")
        self.status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        head.addWidget(self.title)
        head.addStretch(1)
        head.addWidget(self.status)
        lay.addLayout(head)
        plots = QHBoxLayout()
        plots.setContentsMargins(0, 0, 0, 0)
        plots.setSpacing(4)
        self.trajectory = TrajectoryPlot()
        self.series = GeometrySeries()
        for plot in (self.trajectory, self.series):
            plot.setMinimumSize(200, MIN_HEIGHT - 30)
        plots.addWidget(self.trajectory, 2)
        plots.addWidget(self.series, 3)
        lay.addLayout(plots, 1)

    def show_data(
        self, data: GeometryData, colors: dict[str, str], current: int | None = None
    ) -> None:
        """Draw ``data`` (the current message at index ``current``; None: the last one)."""
        self.trajectory.set_points(data.xy, data.speakers, data.turns, colors, current)
        self.series.set_series(data.turns, data.cohesion, data.volatility, current)
        n = len(data.turns)
        self.status.setText(
            "no messages yet"
            if n == 0
            else "1 message: volatility and cohesion start at the second"
            if n == 1
            else f"{n} messages"
        )

    def set_current(self, index: int | None) -> None:
        """Move the highlight and the series' marker to the message at ``index``."""
        self.trajectory.set_current(index)
        self.series.set_current(index)


class GeometryView(QObject):
    """Adds the Geometry view to ``window`` and keeps it up to date, live and in replay.

    Args:
        window: The main window (its bridge, controller, replay, participants bar and View menu
            exist already).

    Attributes:
        panel: The view's widget.
        action: View ▸ Geometry (checkable).
        data: What is drawn now.
    """

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = w = window
        self.panel = GeometryPanel()
        self.panel.hide()
        # The panel goes above the three panes, in a vertical splitter that takes the panes'
        # place in the window's layout: hidden, it takes no room and the panes are as before.
        central = w.centralWidget()
        root = central.layout() if central is not None else None
        assert isinstance(root, QBoxLayout)  # the window's column: participants bar, panes
        index = root.indexOf(w.splitter)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        root.insertWidget(index, self.splitter, 1)
        self.splitter.addWidget(self.panel)
        self.splitter.addWidget(w.splitter)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.action = QAction(TITLE, w.window())
        self.action.setCheckable(True)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.setToolTip("Show the conversation's trajectory, cohesion and volatility")
        self.action.toggled.connect(self._toggled)
        # The person's own choice (the menu, Ctrl+Shift+G), not a replay opening the strip: kept
        # across a replay and for the next window.
        self.action.triggered.connect(self._chosen)
        w.keys.view_menu.addSeparator()
        w.keys.view_menu.addAction(self.action)
        w.addAction(self.action)
        self.data = GeometryData.empty()
        #: Live: (session id, message id) → vector (ids restart at 1 in every session).
        self._vectors: dict[tuple[str, int], np.ndarray] = {}
        self._generation = 0  # bumped when the conversation shown changes: stale work is dropped
        self._dirty = False
        self._worker: asyncio.Future[None] | None = None
        self._shown_before_replay: bool | None = None
        self._replay_index: int | None = None
        w.bridge.message_posted.connect(self._message_posted)
        w.bridge.participant_joined.connect(lambda _e: self._recolor())
        w.controller.about_to_start.connect(self._new_session)
        w.replay.opened.connect(self._replay_opened)
        w.replay.position_changed.connect(self._replay_moved)
        w.replay.closed.connect(self._replay_closed)
        if kept(SETTINGS).get(CHOSEN) == "true":
            self.action.setChecked(True)

    # -- showing ---------------------------------------------------------------------------------

    @property
    def visible(self) -> bool:
        return self.action.isChecked()

    def _chosen(self, on: bool) -> None:
        if self._shown_before_replay is not None:  # a replay is open: its close keeps this
            self._shown_before_replay = on
        keep(SETTINGS, {CHOSEN: "true" if on else "false"})

    def _toggled(self, on: bool) -> None:
        self.panel.setVisible(on)
        if on:
            sizes = self.splitter.sizes()
            if sizes[0] < MIN_HEIGHT:
                total = sum(sizes)
                first = max(MIN_HEIGHT, min(MAX_INITIAL_HEIGHT, round(INITIAL_SHARE * total)))
                if self.window.height() < AUTO_OPEN_HEIGHT:
                    first = MIN_HEIGHT  # a short window: the conversation keeps the room
                self.splitter.setSizes([first, max(0, total - first)])
            if not self.window.replay.active:
                self._schedule()

    def _colors(self) -> dict[str, str]:
        rec = self.window.replay.recording if self.window.replay.active else None
        colors = dict(self.window.participants.colors)
        if rec is not None:
            colors.update(recording_colors(rec))
        return colors

    def _draw(self, data: GeometryData, current: int | None = None) -> None:
        self.data = data
        with contextlib.suppress(RuntimeError):  # the window is being torn down
            self.panel.show_data(data, self._colors(), current)

    def _recolor(self) -> None:
        """A participant joined live: their points take the colour the bar gave them. (A replay
        colours from the recording's participants, so its rebuilds need no redraw.)"""
        if self.data.turns and self.visible and not self.window.replay.active:
            self._draw(self.data)

    # -- live ------------------------------------------------------------------------------------

    def _new_session(self) -> None:
        self._generation += 1
        self._vectors.clear()
        self._draw(GeometryData.empty())

    def _message_posted(self, _message: object) -> None:
        if self.window.replay.active:  # a replay publishes its messages: it has its own data
            return
        self._schedule()

    def _schedule(self) -> None:
        """Recompute from the live room's messages soon; one worker at a time, coalescing."""
        if not self.visible:
            return  # done when the view is shown
        self._dirty = True
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())

    async def _work(self) -> None:
        while self._dirty:
            self._dirty = False
            generation = self._generation
            try:
                data = await self._live_data()
            except errors.PlaygroundError as exc:
                self.panel.status.setText(f"cannot embed the messages: {exc}")
                return
            except Exception:  # a view must never take the window down (logged)
                log.exception("geometry view: live update failed")
                self.panel.status.setText("the geometry could not be computed (see the log)")
                return
            if generation == self._generation and not self.window.replay.active:
                self._draw(data)

    async def _live_data(self) -> GeometryData:
        room = self.window.controller.room
        messages = list(room.messages) if room is not None else []
        if room is None or not messages:
            return GeometryData.empty()
        sid = room.session_id
        # Taken now: a new session may clear the cache while the embedder works.
        known = {m.id: self._vectors[(sid, m.id)] for m in messages if (sid, m.id) in self._vectors}
        missing = [m for m in messages if m.id not in known]
        if missing:
            self.panel.status.setText(f"embedding {len(missing)} message(s)…")
            embedder = await self.window.controller.embedding.get()
            vecs = await embedder.embed([m.text for m in missing])
            for m, v in zip(missing, vecs, strict=True):
                known[m.id] = self._vectors[(sid, m.id)] = np.asarray(v, dtype=np.float32)
        vectors = np.stack([known[m.id] for m in messages])
        return await asyncio.to_thread(
            compute, vectors, [m.speaker for m in messages], [m.id for m in messages]
        )

    # -- replay ----------------------------------------------------------------------------------

    def _replay_opened(self, rec: Recording) -> None:
        self._generation += 1
        if self._shown_before_replay is None:
            self._shown_before_replay = self.visible
        self._replay_index = None
        self._draw(GeometryData.empty())
        self.panel.status.setText("reading the message vectors…")
        if self.window.height() >= AUTO_OPEN_HEIGHT:
            self.action.setChecked(
                True
            )  # below that, the conversation keeps the room (Ctrl+Shift+G)
        self._worker = asyncio.ensure_future(self._load_recording(rec, self._generation))

    async def _load_recording(self, rec: Recording, generation: int) -> None:
        try:
            data = await self._recording_data(rec)
        except errors.PlaygroundError as exc:
            if generation == self._generation:
                self.panel.status.setText(f"no geometry: {exc}")
            return
        except Exception:  # a view must never take the window down (logged)
            log.exception("geometry view: replay data failed")
            if generation == self._generation:
                self.panel.status.setText("the geometry could not be computed (see the log)")
            return
        if generation != self._generation or self.window.replay.recording is not rec:
            return
        self._draw(data, self._replay_index if self._replay_index is not None else -1)

    async def _recording_data(self, rec: Recording) -> GeometryData:
        from playground.geometry.vectors import message_vectors

        sid = rec.session["id"]
        speakers = {i: speaker for i, speaker, _text in library.message_lines(rec.db, sid)}
        if not speakers:
            return GeometryData.empty()
        embedder = await self.window.controller.embedding.get()
        ids, vectors = await message_vectors(rec.db, sid, embedder)
        ids = [int(i) for i in ids]
        return await asyncio.to_thread(
            compute, np.asarray(vectors), [speakers.get(i, "") for i in ids], ids
        )

    def _replay_moved(self, seq: int) -> None:
        rec = self.window.replay.recording
        if rec is None:
            return
        self._replay_index = rec.messages_shown(seq) - 1
        if self.data.turns:
            self.panel.set_current(self._replay_index)

    def _replay_closed(self) -> None:
        self._generation += 1
        self._replay_index = None
        self._draw(GeometryData.empty())
        if self._shown_before_replay is not None:
            self.action.setChecked(self._shown_before_replay)
            self._shown_before_replay = None
        self._schedule()


def recording_colors(rec: Recording) -> dict[str, str]:
    """Each participant of a recorded session with the colour the participants bar gives them."""
    out: dict[str, str] = {}
    for p in rec.participants:
        out[p["name"]] = (
            theme.HUMAN_COLOR
            if p.get("kind") == "human"
            else theme.color_for(p["color_index"] or 0)
        )
    return out
