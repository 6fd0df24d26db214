"""Turn-taking policies (conditions) in the window: a mixed room from the New session dialog,
changing a participant's policy, the decision strip's next-speaker prediction, live and in
replay, and the session's condition following its seats, with the turn cap lifted when a person
joins (headless, offline engine, real MiniLM)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from playground import domain, errors, events, personas
from playground.embedding.cache import CachingEmbedder
from playground.settings import load_settings
from tests.ui.conftest import until
from ui.app import build
from ui.bridge import EngineBridge
from ui.dialogs.new_session import NewSessionDialog
from ui.panes.decisions.decision_strip import DecisionStrip


@pytest.fixture
def window(qtbot, tmp_path, minilm):
    win, controller = build(
        db_path=str(tmp_path / "ui.db"), environ={}, embedder=CachingEmbedder(minilm)
    )
    qtbot.addWidget(win)
    win.show()
    return win, controller


def _idle(room) -> bool:
    return all(state == "idle" for state in room._states.values())


async def _steps(controller, room, n: int) -> None:
    """Run ``n`` triggers one at a time through the window's Step."""
    for _ in range(n):
        target = room.step + 1

        def done(t: int = target) -> bool:
            return room.step >= t and _idle(room) and controller.control.paused

        await controller.step()
        await until(done, what="the step to finish")


def _placeholder(win) -> str:
    page = win.thoughts._pages.get(win.thoughts._agent)
    return page.placeholder.text() if page is not None else ""


def _chips(win) -> dict[str, str]:
    return {
        name: chip.policy_tag.text() if chip.policy_tag.isVisibleTo(chip) else ""
        for name, chip in win.participants.chips.items()
    }


# -- the New session dialog ------------------------------------------------------------------------


def test_the_new_session_dialog_gives_each_chosen_participant_a_policy(qtbot):
    library = personas.load_personas()
    dlg = NewSessionDialog(library, [], load_settings({}))
    qtbot.addWidget(dlg)
    dlg.prefill(
        library[:3],
        icebreaker=None,
        policies={library[1].name: "next-speaker", library[2].name: "reactive"},
    )
    assert dlg.policies() == {
        library[0].name: "inner-thoughts",
        library[1].name: "next-speaker",
        library[2].name: "reactive",
    }
    assert dlg.policy_all.currentData() == "mixed"
    assert dlg.condition.text() == "session condition: mixed"
    assert len(dlg.policy_combos) == 3

    dlg.set_all_policies("next-speaker")
    assert set(dlg.policies().values()) == {"next-speaker"}
    assert dlg.condition.text() == "session condition: next-speaker"
    dlg.set_policy(library[0].name, "reactive")  # one combo: the room becomes mixed
    assert dlg.policies()[library[0].name] == "reactive"
    assert dlg.policy_all.currentData() == "mixed"

    # Unticked and ticked again, a participant keeps its choice; a newly ticked one is Inner Thoughts.
    dlg.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert library[0].name not in dlg.policies()
    dlg.list.item(0).setCheckState(Qt.CheckState.Checked)
    dlg.list.item(4).setCheckState(Qt.CheckState.Checked)
    assert dlg.policies()[library[0].name] == "reactive"
    assert dlg.policies()[library[4].name] == "inner-thoughts"
    with pytest.raises(errors.PlaygroundError, match="not among the chosen participants"):
        dlg.set_policy(library[7].name, "reactive")


