"""Trust what the window shows: after a switch to another session (a replay of another saved
session, a new live session, a conversation of an experiment) every pane and view shows that
session, as its SQLite database holds it, and nothing of the session shown before.

Message ids, memory ids and thought ids restart at 1 in every session, and a participant can sit
in two sessions under the same name with another colour; so a pane that reused a row or a chip
by id or name across sessions would show the previous session's speaker, time, text or colour.
Each check below compares the widgets' own texts and colours with the database (read with the
project's :class:`SessionReader`), for A → B → A, a one-message session, live → replay,
replay → live and experiment → replay.
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from playground.storage import SessionReader
from playground.storm import profiles
from tests.ui.conftest import app_window, run_experiment, step_session, until
from ui import theme
from ui.experiments.tables import RUN_COLUMNS
from ui.panes.decisions.decision_strip import AGENT, WHY
from ui.panes.memory.memory_table import COL_KIND, COL_TEXT
from ui.panes.thoughts.thought_page import MAX_BUBBLES
from ui.session.simulated import SimulatedSeat

pytestmark = pytest.mark.asyncio

HEADER = re.compile(
    r"<span style='color:(?P<color>[^;]+); font-weight:bold'>(?P<speaker>.*?)</span> "
    r"<span style='color:#999'>#(?P<id>\d+) · (?P<time>[^<]*)</span>"
)


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = app_window(qtbot, tmp_path / "switch.db", minilm)
    controller.simulated.users_dir = tmp_path / "users"
    yield win, controller
    view = win.experiments.view
    if view is not None and view.job is not None:
        view.job.cancel()


# -- making sessions with the offline engine -------------------------------------------------------


def _ready(win: Any, controller: Any) -> None:
    """On the test's loop: the model counts as loaded; the geometry view is shown (it follows
    live sessions too)."""
    assert not controller.embedding.loading  # app_window hands the loaded model in
    win.geometry_view.action.setChecked(True)


async def _session(
    win: Any, controller: Any, people: list[int], icebreaker: str, steps: int, *, user: Any = None
) -> Any:
    """A live session of the library's personas ``people`` (in this seating order, so a
    persona can get another colour than in another session), the STORM simulated user ``user``
    if given, ``steps`` steps run; left live and paused."""
    library = controller.library()
    room = await controller.new_session(
        [library[i] for i in people],
        icebreaker=icebreaker,
        simulated=[SimulatedSeat(user, 1.0)] if user is not None else (),
    )
    assert room is not None
    await step_session(win, room, steps)
    await asyncio.sleep(0.05)  # deferred sizing and fills
    return room


async def _saved(win: Any, controller: Any, *args: Any, **kw: Any) -> str:
    """A session made as :func:`_session`, then stopped: its id."""
    room = await _session(win, controller, *args, **kw)
    await controller.stop()
    return str(room.session_id)


# -- what the database holds -----------------------------------------------------------------------


def _db(controller: Any, db_path: str | None = None) -> Any:
    return controller.database_at(db_path) if db_path else controller.database()


def _color(p: dict) -> str:
    return theme.HUMAN_COLOR if p["kind"] == "human" else theme.color_for(p["color_index"] or 0)


def _expected(db: Any, sid: str) -> dict[str, Any]:
    data = SessionReader(db).load(sid)
    colors = {p["name"]: _color(p) for p in data["participants"]}
    # Seated to the end: everyone still seated leaves with the session's end (or has not left).
    end = data["session"]["finished_at"]
    seated = [p for p in data["participants"] if p["left_at"] in (None, end)]
    return {
        **data,
        "colors": colors,
        "chips": [(p["name"], colors[p["name"]]) for p in seated],
        "rows": [
            (m["id"], m["speaker"], m["posted_at"][11:19], m["text"], colors[m["speaker"]])
            for m in data["messages"]
        ],
    }


# -- what the window shows -------------------------------------------------------------------------


def _shown_messages(win: Any) -> list[tuple[int, str, str, str, str]]:
    """Every message row on screen: id, speaker, time, text and colour as its header and body
    show them."""
    out = []
    for mid, w in sorted(win.conversation.widgets.items()):
        m = HEADER.search(w.header.text())
        assert m is not None, w.header.text()
        assert int(m["id"]) == mid, (mid, w.header.text())
        out.append((mid, html.unescape(m["speaker"]), m["time"], w.body.text(), m["color"].lower()))
    return out


def _shown_chips(win: Any) -> list[tuple[str, str]]:
    return [(name, chip.color.lower()) for name, chip in win.participants.chips.items()]


def _select(win: Any, name: str) -> None:
    win.participants.chips[name].clicked.emit(name)


def _memory_cells(win: Any) -> set[tuple[str, str]]:
    t = win.memory.table
    return {(t.item(r, COL_KIND).text(), t.item(r, COL_TEXT).text()) for r in range(t.rowCount())}


async def _geometry_matches(win: Any, want: dict) -> None:
    """The geometry view draws this session's messages, its legend in the bar's colours."""
    turns = [m["id"] for m in want["messages"]]
    speakers = [m["speaker"] for m in want["messages"]]
    gv = win.geometry_view
    try:
        await until(lambda: gv.data.turns == turns and gv.data.speakers == speakers, timeout=30)
    except AssertionError:
        raise AssertionError(
            f"geometry shows turns {gv.data.turns} by {gv.data.speakers}, the database"
            f" {turns} by {speakers}"
        ) from None
    plot = gv.panel.trajectory
    legend = dict(zip(plot.legend_names(), plot.legend_colors(), strict=True))
    assert legend == {n: want["colors"][n].lower() for n in dict.fromkeys(speakers)}, legend
    chips = dict(_shown_chips(win))
    assert all(chips.get(n) == c for n, c in legend.items()), (legend, chips)


def _check_panes(win: Any, want: dict, upto: int, *, complete: bool) -> None:
    """The conversation, chips, memory, thoughts, hidden state and decision strip show the
    session ``want`` up to its message ``upto``; ``complete``: the moment is the session's last
    (live, or a replay at its end), so memory and decisions are compared in full."""
    sid = want["session"]["id"]
    rows = [r for r in want["rows"] if r[0] <= upto]
    assert _shown_messages(win) == rows, f"conversation differs from session {sid}"
    assert _shown_chips(win) == want["chips"], f"participants bar differs from session {sid}"
    for name, color in want["chips"]:
        assert win.conversation.colors.get(name, "").lower() == color, name
    kinds = {p["name"]: p["kind"] for p in want["participants"]}
    for name, kind in kinds.items():
        _select(win, name)
        if kind == "ai":
            thoughts = {(t["id"], t["text"]) for t in want["thoughts"] if t["agent"] == name}
            bubbles = [(b.thought_id, b.text()) for b in win.thoughts.bubbles()]
            shown = set(bubbles)
            assert shown <= thoughts, (
                f"{name}'s thoughts are not session {sid}'s: {shown - thoughts}"
            )
            if complete:  # newest first, as many as the pane keeps
                newest = sorted(
                    (
                        (t["id"], t["text"])
                        for t in want["thoughts"]
                        if t["agent"] == name and not t["deleted"]
                    ),
                    reverse=True,
                )[:MAX_BUBBLES]
                assert bubbles == newest, f"{name}'s thoughts differ from session {sid}"
            memories = {
                (m["kind"], m["text"])
                for m in want["memories"]
                if m["agent"] == name and not m["deleted"]
            }
            cells = _memory_cells(win)
            if complete:
                assert cells == memories, f"{name}'s memory differs from session {sid}"
            else:
                assert cells <= memories, f"{name}'s memory is not session {sid}'s"
        elif kind == "simulated":
            hidden = win.thoughts.hidden
            assert win.thoughts._stack.currentWidget() is hidden
            texts = {m["id"]: m["text"] for m in want["messages"]}
            states = [
                (h["turn"], h["message_id"])
                for h in reversed(want["hidden_states"])
                if h["participant"] == name and h["message_id"] <= upto
            ]
            cards = hidden.cards()
            assert len(cards) == len(states), f"{name}'s hidden states differ from session {sid}"
            for card, (turn, mid) in zip(cards, states, strict=True):
                text = card.text()
                assert f"Turn {turn}" in text, text
                assert f"Said in #{mid}: “{texts[mid]}”" in text, text
    if complete:
        steps = [d["step"] for d in want["decisions"]]
        title = win.decisions.title.text()
        shown = {(r[AGENT], r[WHY]) for r in win.decisions.rows()}
        if steps:
            last = max(steps)
            assert f"step {last}," in title, (title, last)
            assert shown == {
                (d["agent"], d["reason"]) for d in want["decisions"] if d["step"] == last
            }, f"decisions differ from session {sid}"
        else:
            assert not shown, title


async def _check_live(win: Any, controller: Any) -> None:
    room = controller.room
    assert room is not None
    assert not win.replay.active
    want = _expected(controller.database(), room.session_id)
    _check_panes(win, want, upto=len(want["messages"]), complete=True)
    await _geometry_matches(win, want)


async def _check_replay(win: Any, db_path: str, sid: str) -> None:
    """The replay of ``sid``, as opened, at its end and back at its start."""
    rec = win.replay.recording
    assert rec is not None
    assert rec.session["id"] == sid
    want = _expected(rec.db, sid)
    _check_panes(win, want, upto=rec.messages_shown(win.replay.position), complete=False)
    await _geometry_matches(win, want)
    win.replay.seek(rec.last)
    _check_panes(win, want, upto=len(want["messages"]), complete=True)
    win.replay.seek(rec.first)
    _check_panes(win, want, upto=rec.messages_shown(win.replay.position), complete=False)


async def _open(win: Any, db_path: str, sid: str, *, end_live: bool = True) -> None:
    """Open ``sid`` in replay as File ▸ Open session… does; a question about a live session
    is answered (``end_live``)."""
    task = win.open_replay(db_path, sid)
    await until(
        lambda: task.done() or getattr(win, "leave_question", None) is not None,
        what="the replay, or the question about the live session",
    )
    question = getattr(win, "leave_question", None)
    if question is not None:
        (question.end_button if end_live else question.cancel_button).click()
    await task
    if end_live:
        assert win.replay.recording is not None
        assert win.replay.recording.session["id"] == sid


# -- the tests -------------------------------------------------------------------------------------


async def test_a_then_b_then_a_and_a_one_message_session_show_only_their_own_content(window):
    win, controller = window
    _ready(win, controller)
    db_path = str(controller.db_path)
    user = profiles.generate_profile(5, task="Buy a smartphone", difficulty=3)
    # The same simulated user and personas in both, seated in another order (other colours),
    # every message id, memory id and thought id used by both.
    a = await _saved(win, controller, [0, 1, 2], "Anyone been sailing lately?", 5, user=user)
    b = await _saved(win, controller, [2, 3, 0], "What is the best tea?", 5, user=user)
    one = await _saved(win, controller, [1, 3], "Is it raining where you are?", 0)
    # What a reused widget would get wrong: message #1, colours of the same names, thoughts
    # and hidden states with the same ids.
    want_a, want_b, want_one = (_expected(controller.database(), s) for s in (a, b, one))
    assert len(want_one["messages"]) == 1
    assert len({w["rows"][0] for w in (want_a, want_b, want_one)}) == 3
    assert any(want_b["colors"].get(n) not in (None, c) for n, c in want_a["colors"].items())
    for w in (want_a, want_b):
        assert w["thoughts"]
        assert w["hidden_states"]
        assert w["decisions"]
        assert w["memories"]
    assert {t["id"] for t in want_a["thoughts"]} & {t["id"] for t in want_b["thoughts"]}
    for sid in (a, b, a, one, b):
        await _open(win, db_path, sid)
        await _check_replay(win, db_path, sid)
    # The blind rating view shows the session asked for, too.
    rater = win.rating.rate_session(a)
    assert rater is not None
    rater.start("Rater")
    for sid in (a, b, one, a):
        rater = win.rating.rate_session(sid)
        assert rater is not None
        rater.blind.show_all()
        want = _expected(controller.database(), sid)["messages"]
        assert [(c.msg.speaker, c.body.text()) for c in rater.blind.cards] == [
            (m["speaker"], m["text"]) for m in want
        ]
    await controller.shutdown()


async def test_live_to_replay_and_replay_to_live_start_from_empty_views(window):
    win, controller = window
    _ready(win, controller)
    db_path = str(controller.db_path)
    user = profiles.generate_profile(7, task="Refill my prescription", difficulty=2)
    a = await _saved(win, controller, [0, 1, 2], "Who cooks at home?", 4, user=user)
    # Live (paused, with the same simulated user) → replay of A.
    live = await _session(win, controller, [2, 0, 3], "Mountains or the sea?", 4, user=user)
    await _check_live(win, controller)
    await _open(win, db_path, a)
    await _check_replay(win, db_path, a)
    assert live.ended
    # Replay of A → a new live session: the views start empty and follow it.
    room = await _session(win, controller, [3, 2], "Books or films?", 0)
    assert not win.replay.active
    await _check_live(win, controller)
    await step_session(win, room, 3)
    await asyncio.sleep(0.05)
    await _check_live(win, controller)
    await controller.shutdown()


async def test_open_in_replay_from_experiments_shows_that_conversation_in_front(window, qtbot):
    win, controller = window
    _ready(win, controller)
    db_path = str(controller.db_path)
    a = await _saved(win, controller, [3, 2, 1], "Cats or dogs?", 4)
    await _open(win, db_path, a)
    await _check_replay(win, db_path, a)
    view, sid = await run_experiment(win, "inner-thoughts", 4, agents=3, seed=3)
    assert sid is not None
    assert sid != a
    # The main window is behind the Experiments window, minimised: Open in replay brings it back.
    win.showMinimized()
    view.raise_()
    view.activateWindow()
    await until(lambda: QApplication.activeWindow() is view, what="the Experiments window in front")
    view.runs.itemDoubleClicked.emit(view.runs.item(0, RUN_COLUMNS.index("Condition")))
    await until(
        lambda: win.replay.recording is not None and win.replay.recording.session["id"] == sid
    )
    await _check_replay(win, db_path, sid)
    assert not win.isMinimized()
    await until(lambda: QApplication.activeWindow() is win, what="the main window in front")
    await controller.shutdown()
