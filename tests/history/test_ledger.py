"""The thought ledger answers what a thoughts pane shows: scores, scoring steps, the score order,
and it stays the same whether folded event by event (live) or from the log (replay)."""

from __future__ import annotations

import pytest

from playground import domain, events
from playground.history.ledger import ThoughtLedger, ThoughtState, current_score, score_rank
from playground.history.recording import Recording
from tests.conftest import offline_settings
from tests.support.rooms import build, library


def _thought(tid: int, *, score: float | None = None) -> domain.Thought:
    return domain.Thought(
        id=tid,
        agent="Ana",
        text=f"thought {tid}",
        system=2,
        stimuli=[],
        saliency=0.5,
        created_step=1,
        last_access=1,
        score=score,
    )


def _evaluated(tid: int, step: int, score: float, *, retained: bool = False) -> events.Event:
    ev = domain.Evaluation(
        thought_id=tid,
        step=step,
        rating=3,
        distribution={},
        reasons_for=[],
        reasons_against=[],
        expected=3.0,
        silence_factor=1.0,
        score=score,
        method="offline-heuristic",
    )
    return events.ThoughtEvaluated(
        step=step, agent="Ana", evaluation=ev, saliency=0.6, retained=retained
    )


def _ledger() -> ThoughtLedger:
    """Ana: #1 scored at steps 1 and 3, #2 at step 1, #3 at step 3, #4 never scored."""
    ledger = ThoughtLedger()
    ledger.apply(
        [
            events.ThoughtFormed(thought=_thought(1)),
            events.ThoughtFormed(thought=_thought(2)),
            _evaluated(1, 1, 2.0),
            _evaluated(2, 1, 4.5),
            events.ThoughtFormed(thought=_thought(3)),
            events.ThoughtFormed(thought=_thought(4)),
            _evaluated(1, 3, 3.0, retained=True),
            _evaluated(3, 3, 3.5),
        ]
    )
    return ledger


def test_a_thought_has_its_latest_score_and_the_step_it_was_given_at() -> None:
    ledger = _ledger()
    assert ledger.score("Ana", 1) == 3.0
    assert ledger.scored_at("Ana", 1) == 3
    assert ledger.is_retained("Ana", 1)
    assert ledger.score("Ana", 4) is None
    assert ledger.scored_at("Ana", 4) is None
    assert ledger.score("Ana", 99) is None  # unknown: nothing, not an error
    assert current_score(_thought(5, score=1.5), []) == 1.5  # formed with a score
    state = ledger.state("Ana", 1)
    assert state == ThoughtState(
        ledger.thoughts["Ana"][1], tuple(ledger.evaluations["Ana"][1]), True, 3.0, 3
    )
    assert state.thought.saliency == 0.6  # the re-scored saliency


def test_sorting_by_score_puts_the_latest_step_first_then_older_scores_then_unscored() -> None:
    ledger = _ledger()
    assert ledger.latest_scored_step("Ana") == 3
    assert ledger.latest_scored_step("Ben") is None
    order = sorted(ledger.thoughts["Ana"], key=lambda t: ledger.rank("Ana", t))
    assert order == [3, 1, 2, 4]  # 3.5 and 3.0 at step 3; 4.5 at step 1; never scored
    assert score_rank(None, None, 3, 7) > score_rank(0.0, 1, 3, 1)


def test_deleting_the_latest_scored_thought_moves_the_latest_step_back_and_undo_restores_it() -> (
    None
):
    ledger = _ledger()
    assert ledger.latest_scored_step("Ana") == 3  # worked out, then kept up to date
    ledger.apply([events.ThoughtDeleted(agent="Ana", thought_id=3)])
    assert ledger.latest_scored_step("Ana") == 3  # #1 was re-scored at 3 too
    ledger.apply([events.ThoughtDeleted(agent="Ana", thought_id=1)])
    assert ledger.latest_scored_step("Ana") == 1
    assert set(ledger.deleted["Ana"]) == {1, 3}
    ledger.apply([events.ThoughtRestored(agent="Ana", thought=ledger.deleted["Ana"][1][0])])
    assert ledger.latest_scored_step("Ana") == 3
    assert ledger.scored_at("Ana", 1) == 3
    assert ledger.is_retained("Ana", 1)
    ledger.apply([_evaluated(2, 5, 1.0)])
    assert ledger.latest_scored_step("Ana") == 5  # a later evaluation moves it on
    assert [t for t in sorted(ledger.thoughts["Ana"], key=lambda t: ledger.rank("Ana", t))] == [
        2,
        1,
        4,
    ]


def test_reading_a_thoughts_evaluations_leaves_the_ledger_as_it_was() -> None:
    """The pane once read evaluations with ``setdefault``, adding empty lists to the fold."""
    ledger = _ledger()
    before = {a: dict(d) for a, d in ledger.evaluations.items()}
    assert list(ledger.evaluations_of("Ana", 4)) == []
    assert list(ledger.evaluations_of("Ben", 1)) == []
    assert not ledger.is_retained("Ben", 1)
    assert ledger.evaluations == before


def test_a_copy_answers_alike_and_goes_its_own_way() -> None:
    ledger = _ledger()
    assert ledger.latest_scored_step("Ana") == 3
    other = ledger.copy()
    assert other.states() == ledger.states()
    other.apply([_evaluated(4, 6, 2.0)])
    assert other.latest_scored_step("Ana") == 6
    assert ledger.latest_scored_step("Ana") == 3
    assert ledger.scored_at("Ana", 4) is None


@pytest.mark.asyncio
async def test_folding_live_event_by_event_answers_as_the_replays_ledger(embedder, db):
    """The live pane folds each event as it comes, asking between events (the cached latest step
    kept up to date); the replay folds the log from checkpoints. Both answer the same at every
    moment, with deletions and an undo in between."""
    settings = offline_settings(seed=3, max_silent_steps=50)
    room, _, seen = await build(settings, embedder, library(3), db=db)
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    for _ in range(3):
        await room.step_once()
    agent = room.agents[1]
    gone = sorted(agent.reservoir.thoughts)[:2]
    for tid in gone:
        room.delete_thought(agent.name, tid)
    room.restore_thought(agent.name, gone[0])
    for _ in range(2):
        await room.step_once()
    room.finish("finished", "enough")

    rec = Recording.load(db, room.session_id)
    live = ThoughtLedger()
    names = [a.name for a in room.agents]
    thought_events = [e for e in seen if e.kind.startswith("thought_")]
    assert {"thought_deleted", "thought_restored"} <= {e.kind for e in thought_events}
    for e in thought_events:
        live.apply([e])
        for name in names:  # asked as a pane asks, after each event
            live.latest_scored_step(name)
        replayed = rec.thought_ledger(e.seq)
        assert live.states() == replayed.states(), f"after event {e.seq} ({e.kind})"
        for name in names:
            assert live.latest_scored_step(name) == replayed.latest_scored_step(name)
            ranked = sorted(live.thoughts.get(name, {}), key=lambda t: live.rank(name, t))
            assert ranked == sorted(
                replayed.thoughts.get(name, {}),
                key=lambda t: replayed.rank(name, t),
            )
    assert live.deleted[agent.name].keys() == {gone[1]}
