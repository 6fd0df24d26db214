"""Every branch of Algorithm 1 (inner_thoughts.participation), of floor arbitration (room.floor)
and of the silent run's explanation (room.silence)."""

import random

import pytest

from playground import domain
from playground.inner_thoughts import participation
from playground.inner_thoughts.participation import Scored
from playground.room import floor, silence
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


def _d(agent, score, turn_type="open", threshold=None):
    return domain.Decision(
        agent=agent,
        step=1,
        trigger="new_message",
        action="speak",
        thought_id=1,
        score=score,
        turn_type=turn_type,
        reason="x",
        threshold=threshold,
    )


def _arbitrate(*wanting, seed=0):
    return floor.arbitrate(list(wanting), random.Random(seed))


def test_arbitration_addressee_wins_over_open_speakers_and_low_scores():
    ben = _d("Ben", 2.0, "allocated-self")
    assert _arbitrate(ben) is ben


def test_arbitration_an_interrupter_takes_the_floor_from_the_addressee():
    ana = _d("Ana", 2.0, "allocated-self")
    ben = _d("Ben", 4.9, "allocated-other", 4.8)
    cy = _d("Cy", 4.95, "allocated-other", 4.8)
    assert _arbitrate(ana, ben) is ben
    assert _arbitrate(ana, ben, cy) is cy  # several interrupters: the highest score wins


def test_arbitration_highest_score_wins_on_open_turn():
    assert _arbitrate(_d("Ana", 4.0), _d("Ben", 4.5), _d("Cy", 4.1)).agent == "Ben"
    assert _arbitrate() is None


def test_arbitration_ties_are_drawn_by_the_seeded_rng_not_by_join_order():
    winners = {
        _arbitrate(_d("Ana", 4.5), _d("Ben", 4.5), _d("Cy", 4.0), seed=s).agent for s in range(40)
    }
    assert winners == {"Ana", "Ben"}
    again = [_arbitrate(_d("Ana", 4.5), _d("Ben", 4.5), seed=7).agent for _ in range(5)]
    assert len(set(again)) == 1  # the same seed draws the same agent


def test_scores_that_read_the_same_are_a_tie_drawn_by_seed_and_said_to_be_tied():
    # 4.084 and 4.079 both read 4.08: neither "scored higher" (issue 10)
    winners = {_arbitrate(_d("Ana", 4.084), _d("Grace", 4.079), seed=s).agent for s in range(40)}
    assert winners == {"Ana", "Grace"}, "a tie as shown is drawn, not won by the third decimal"
    grace, ana = _d("Grace", 4.079), _d("Ana", 4.084)
    for loser, winner in ((ana, grace), (grace, ana)):
        reason = floor.outcome(loser, winner, OPEN).reason
        assert f"tied with {winner.agent} at 4.08; {winner.agent} won the seeded draw" in reason
        assert "scored higher" not in reason
    # one hundredth apart is not a tie, and the text shows the two different numbers' winner
    beaten = floor.outcome(_d("Ana", 4.07), _d("Grace", 4.08), OPEN).reason
    assert "who scored higher (4.08)" in beaten
    assert "tied" not in beaten
    assert _arbitrate(_d("Ana", 4.07), _d("Grace", 4.08), seed=3).agent == "Grace"


def test_outcome_explains_both_sides_of_an_interruption():
    ana = _d("Ana", 2.0, "allocated-self")
    ben = _d("Ben", 4.9, "allocated-other", 4.8)
    dee = _d("Dee", 4.85, "allocated-other", 4.8)
    won = floor.outcome(ben, ben, TO_ANA)
    assert won.action == "speak"
    assert "takes the floor from Ana" in won.reason
    lost = floor.outcome(ana, ben, TO_ANA)
    assert lost.action == "silent"
    assert "lost the floor to Ben, who interrupted (4.90 ≥ interruptThreshold 4.8)" in lost.reason
    assert "the turn stays Ana's for the next step" in lost.reason
    other = floor.outcome(dee, ben, TO_ANA)
    assert other.action == "silent"
    assert "Ben, who interrupted with 4.90" in other.reason


def test_outcome_on_an_open_or_allocated_turn():
    ana, ben = _d("Ana", 4.0), _d("Ben", 4.5)
    assert floor.outcome(ben, ben, OPEN) is ben
    assert "who scored higher (4.50)" in floor.outcome(ana, ben, OPEN).reason
    addressed = _d("Ana", 1.0, "allocated-self")
    assert "who was addressed" in floor.outcome(_d("Ben", 4.9, "open"), addressed, TO_ANA).reason
    tie = floor.outcome(_d("Ana", 4.5), ben, OPEN)
    assert "tied with Ben at 4.50; Ben won the seeded draw" in tie.reason
    silent = domain.Decision(agent="Cy", step=1, trigger="pause", action="silent", reason="quiet")
    assert floor.outcome(silent, ben, OPEN) is silent