# -- a mixed room, live and replayed ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_mixed_room_runs_offline_and_the_strip_shows_the_prediction(window, tmp_path):
    win, controller = window
    dlg = win.dialogs.open_new_session()
    assert dlg is not None
    people = [p for p in controller.library() if p.name in ("Ana", "Ben", "Chloe", "Dev")]
    dlg.prefill(people, icebreaker="What did you do last weekend?", seed=7)
    dlg.set_all_policies("next-speaker")
    dlg.set_policy("Ana", "inner-thoughts")
    dlg.set_policy("Dev", "reactive")
    assert dlg.condition.text() == "session condition: mixed"
    dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    await until(lambda: controller.room is not None, timeout=60, what="the session")
    room = controller.room
    await until(lambda: len(win.participants.chips) == 4, what="the chips")
    assert {a.name: a.policy for a in room.agents} == {
        "Ana": "inner-thoughts",
        "Ben": "next-speaker",
        "Chloe": "next-speaker",
        "Dev": "reactive",
    }
    assert _chips(win) == {"Ana": "IT", "Ben": "NS", "Chloe": "NS", "Dev": "R"}
    assert "Next-speaker prediction" in win.participants.chips["Ben"].toolTip()

    await _steps(controller, room, 4)
    rows = {r[0]: r for r in win.decisions.rows()}
    line = win.decisions.prediction_line()
    assert win.decisions.prediction.isVisible()
    trigger_message = int(win.decisions.title.text().split("new message #")[1].split()[0])
    assert line.startswith(f"after #{trigger_message}: predicted ")  # the trigger's message
    assert "anyone" in line
    assert "→ turn:" in line
    # Each listener's policy is shown; a next-speaker agent's probability is its own in the prediction.
    for name, row in rows.items():
        assert row[4] == room.agent(name).policy
        if row[4] == "next-speaker":
            assert row[2].startswith("p ")
            assert row[3].startswith("next-speaker:")
        if row[4] == "reactive":
            assert row[2] == "–"
            assert row[3].startswith("reactive:")
        if row[4] == "inner-thoughts":
            assert "/" in row[2] or row[2] == "–"
    shown = dict(
        part.rsplit(" ", 1)
        for part in line.split(": predicted ", 1)[1].split(" [")[0].split(" — ", 1)[1].split(" · ")
    )
    assert set(shown) == {"Ana", "Ben", "Chloe", "Dev", "anyone"}
    assert abs(sum(float(v) for v in shown.values()) - 1.0) < 0.02
    header = win.decisions.table.horizontalHeader()
    assert header.visualIndex(4) == 1, "the policy column is shown second"
    # A baseline agent's thoughts pane says why it has no thoughts.
    win.participants.chips["Ben"].clicked.emit("Ben")
    await until(lambda: "forms no thoughts" in _placeholder(win), what="the baseline placeholder")
    assert "next-speaker prediction policy" in _placeholder(win)

    sid = room.session_id
    live_line, live_rows = line, win.decisions.rows()
    await controller.stop()

    db = sqlite3.connect(tmp_path / "ui.db")
    try:
        assert db.execute("SELECT condition FROM sessions WHERE id = ?", [sid]).fetchone() == (
            "mixed",
        )
        assert dict(
            db.execute("SELECT name, policy FROM participants WHERE session_id = ?", [sid])
        ) == {
            "Ana": "inner-thoughts",
            "Ben": "next-speaker",
            "Chloe": "next-speaker",
            "Dev": "reactive",
        }
        predictions = db.execute(
            "SELECT message_id, predicted, chosen, rule, probabilities, method FROM predictions"
            " WHERE session_id = ? ORDER BY step",
            [sid],
        ).fetchall()
    finally:
        db.close()
    assert predictions, "the predictions were recorded"
    assert all(json.loads(p[4]) for p in predictions)

    # The replay rebuilds the strip and the chips from the recorded events.
    await win.open_replay(str(tmp_path / "ui.db"), sid)
    rec = win.replay.recording
    assert rec is not None
    win.replay.seek(rec.last)
    assert _chips(win) == {"Ana": "IT", "Ben": "NS", "Chloe": "NS", "Dev": "R"}
    assert win.decisions.prediction_line() == live_line
    assert win.decisions.rows() == live_rows
    # Stepping back to an earlier trigger shows that trigger's prediction, not the last one.
    earlier = rec.moments[[m.kind for m in rec.moments].index("decision")]
    win.replay.seek(earlier.seq)
    first = predictions[0]
    assert win.decisions.prediction_line().startswith(f"after #{first[0]}: predicted {first[1]} ")
    assert f"→ turn: {first[2] or 'nobody'}" in win.decisions.prediction_line()
    win.replay.close()
    await controller.shutdown()


