"""One fold of thoughts: the thoughts pane renders a ThoughtLedger, live and in replay alike.

A short offline session runs live in the window (with a thought deleted and one deletion
undone); its bubbles, every participant's, in both sort orders, are then compared with a replay
of the same session at its last step, reached by one jump (the replay's ledger, folded from the
log) and by stepping through every moment (each event folded by the pane), and with the thoughts
``playground show --json`` prints.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest

from playground.history.ledger import ThoughtLedger
from playground.history.recording import Recording
from tests.conftest import REPO
from tests.ui.conftest import app_window, step_session, until

pytestmark = pytest.mark.asyncio

Bubble = tuple[Any, ...]


def _bubbles(win: Any, names: list[str]) -> dict[str, dict[int, list[Bubble]]]:
    """Per participant and sort order, what each bubble shows, in display order."""
    shown: dict[str, dict[int, list[Bubble]]] = {}
    for name in names:
        win.selection.select(name)
        for sort in (0, 1):
            win.thoughts.sort_combo.setCurrentIndex(sort)
            shown.setdefault(name, {})[sort] = [
                (
                    b.thought_id,
                    b._id_badge.text(),
                    b.text(),
                    b._saliency_badge.text(),
                    b.score_text(),
                    b._system_tag.text(),
                    b.scored_text(),
                    b._retained_tag.isVisibleTo(b),
                    b.said_label.text() if b.said_label.isVisibleTo(b) else "",
                    b._stimuli.text(),
                )
                for b in win.thoughts.bubbles()
            ]
    win.thoughts.sort_combo.setCurrentIndex(0)
    return shown


def _show_json(db_path: str, session_id: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "playground", "show", "--json", "--db", db_path, session_id],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout)


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    return app_window(qtbot, tmp_path / "fold.db", minilm)


async def test_live_replay_and_show_json_give_the_same_bubbles(window):
    win, controller = window
    room = await controller.new_session(
        controller.library()[:3], icebreaker="What did you do last weekend?"
    )
    assert room is not None
    names = [a.name for a in room.agents]
    await step_session(win, room, 3)
    # The ✕ of two bubbles, then Undo of the latest: a deletion and a restore in the log.
    name = win.selection.name
    await until(lambda: len(win.thoughts.bubbles()) >= 2, what="bubbles")
    gone, back = (b.thought_id for b in win.thoughts.bubbles()[:2])
    for tid in (gone, back):
        win.thoughts.delete_requested.emit(name, tid)
    await until(lambda: win.thoughts.bubble(back) is None, what="the deletions")
    win.act_undo.trigger()
    await until(lambda: win.thoughts.bubble(back) is not None, what="the undo")
    await step_session(win, room, 2)
    sid, db_path = room.session_id, str(controller.db_path)
    await controller.stop()

    assert type(win.thoughts.ledger) is ThoughtLedger  # the pane's state is the engine's fold
    live_states = win.thoughts.ledger.states()
    live = _bubbles(win, names)
    assert gone not in {b[0] for b in live[name][0]}
    assert back in {b[0] for b in live[name][0]}
    assert any(b[8] for bs in live.values() for b in bs[0]), "some bubble is marked said"
    assert any(b[7] for bs in live.values() for b in bs[0]), "some bubble is marked retained"

    # The replay at the last step, by one jump: the pane takes the replay's ledger.
    await win.open_replay(db_path, sid)
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.last)
    await asyncio.sleep(0)
    assert type(win.thoughts.ledger) is ThoughtLedger
    assert win.thoughts.ledger.states() == live_states
    assert (
        win.thoughts.ledger.states()
        == Recording.load(controller.database(), sid).thought_ledger(rec.last).states()
    )
    assert _bubbles(win, names) == live

    # And by stepping through every moment from the start: the pane folds each event itself.
    win.replay.seek(rec.first)
    folding = win.thoughts.ledger
    for moment in rec.moments:  # each a short step forward: its events published one by one
        win.replay.seek(moment.seq)
    win.replay.seek(rec.last)
    assert win.replay.position == rec.last
    assert win.thoughts.ledger is folding, "no jump: the pane folded every event into its ledger"
    await asyncio.sleep(0)
    assert win.thoughts.ledger.states() == live_states
    assert _bubbles(win, names) == live

    # `playground show --json` has the same thoughts: deleted ones marked, the others as shown.
    shown = await asyncio.to_thread(_show_json, db_path, sid)
    rows = {(t["agent"], t["id"]): t for t in shown["thoughts"]}
    assert rows[(name, gone)]["deleted"] == 1
    assert rows[(name, back)]["deleted"] == 0
    expected = {
        agent: sorted(
            (
                (
                    t["id"],
                    t["text"],
                    f"sal {t['saliency']:.2f}",
                    "–" if not t["evaluations"] else f"{t['evaluations'][-1]['score']:.2f}",
                    f"scored at step {t['evaluations'][-1]['step']}" if t["evaluations"] else "",
                    bool(t["evaluations"]) and bool(t["evaluations"][-1]["retained"]),
                    f"said in #{t['expressed_in']}" if t["expressed_in"] is not None else "",
                )
                for (a, _), t in rows.items()
                if a == agent and not t["deleted"]
            ),
            reverse=True,
        )
        for agent in names
    }
    got = {
        agent: [(b[0], b[2], b[3], b[4], b[6], b[7], _said(b[8])) for b in live[agent][0]]
        for agent in names
    }
    assert got == expected
    await controller.shutdown()


def _said(link: str) -> str:
    """A bubble's "said in #N" link as plain text."""
    if not link:
        return ""
    return link[link.index(">") + 1 : link.rindex("<")]
