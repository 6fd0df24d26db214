"""Hand-computed checks of the formulas in docs/spec.md §1.2 and §1.4."""

import math

import numpy as np
import pytest

from playground.cognition import scoring


def test_memory_decay_is_095_per_step_since_last_access():
    assert scoring.memory_decay(10, 10) == 1.0
    assert scoring.memory_decay(12, 10) == pytest.approx(0.9025)
    assert scoring.memory_decay(20, 10) == pytest.approx(0.95**10)  # 0.5987


def test_saliency_takes_the_better_of_utterance_and_interpretation_times_weight_and_decay():
    # max(0.4, 0.6) * 0.8 * 0.95^2 = 0.6 * 0.8 * 0.9025 = 0.4332
    assert scoring.saliency(cos_interp=0.6, cos_utt=0.4, weight=0.8, t=5, tau=3) == pytest.approx(
        0.4332
    )
    assert scoring.saliency(cos_interp=0.1, cos_utt=0.5, weight=1.0, t=3, tau=3) == pytest.approx(
        0.5
    )


def test_saliency_matrix_matches_the_scalar_formula():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(5, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    u, ui = vecs[0], vecs[1]
    w = np.array([1, 0.5, 0.3, 0.9, 0.7], np.float32)
    taus = np.array([0, 2, 4, 6, 7])
    got = scoring.saliency_matrix(vecs, w, taus, u, ui, t=7)
    for i in range(5):
        expect = scoring.saliency(
            float(vecs[i] @ ui), float(vecs[i] @ u), float(w[i]), 7, int(taus[i])
        )
        assert got[i] == pytest.approx(expect, rel=1e-5)


def test_silence_factor_is_102_per_step_since_last_spoke():
    assert scoring.silence_factor(7, 7) == 1.0
    assert scoring.silence_factor(10, 5) == pytest.approx(1.02**5)  # 1.10408


def test_motivation_score_is_expected_rating_times_silence_factor():
    dist = {1: 0.0, 2: 0.1, 3: 0.2, 4: 0.6, 5: 0.1}
    # Σ p·s = 0.2 + 0.6 + 2.4 + 0.5 = 3.7 ; × 1.02^3 = 3.7 × 1.061208 = 3.92647
    assert scoring.expected_rating(dist) == pytest.approx(3.7)
    assert scoring.motivation_score(dist, t=8, tau_p=5) == pytest.approx(3.7 * 1.061208)


def test_distribution_from_top_logprobs_merges_spaced_tokens_and_normalises():
    top = [
        ("4", math.log(0.5)),
        (" 4", math.log(0.1)),
        ("3", math.log(0.2)),
        ("five", math.log(0.1)),
        ("5", math.log(0.1)),
    ]
    dist = scoring.distribution_from_logprobs(top)
    assert dist is not None
    assert dist[4] == pytest.approx(0.6 / 0.9)
    assert dist[3] == pytest.approx(0.2 / 0.9)
    assert dist[5] == pytest.approx(0.1 / 0.9)
    assert dist[1] == dist[2] == 0.0
    assert sum(dist.values()) == pytest.approx(1.0)


def test_distribution_is_none_without_rating_tokens():
    assert scoring.distribution_from_logprobs([("Sure", -0.1), ("The", -2.0)]) is None


def test_point_distribution_puts_all_mass_on_the_parsed_rating():
    assert scoring.point_distribution(3) == {1: 0.0, 2: 0.0, 3: 1.0, 4: 0.0, 5: 0.0}
    with pytest.raises(ValueError, match=r"rating 6 outside 1\.\.5"):
        scoring.point_distribution(6)
