"""The Geometry view in the window: the trajectory and the cohesion/volatility series grow with a
live session, follow the replay's position, show a one-message session, keep the panes' widths,
and are reachable from View ▸ Geometry and listed in Help ▸ Keyboard shortcuts."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from playground.geometry import features
from tests.ui.conftest import app_window, until
from ui.window.geometry_view import MIN_HEIGHT
from ui.window.window_layout import MIN_CONVERSATION, MIN_MEMORY, MIN_THOUGHTS

pytestmark = pytest.mark.asyncio


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    return app_window(qtbot, tmp_path / "geometry.db", minilm)


def _ready(controller) -> None:
    """The embedder counts as loaded (made on the test's own loop)."""
    assert not controller.embedding.loading  # app_window hands the loaded model in


async def _session(controller, people: int, icebreaker: str):
    """A new session of the library's first ``people`` participants (the embedder counts as loaded)."""
    _ready(controller)
    room = await controller.new_session(controller.library()[:people], icebreaker=icebreaker)
    assert room is not None
    return room


def _idle(room) -> bool:
    return all(state == "idle" for state in room._states.values())


async def _step(win, room, i: int) -> None:
    before = room.step
    win.act_step.trigger()
    await until(lambda: room.step > before and _idle(room), what=f"step {i}")


def _drawn(win, n: int) -> bool:
    g = win.geometry_view.panel
    return g.trajectory.point_count() == n and g.series.point_count() == n


async def _expected(controller, messages) -> dict[str, list[float | None]]:
    """The series computed independently from the messages' MiniLM vectors."""
    vecs = await (await controller.embedding.get()).embed([m.text for m in messages])
    return features.turn_series(vecs, [m.speaker for m in messages])


def _close(got: list[float | None], want: list[float | None]) -> bool:
    return len(got) == len(want) and all(
        (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-4)
        for a, b in zip(got, want, strict=True)
    )


async def test_live_session_adds_one_point_per_message_and_the_series_grow(window):
    win, controller = window
    _ready(controller)
    g = win.geometry_view
    assert not g.panel.isVisible()
    assert not g.action.isChecked()
    g.action.trigger()  # View ▸ Geometry
    assert g.panel.isVisible()
    room = await _session(controller, 3, "Any plans for May?")
    await until(lambda: _drawn(win, 1), what="the icebreaker's point")
    counts = []
    for i in range(5):
        await _step(win, room, i + 1)
        n = len(room.messages)
        await until(lambda: _drawn(win, n), what=f"{n} points")  # noqa: B023
        counts.append(n)
        traj = g.panel.trajectory
        assert traj.current_index() == n - 1, "the latest message is ringed"
        assert traj.ring_position() == traj.point_position(n - 1)
        assert g.panel.series.marker_turn() == room.messages[-1].id
    assert counts[-1] > 1
    assert counts == sorted(counts)
    messages = list(room.messages)
    traj = g.panel.trajectory
    # Coloured by speaker with the participants bar's colours; numbered by turn; a legend.
    assert traj.point_colors() == [win.participants.colors[m.speaker] for m in messages]
    assert traj.labels() == [str(m.id) for m in messages]
    spoke = {m.speaker for m in messages}
    assert traj.legend_names() == [n for n in win.participants.colors if n in spoke]
    assert traj.legend_colors() == [win.participants.colors[n] for n in traj.legend_names()]
    # The plotted values are the engine's features of these very messages.
    want = await _expected(controller, messages)
    cohesion, volatility = g.panel.series.values()
    assert _close(cohesion, want["cohesion"])
    assert _close(volatility, want["volatility"])
    assert volatility[0] is None
    assert all(v is not None for v in volatility[1:])
    xy = features.trajectory_2d(
        await (await controller.embedding.get()).embed([m.text for m in messages])
    )
    assert np.allclose([traj.point_position(i) for i in range(len(messages))], xy, atol=1e-5)
    # Hidden, it stops following; shown again, it catches up.
    g.action.trigger()
    assert not g.panel.isVisible()
    await _step(win, room, 6)
    g.action.trigger()
    n = len(room.messages)
    await until(lambda: _drawn(win, n), what="catching up")
    # A new session starts from nothing.
    room2 = await controller.new_session(controller.library()[3:5], icebreaker="Hello there.")
    assert room2 is not None
    await until(lambda: _drawn(win, 1), what="the new session's first point")
    await controller.shutdown()


async def test_replay_moves_the_highlight_and_the_marker_with_the_position(window):
    win, controller = window
    room = await _session(controller, 3, "Best trip ever?")
    for i in range(6):
        await _step(win, room, i + 1)
    sid, messages = room.session_id, list(room.messages)
    await controller.stop()
    assert not win.geometry_view.action.isChecked()
    await win.open_replay(str(controller.db_path), sid)
    g = win.geometry_view
    assert g.action.isChecked(), "a replay shows the geometry"
    assert g.panel.isVisible(), "a replay shows the geometry"
    await until(lambda: _drawn(win, len(messages)), what="the replay's trajectory")
    db = controller.database()
    cached = db.execute(
        "SELECT COUNT(*) FROM message_embeddings WHERE session_id = ?", [sid]
    ).fetchone()[0]
    assert cached == len(messages), "the replay's vectors are kept in the database's cache"
    rec = win.replay.recording
    assert rec is not None
    traj, series = g.panel.trajectory, g.panel.series
    order = [m.id for m in messages]
    for mid in [*order[::-1], *order]:
        win.replay.seek(rec.message_seq[mid])
        await asyncio.sleep(0)
        assert traj.current_index() == mid - 1
        assert traj.ring_position() == traj.point_position(mid - 1)
        assert series.marker_turn() == mid
        # Messages after the moment are not yet in their speaker's colour.
        assert len(traj.point_colors()) == mid
    # A decision moment between messages keeps the last message shown ringed.
    decision = next(m for m in rec.moments if m.kind == "decision" and m.seq > rec.message_seq[2])
    win.replay.seek(decision.seq)
    assert traj.current_index() == rec.messages_shown(decision.seq) - 1
    want = await _expected(controller, messages)
    cohesion, volatility = series.values()
    assert _close(cohesion, want["cohesion"])
    assert _close(volatility, want["volatility"])
    # Closing the replay brings back the reader's choice (hidden).
    win.transport.close_button.click()
    assert not g.action.isChecked()
    assert not g.panel.isVisible()
    await controller.shutdown()


async def test_a_one_message_session_shows_without_error(window):
    win, controller = window
    room = await _session(controller, 2, "Only this.")
    sid = room.session_id
    win.geometry_view.action.trigger()
    await until(lambda: _drawn(win, 1), what="one point live")
    await controller.stop()
    await win.open_replay(str(controller.db_path), sid)
    g = win.geometry_view.panel
    await until(lambda: _drawn(win, 1), what="one point in replay")
    cohesion, volatility = g.series.values()
    assert cohesion == [None]
    assert volatility == [None]
    assert g.trajectory.point_position(0) == (0.0, 0.0)
    assert "1 message" in g.status.text()
    assert not win.banner.isVisible()
    await controller.shutdown()


async def test_view_menu_shortcut_help_and_the_panes_keep_their_widths_at_1024(window, qtbot):
    win, controller = window
    _ready(controller)
    g = win.geometry_view
    assert g.action in win.keys.view_menu.actions()
    assert g.action.shortcut().toString() == "Ctrl+Shift+G"
    dialog = win.keys.show_shortcuts()
    assert any(
        keys == "Ctrl+Shift+G" and does.startswith("Geometry") for keys, does in dialog.rows()
    )
    dialog.close()
    room = await _session(controller, 3, "Weekend plans?")
    for i in range(3):
        await _step(win, room, i + 1)
    sid = room.session_id
    await controller.stop()
    win.resize(1024, 700)
    await win.open_replay(str(controller.db_path), sid)
    # at 700 px replay leaves the room to the conversation; Ctrl+Shift+G opens the panel
    await until(lambda: _drawn(win, len(room.messages)), what="the replay's trajectory")
    assert not g.visible
    assert not g.panel.isVisible()
    g.action.trigger()
    await until(lambda: g.panel.isVisible(), what="the panel shown")
    await asyncio.sleep(0.1)
    assert win.memory.width() >= MIN_MEMORY
    assert win.thoughts.width() >= MIN_THOUGHTS
    assert win.conversation.parentWidget().width() >= MIN_CONVERSATION
    assert g.panel.height() >= MIN_HEIGHT
    assert win.splitter.height() >= 250, "the panes keep a usable height under the geometry"
    assert win.geometry_view.splitter.geometry().right() <= win.width()
    await controller.shutdown()


async def test_point_numbers_stay_inside_the_plot_at_the_least_height(qtbot):
    """At the strip's least height the numbers of the topmost points, drawn above them, and the
    ring round the current one stay inside the plot (issue 34: they were cut at the top)."""
    from ui.panes.geometry.trajectory import TrajectoryPlot

    plot = TrajectoryPlot()
    qtbot.addWidget(plot)
    plot.resize(420, MIN_HEIGHT - 20)  # the plot's share of the strip at its least height
    plot.show()
    qtbot.waitExposed(plot)
    rng = np.random.default_rng(3)
    xy = rng.normal(size=(8, 2))
    xy[5] = (0.0, xy[:, 1].max() + 1.0)  # one point well above the rest: its label on top
    names = ["Ana", "Ben"] * 4
    for current in (None, 5):
        plot.set_points(xy, names, list(range(1, 9)), {"Ana": "#1565c0", "Ben": "#c62828"}, current)
        await asyncio.sleep(0.05)
        view = plot.plot.getViewBox().sceneBoundingRect()
        assert plot._labels
        for label in plot._labels:
            box = label.sceneBoundingRect()
            assert box.top() >= view.top() - 0.5, (label.toPlainText(), box, view)
            assert box.bottom() <= view.bottom() + 0.5


async def test_the_geometry_choice_is_kept(window, qtbot):
    """View ▸ Geometry keeps the person's choice: one made during a replay stays when the replay
    closes, and a new window opens with it (issue 34: the toggle reset)."""
    from ui.app import build

    win, controller = window
    _ready(controller)
    g = win.geometry_view
    room = await _session(controller, 2, "Weekend plans?")
    await _step(win, room, 1)
    sid = room.session_id
    await controller.stop()
    win.resize(1024, 700)  # short: the replay does not open the strip by itself
    await win.open_replay(str(controller.db_path), sid)
    assert not g.visible
    g.action.trigger()  # Ctrl+Shift+G during the replay
    assert g.visible
    win.replay.close()
    await until(lambda: win.replay.recording is None, what="the replay closed")
    assert g.visible, "closing the replay put back the choice made before it"

    other, other_controller = build(db_path=str(controller.db_path), environ={})
    qtbot.addWidget(other)
    assert other.geometry_view.visible, "a new window forgot View ▸ Geometry"
    other.geometry_view.action.trigger()
    third, third_controller = build(db_path=str(controller.db_path), environ={})
    qtbot.addWidget(third)
    assert not third.geometry_view.visible
    for c in (controller, other_controller, third_controller):
        await c.shutdown()
