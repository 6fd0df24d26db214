"""The memory and hidden-state ledgers: what those panes show, folded from events, live or replayed."""

from __future__ import annotations

import pytest

from playground import domain, events
from playground.domain.simulated_user import HiddenState
from playground.history.hidden_state_ledger import HiddenStateLedger
from playground.history.memory_ledger import Hit, MemoryLedger
from playground.history.recording import Recording
from tests.conftest import offline_settings
from tests.support.rooms import build, library


def _memory(mid: int, text: str = "x") -> domain.MemoryItem:
    return domain.MemoryItem(id=mid, kind="fact", text=text, weight=1.0)


def _stimulus(ref: str, saliency: float, **kw: object) -> domain.Stimulus:
    return domain.Stimulus(ref=ref, text="…", saliency=saliency, **kw)


def test_a_retrieval_replaces_the_hits_keeping_a_memorys_highest_saliency() -> None:
    ledger = MemoryLedger()
    ledger.apply(
        [
            events.MemoryChanged(agent="Ana", change="added", memory=_memory(1)),
            events.MemoryChanged(agent="Ana", change="added", memory=_memory(2)),
            events.MemoriesRetrieved(
                step=2,
                agent="Ana",
                stimuli=[
                    _stimulus("memory:1", 0.4),
                    _stimulus("memory:1", 0.7),
                    _stimulus("memory:1", 0.5),
                    _stimulus("message:3", 0.9),  # not a memory
                    _stimulus("memory:2", -0.1, random=True, cosine=0.12),
                ],
            ),
        ]
    )
    assert dict(ledger.hits("Ana")) == {1: Hit(0.7, False, None), 2: Hit(-0.1, True, 0.12)}
    assert ledger.retrieved_count("Ana") == (2, 2)
    assert ledger.retrieved_count("Ben") is None
    ledger.apply([events.MemoryChanged(agent="Ana", change="deleted", memory=_memory(2))])
    assert dict(ledger.hits("Ana")) == {1: Hit(0.7, False, None)}
    assert ledger.retrieved_count("Ana") == (1, 2)
    ledger.apply([events.MemoriesRetrieved(step=5, agent="Ana", stimuli=[])])
    assert dict(ledger.hits("Ana")) == {}
    assert ledger.retrieved_count("Ana") == (0, 5)
    ledger.apply([events.MemoryChanged(agent="Ana", change="edited", memory=_memory(1, "y"))])
    assert ledger.memories["Ana"][1].text == "y"


def test_people_and_simulated_users_are_known_by_their_latest_seat() -> None:
    ledger = MemoryLedger()
    ledger.apply([events.ParticipantJoined(name="Zoe", participant_kind="human")])
    assert ledger.humans == {"Zoe"}
    ledger.apply([events.ParticipantJoined(name="Zoe", participant_kind="simulated")])
    assert ledger.humans == set()
    assert ledger.profiles == {"Zoe": None}
    ledger.apply([events.ParticipantJoined(name="Zoe", participant_kind="ai")])
    assert ledger.profiles == {}


@pytest.mark.asyncio
async def test_folding_live_equals_folding_the_replays_events(embedder, db):
    """Event by event as the live pane gets them, or the events a replay rebuilds a moment
    from: the same memories and hits at every moment."""
    settings = offline_settings(seed=3, max_silent_steps=50)
    room, _, seen = await build(settings, embedder, library(3), db=db)
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    for _ in range(3):
        await room.step_once()
    name = room.agents[0].name
    item = await room.add_memory(name, "fact", "I keep bees on the roof.", 0.8)
    await room.step_once()
    room.delete_memory(name, item.id)
    await room.step_once()
    room.finish("finished", "enough")

    rec = Recording.load(db, room.session_id)
    live = MemoryLedger()
    kinds = {"memory_changed", "memories_retrieved", "participant_joined"}
    assert {e.kind for e in seen} >= kinds
    checked = 0
    for e in seen:
        live.apply([e])
        if e.kind not in kinds or e.seq not in rec.seqs:
            continue
        replayed = MemoryLedger()
        replayed.apply(rec.rebuild(e.seq))
        assert live.memories == replayed.memories, f"after event {e.seq} ({e.kind})"
        assert live.retrieved == replayed.retrieved
        assert live.retrieved_step == replayed.retrieved_step
        checked += 1
    assert checked > 10
    assert item.id not in live.memories[name]


def _state(name: str, message_id: int, turn: int, seq: int) -> events.HiddenStateRecorded:
    return events.HiddenStateRecorded(
        seq=seq,
        participant=name,
        message_id=message_id,
        turn=turn,
        state=HiddenState(clarity=0.5, satisfaction=0.4),
    )


def test_hidden_states_are_kept_by_message_and_listed_by_turn() -> None:
    """The hidden-state pane's fold (beside the memory pane's): a simulated user's states."""
    ledger = HiddenStateLedger()
    ledger.apply(
        [
            events.ParticipantJoined(name="Sim", participant_kind="simulated"),
            _state("Sim", 7, 1, seq=9),
            _state("Sim", 3, 0, seq=4),
            _state("Sim", 7, 1, seq=10),  # recorded again for the same message: the latest
            _state("Other", 5, 0, seq=11),  # its state came before its seat
        ]
    )
    assert ledger.simulated == {"Sim", "Other"}
    assert ledger.turns("Sim") == 2
    assert [(e.message_id, e.seq) for e in ledger.history("Sim")] == [(3, 4), (7, 10)]
    assert ledger.history("Nobody") == []
    ledger.apply([events.ParticipantJoined(name="Sim", participant_kind="human")])
    assert ledger.simulated == {"Other"}