# -- changing a participant's policy ----------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_policy_change_in_the_dialog_reaches_the_room_and_the_database(window, tmp_path):
    win, controller = window
    people = [p for p in controller.library() if p.name in ("Ana", "Ben", "Chloe")]
    room = await controller.new_session(people, icebreaker="Hey!")
    assert room is not None
    assert {a.policy for a in room.agents} == {"inner-thoughts"}
    await until(lambda: len(win.participants.chips) == 3, what="the chips")
    assert _chips(win) == {"Ana": "IT", "Ben": "IT", "Chloe": "IT"}

    win.selection.select("Ben")
    dlg = win.dialogs.open_participant_settings()
    assert dlg is not None
    assert dlg.policy_value() == "inner-thoughts"
    dlg.policy.setCurrentIndex(dlg.policy.findData("next-speaker"))
    assert "static persona" in dlg.policy_help.text()
    dlg.accept()
    await until(lambda: room.agent("Ben").policy == "next-speaker", what="the policy in the room")
    await until(lambda: _chips(win)["Ben"] == "NS", what="the chip's tag")

    # The Participants menu entry does the same for the selected participant.
    win.selection.select("Chloe")
    win.policy_menu.refresh()
    assert win.policy_menu.actions["inner-thoughts"].isChecked()
    win.policy_menu.actions["reactive"].trigger()
    await until(lambda: room.agent("Chloe").policy == "reactive", what="the menu's change")
    await until(lambda: _chips(win)["Chloe"] == "R", what="the chip's tag")

    # Participants ▸ Add participant ▸ Dev ▸ as Reactive seats Dev with that policy.
    win.dialogs.fill_add_menu()
    dev = next(a.menu() for a in win.add_menu.actions() if a.text() == "Dev")
    assert [a.text() for a in dev.actions()] == [
        "as Inner Thoughts",
        "as Next-speaker prediction",
        "as Reactive (answers when addressed)",
    ]
    dev.actions()[2].trigger()
    await until(lambda: "Dev" in room.participants, what="Dev to join")
    assert room.agent("Dev").policy == "reactive"
    await until(lambda: _chips(win).get("Dev") == "R", what="Dev's chip")
    room.remove_participant("Dev")

    # From the next trigger, Ben is a next-speaker agent: a prediction appears in the strip.
    await _steps(controller, room, 1)
    assert win.decisions.prediction_line()
    rows = {r[0]: r[4] for r in win.decisions.rows()}
    speaker = room.messages[0].speaker  # the icebreaker's: it does not answer itself
    assert rows == {
        n: p
        for n, p in {"Ana": "inner-thoughts", "Ben": "next-speaker", "Chloe": "reactive"}.items()
        if n != speaker
    }
    sid = room.session_id
    await controller.shutdown()

    db = sqlite3.connect(tmp_path / "ui.db")
    try:
        changes = [
            json.loads(d)
            for (d,) in db.execute(
                "SELECT data FROM events WHERE session_id = ? AND kind = 'policy_changed' ORDER BY seq",
                [sid],
            )
        ]
        policies = dict(
            db.execute("SELECT name, policy FROM participants WHERE session_id = ?", [sid])
        )
    finally:
        db.close()
    assert [(c["name"], c["policy"]) for c in changes] == [
        ("Ben", "next-speaker"),
        ("Chloe", "reactive"),
    ]
    assert policies == {
        "Ana": "inner-thoughts",
        "Ben": "next-speaker",
        "Chloe": "reactive",
        "Dev": "reactive",  # added as reactive, then removed: the row stays, with left_at
    }


