"""Every branch of Algorithm 1 and of floor arbitration."""

import random

import pytest

from playground import domain, participation
from playground.participation import Scored
from playground.settings import ProactivitySettings

OPEN = domain.TurnType(message_id=1, kind="open")
TO_ANA = domain.TurnType(message_id=1, kind="allocated", addressee="Ana")
TO_BEN = domain.TurnType(message_id=1, kind="allocated", addressee="Ben")
S = ProactivitySettings(system1_prob=0.0, im_threshold=3.95, interrupt_threshold=4.8)

# (id, turn type, thoughts, settings, expected action, expected thought, reason fragment)
CASES = [
    (
        "open_above_im_threshold_speaks_best",
        OPEN,
        [Scored(1, 2, 4.2), Scored(2, 2, 3.0)],
        S,
        "speak",
        1,
        "≥ imThreshold",
    ),
    (
        "open_exactly_at_threshold_speaks",
        OPEN,
        [Scored(1, 2, 3.95)],
        S,
        "speak",
        1,
        "≥ imThreshold",
    ),
    (
        "open_below_threshold_system1prob_0_silent",
        OPEN,
        [Scored(1, 1, 3.9), Scored(2, 2, 3.0)],
        S,
        "silent",
        None,
        "< imThreshold",
    ),
    (
        "open_below_threshold_system1prob_1_speaks_system1",
        OPEN,
        [Scored(1, 2, 3.9), Scored(2, 1, 2.0)],
        S.model_copy(update={"system1_prob": 1.0}),
        "speak",
        2,
        "System-1 reply drawn",
    ),
    (
        "open_below_threshold_no_system1_thought_silent",
        OPEN,
        [Scored(1, 2, 3.9)],
        S.model_copy(update={"system1_prob": 1.0}),
        "silent",
        None,
        "< imThreshold",
    ),
    (
        "allocated_to_self_speaks_even_when_low",
        TO_ANA,
        [Scored(1, 2, 1.2), Scored(2, 1, 2.5)],
        S,
        "speak",
        2,
        "addressed",
    ),
    (
        "allocated_to_other_below_interrupt_threshold_silent",
        TO_BEN,
        [Scored(1, 2, 4.7)],
        S,
        "silent",
        None,
        "< interruptThreshold",
    ),
    (
        "allocated_to_other_at_interrupt_threshold_interrupts",
        TO_BEN,
        [Scored(1, 2, 4.8)],
        S,
        "speak",
        1,
        "interrupts",
    ),
    ("no_thoughts_silent", OPEN, [], S, "silent", None, "no thoughts"),
]


@pytest.mark.parametrize(
    ("turn", "thoughts", "settings", "action", "thought_id", "reason"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_algorithm_1(turn, thoughts, settings, action, thought_id, reason):
    d = participation.decide(
        agent="Ana",
        step=3,
        trigger="new_message",
        thoughts=thoughts,
        turn_type=turn,
        settings=settings,
        rng=random.Random(0),
    )
    assert d.action == action
    assert d.thought_id == thought_id
    assert reason in d.reason


def test_system1_draw_uses_system1prob_as_a_probability():
    settings = S.model_copy(update={"system1_prob": 0.3})
    spoke = sum(
        participation.decide(
            agent="Ana",
            step=1,
            trigger="pause",
            thoughts=[Scored(1, 1, 2.0)],
            turn_type=OPEN,
            settings=settings,
            rng=random.Random(i),
        ).action
        == "speak"
        for i in range(2000)
    )
    assert 500 < spoke < 700  # ≈ 30 % of 2000


def test_relation_is_case_insensitive():
    assert (
        participation.relation(
            domain.TurnType(message_id=1, kind="allocated", addressee="ana"), "Ana"
        )
        == "allocated-self"
    )
    assert participation.relation(None, "Ana") == "open"


def _d(agent, score, turn_type="open"):
    return domain.Decision(
        agent=agent,
        step=1,
        trigger="new_message",
        action="speak",
        thought_id=1,
        score=score,
        turn_type=turn_type,
        reason="x",
    )


def test_arbitration_allocated_agent_wins_over_higher_score():
    winner = participation.arbitrate(
        [_d("Ben", 4.9, "allocated-other"), _d("Ana", 2.0, "allocated-self")], TO_ANA
    )
    assert winner is not None and winner.agent == "Ana"


def test_arbitration_highest_score_wins_on_open_turn_and_ties_go_to_first():
    assert (
        participation.arbitrate([_d("Ana", 4.0), _d("Ben", 4.5), _d("Cy", 4.1)], OPEN).agent
        == "Ben"
    )
    assert participation.arbitrate([_d("Ana", 4.5), _d("Ben", 4.5)], OPEN).agent == "Ana"
    assert participation.arbitrate([], OPEN) is None
