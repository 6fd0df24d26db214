"""Events round-trip through JSON; the bus delivers, filters, unsubscribes and isolates failures."""

from typing import Any

import pytest

from playground import events
from playground.room import loops
from tests.conftest import offline_settings
from tests.support.rooms import build, library


@pytest.mark.asyncio
async def test_every_event_of_a_run_round_trips_through_json(embedder):
    room, _, seen = await build(offline_settings(max_turns=4, seed=1), embedder, library(3))
    await loops.run_simulation(room, icebreaker="Hey!")
    kinds = {e.kind for e in seen}
    assert {
        "session_started",
        "participant_joined",
        "memory_changed",
        "trigger_fired",
        "message_posted",
        "message_interpreted",
        "turn_type_predicted",
        "memories_retrieved",
        "thought_formed",
        "thought_evaluated",
        "decision_made",
        "participant_state_changed",
        "thought_expressed",
        "session_finished",
    } <= kinds
    for e in seen:
        back = events.EVENT_ADAPTER.validate_json(e.model_dump_json())
        assert back == e
    assert [e.seq for e in seen] == sorted(e.seq for e in seen)
    assert all(e.session_id == room.session_id and e.at for e in seen)


def test_bus_filters_unsubscribes_and_survives_a_failing_handler(caplog):
    bus = events.EventBus()
    got: list[Any] = []
    only: list[Any] = []

    def broken(e):
        raise RuntimeError("boom")

    bus.subscribe(broken)
    unsubscribe = bus.subscribe(got.append)
    bus.subscribe(only.append, kinds=["participant_left"])
    bus.publish(events.ParticipantLeft(name="Ana"))
    bus.publish(events.ParticipantStateChanged(name="Ana", state="idle"))
    unsubscribe()
    bus.publish(events.ParticipantLeft(name="Ben"))
    assert [e.kind for e in got] == ["participant_left", "participant_state_changed"]
    assert [e.name for e in only] == ["Ana", "Ben"]
    assert "event handler failed" in caplog.text


def test_strict_bus_reraises():
    bus = events.EventBus(strict=True)

    def broken(e: events.BaseEvent) -> None:
        raise ZeroDivisionError("boom")

    bus.subscribe(broken)
    with pytest.raises(ZeroDivisionError):
        bus.publish(events.ParticipantLeft(name="Ana"))


def test_a_required_subscriber_runs_before_listeners_subscribed_earlier():
    # The CLI's printer subscribes before the recorder: the message must be saved before it is shown.
    bus = events.EventBus(strict=True)
    order: list[str] = []
    bus.subscribe(lambda e: order.append("printer"))
    bus.subscribe(lambda e: order.append("recorder"), required=True)
    bus.subscribe(lambda e: order.append("window"))
    bus.subscribe(lambda e: order.append("second required"), required=True)
    bus.publish(events.ParticipantLeft(name="Ana"))
    assert order == ["recorder", "second required", "printer", "window"]