def test_floor_turn_pause_opens_the_floor_and_interrupted_allocations_stay_pending():
    # Silence opens the floor, whoever was addressed before.
    assert floor.floor_turn("pause", TO_BEN, None).kind == "open"
    assert floor.floor_turn("pause", OPEN, TO_BEN).kind == "open"
    # A message naming someone allocates the turn to them, replacing an older allocation.
    assert floor.floor_turn("new_message", TO_ANA, TO_BEN) is TO_ANA
    # An open message (the interrupter's) leaves the interrupted allocation in force.
    assert floor.floor_turn("new_message", OPEN, TO_BEN) is TO_BEN
    assert floor.floor_turn("new_message", OPEN, None) is OPEN


# -- why a run went silent ---------------------------------------------------------------------


def _silent(agent: str, score: float, threshold: float, **kw: object) -> domain.Decision:
    fields: dict[str, object] = {"action": "silent", "reason": "below", **kw}
    return domain.Decision(
        agent=agent, step=1, trigger="pause", score=score, threshold=threshold, **fields
    )


def test_a_silent_run_reports_the_score_closest_to_its_threshold():
    run = silence.SilentRun()
    run.note(_silent("Ana", 3.5, 4.8, turn_type="allocated-other"))  # 1.30 short
    run.note(_silent("Ben", 3.1, 3.95))  # 0.85 short: the closest
    run.note(_silent("Cy", 2.0, 3.59))
    run.note(domain.Decision(agent="Dee", step=1, trigger="pause", action="silent",
                             reason="reactive", policy="reactive"))  # fmt: skip
    assert run.best is not None
    assert run.best.agent == "Ben"
    reason = run.explain(4)
    assert reason == (
        "4 silent steps in a row: no thought's motivation reached the threshold (best 3.10"
        " against 3.95); try a more talkative preset (active-contributor), lower the"
        " thresholds, or a stronger model"
    )
    assert silence.explains_silence(reason)
    run.refused = 2
    assert "(best 3.10 against 3.95); 2 other thoughts refused as empty or placeholder" in (
        run.explain(4)
    )


def test_a_silent_run_of_unusable_answers_says_so_instead():
    run = silence.SilentRun(refused=6)
    assert run.explain(2) == (
        "2 silent steps in a row: every thought the model formed was unusable (6 thoughts"
        " refused as empty or placeholder text, such as '...'), so none could be rated; try a"
        " stronger model"
    )
    run.note(_silent("Ana", 4.2, 3.95, action="speak"))  # chosen, but its message was refused
    run.unspoken = 1
    assert run.explain(2).startswith("2 silent steps in a row: the model's messages were unusable")
    failed = silence.SilentRun(failed=3).explain(4)
    assert "no thought could be formed or rated (3 failures, see the errors)" in failed


def test_a_silent_run_with_nothing_to_explain_keeps_the_short_reason():
    assert silence.SilentRun().explain(4) == "4 silent steps in a row"
    assert not silence.explains_silence("4 silent steps in a row")
    assert not silence.explains_silence("reached 15 turns")


def test_a_drawn_system1_reply_keeps_both_the_best_score_and_its_own():
    """The decision speaks with the System-1 thought (score 2.00) while the best thought scored
    3.90: both are kept, each under its own name, and the reason names both."""
    d = participation.decide(
        agent="Ana",
        step=3,
        trigger="new_message",
        thoughts=[Scored(1, 2, 3.9), Scored(2, 1, 2.0)],
        turn_type=OPEN,
        settings=S.model_copy(update={"system1_prob": 1.0}),
        rng=random.Random(0),
    )
    assert (d.action, d.thought_id, d.best_score, d.score) == ("speak", 2, 3.9, 2.0)
    assert d.reason == (
        "best score 3.90 < imThreshold 3.95; System-1 reply drawn (p=1): thought #2, score 2.00"
    )
    for thoughts, settings in (
        ([Scored(1, 2, 4.2), Scored(2, 2, 3.0)], S),  # speaks with the best
        ([Scored(1, 2, 3.0)], S),  # silent
    ):
        d = participation.decide(
            agent="Ana", step=3, trigger="new_message", thoughts=thoughts, turn_type=OPEN,
            settings=settings, rng=random.Random(0),
        )  # fmt: skip
        assert d.best_score == d.score == max(t.score for t in thoughts)


def test_a_silent_run_compares_the_best_score_with_the_threshold():
    """A System-1 reply that lost the floor: its own score is lower than the best; the silent
    end names the best score."""
    run = silence.SilentRun()
    d = domain.Decision(
        agent="Ana", step=3, trigger="pause", action="silent", thought_id=2, score=2.0,
        best_score=3.9, threshold=3.95, reason="…",
    )  # fmt: skip
    run.note(d)
    assert "(best 3.90 against 3.95)" in run.explain(4)