@pytest.mark.asyncio
async def test_the_window_shows_the_condition_change_the_lifted_cap_and_the_end(window, tmp_path):
    win, controller = window
    library = controller.library()
    room = await controller.new_session(library[:2], icebreaker="Hey, how was your week?")
    assert room is not None
    await _steps(controller, room, 1)
    step = room.step
    await room.add_agent(library[2], policy="reactive")
    status = win.messages.status_label
    assert status.text() == (
        f"Step {step}: {library[2].name} (reactive) joined."
        " The session's condition is now mixed (was inner-thoughts)."
    )

    await controller.join_as_human("Zoe")
    await until(lambda: controller.mode == "realtime", what="real time")
    assert status.text().startswith(
        "You joined as Zoe: real time until Stop; the turn cap (15) no longer applies."
    )
    sid = room.session_id
    await controller.stop()
    await until(lambda: "Session interrupted: stopped by the user" in status.text(), what="the end")

    await win.open_replay(str(tmp_path / "ui.db"), sid)
    tip = win.transport.title.toolTip()
    assert "(stopped by the user)" in tip
    assert "condition mixed" in tip
    assert (
        f"Condition: inner-thoughts → mixed at step {step} ({library[2].name} (reactive) joined)"
        in tip
    )
    win.replay.close()
    await controller.shutdown()


@pytest.mark.asyncio
async def test_an_unknown_policy_is_refused_with_a_message(window):
    win, controller = window
    people = controller.library()[:2]
    room = await controller.new_session(
        people, icebreaker=None, policies={people[0].name: "chatty"}
    )
    assert room is None
    assert "unknown turn-taking policy 'chatty'" in win.banner.text()
    await controller.shutdown()


# -- the decision strip on its own ------------------------------------------------------------------


def test_the_decision_strip_renders_a_next_speaker_prediction(qtbot):
    bridge = EngineBridge()
    strip = DecisionStrip(bridge)
    qtbot.addWidget(strip)
    strip.show()
    bridge.dispatch(events.TriggerFired(step=3, trigger="new_message", message_id=12))
    prediction = domain.NextSpeakerPrediction(
        message_id=12,
        predicted="anyone",
        probabilities={"Ana": 0.1, "Ben": 0.62 - 0.41, "anyone": 0.41, "Chloe": 0.28},
        method="logprobs",
    )
    rule = (
        "predicted anyone (0.41): anyone, so Chloe was drawn uniformly among Ben, Chloe"
        " (the next-speaker agents who did not just speak)"
    )
    bridge.dispatch(events.NextSpeakerPredicted(prediction=prediction, chosen="Chloe", rule=rule))
    for name, action in (("Ben", "silent"), ("Chloe", "speak")):
        bridge.dispatch(
            events.DecisionMade(
                decision=domain.Decision(
                    agent=name,
                    step=3,
                    trigger="new_message",
                    action=action,
                    policy="next-speaker",
                    probability=0.41,
                    reason=f"next-speaker: {rule}" + ("; not picked" if action == "silent" else ""),
                )
            )
        )
    bridge.dispatch(
        events.DecisionMade(
            decision=domain.Decision(
                agent="Dev",
                step=3,
                trigger="new_message",
                action="silent",
                policy="reactive",
                turn_type="open",
                reason="reactive: not addressed by name; silent",
            )
        )
    )
    assert strip.prediction_line() == (
        "after #12: predicted anyone — anyone 0.41 · Chloe 0.28 · Ben 0.21 · Ana 0.10"
        f" [from the answer's logprobs] → turn: Chloe ({rule})"
    )
    assert strip.prediction.isVisible()
    assert "<b>anyone 0.41</b>" in strip.prediction.text()
    assert strip.prediction.toolTip() == rule
    assert strip.rows() == [
        ["Ben", "silent", "p 0.21", f"next-speaker: {rule}; not picked", "next-speaker"],
        ["Chloe", "speaks", "p 0.28", f"next-speaker: {rule}", "next-speaker"],
        ["Dev", "silent", "–", "reactive: not addressed by name; silent", "reactive"],
    ]
    # The next trigger starts afresh: no stale prediction.
    bridge.dispatch(events.TriggerFired(step=4, trigger="pause", message_id=13))
    assert strip.rows() == []
    assert strip.prediction_line() == ""
    assert not strip.prediction.isVisible()
