"""Output-space OOD scores (higher = more OOD) and ensemble diversity, against scipy and
explicit-loop numpy references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import draw_members
from scipy.special import logsumexp
from scipy.stats import entropy

import uqformer as uq

EPS = np.finfo(np.float64).eps


def ref_mutual_info(members):
    per = entropy(members.mean(axis=0), axis=1) - np.mean(entropy(members, axis=2), axis=0)
    return np.maximum(per, 0.0)


def ref_disagreement(members):
    m, n, _ = members.shape
    votes = members.argmax(axis=2)
    out = np.empty(n)
    for i in range(n):
        pairs = list(itertools.combinations(range(m), 2))
        out[i] = sum(votes[a, i] != votes[b, i] for a, b in pairs) / len(pairs)
    return out


def ref_member_variance(members):
    return np.var(members, axis=0).sum(axis=-1)  # population variance, summed over classes


@pytest.fixture(scope="module")
def ensemble():
    z, members, labels = draw_members(np.random.default_rng(21), 5, 150, 6, spread=1.5)
    return z, members, labels


def test_scores_dict():
    assert list(uq.SCORES) == [
        "msp", "entropy", "mutual_info", "max_logit", "energy", "disagreement", "member_variance",
    ]
    assert all(isinstance(v, str) and v for v in uq.SCORES.values())


def test_probability_scores(ensemble):
    _, members, _ = ensemble
    p = members[0]
    np.testing.assert_allclose(uq.score("msp", probs=p), 1 - p.max(axis=1), rtol=0, atol=0)
    np.testing.assert_allclose(uq.score("entropy", probs=p), entropy(p, axis=1), rtol=1e-13)
    # From members: the scores of their mean (the package's mean and numpy's differ by an ulp).
    mean = members.mean(axis=0)
    np.testing.assert_allclose(uq.score("msp", members=members), 1 - mean.max(1), atol=1e-15)
    np.testing.assert_allclose(uq.score("entropy", members=members), entropy(mean, axis=1), rtol=1e-13)
    # probs win over members when both are given.
    np.testing.assert_array_equal(uq.score("msp", probs=p, members=members), 1 - p.max(axis=1))


def test_entropy_treats_zero_as_zero():
    p = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    np.testing.assert_allclose(uq.score("entropy", probs=p), [0.0, np.log(2), 1.5 * np.log(2)], rtol=1e-15)


def test_logit_scores_and_their_signs(ensemble):
    z, _, _ = ensemble
    z = z[0]
    np.testing.assert_array_equal(uq.score("max_logit", logits=z), -z.max(axis=1))
    np.testing.assert_allclose(uq.score("energy", logits=z), -logsumexp(z, axis=1), rtol=1e-14)
    # Larger logits (a confident, in-distribution input) score lower: less OOD.
    big = np.array([[10.0, 0.0], [1.0, 0.0]])
    energy = uq.score("energy", logits=big)
    assert energy[0] < energy[1]
    assert energy[0] == pytest.approx(-(10 + np.log1p(np.exp(-10))), rel=1e-15)
    # No overflow for huge logits.
    np.testing.assert_allclose(uq.score("energy", logits=[[1000.0, 1000.0]]), [-1000 - np.log(2)], rtol=1e-15)


def test_member_scores(ensemble):
    _, members, _ = ensemble
    np.testing.assert_allclose(
        uq.score("mutual_info", members=members), ref_mutual_info(members), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(
        uq.score("disagreement", members=members), ref_disagreement(members), rtol=0, atol=1e-15
    )
    np.testing.assert_allclose(
        uq.score("member_variance", members=members), ref_member_variance(members), rtol=1e-12
    )


def test_member_scores_of_identical_members_are_zero(ensemble):
    _, members, _ = ensemble
    same = np.repeat(members[:1], 3, axis=0)
    # The mean of equal rows is the row up to rounding: MI is 0 up to rounding, and never below
    # 0 (clamped).
    mi = uq.score("mutual_info", members=same)
    assert np.all(mi >= 0.0) and np.all(mi <= 1e-14)
    assert np.all(uq.score("disagreement", members=same) == 0.0)
    np.testing.assert_allclose(uq.score("member_variance", members=same), 0.0, rtol=0, atol=1e-30)


def test_disagreement_hand_case():
    # Three members vote 0, 0, 1 on sample 0 (2 of 3 pairs differ) and 2, 1, 0 on sample 1.
    eye = np.eye(3)
    members = np.stack([eye[[0, 2]], eye[[0, 1]], eye[[1, 0]]])
    np.testing.assert_allclose(uq.score("disagreement", members=members), [2 / 3, 1.0], atol=1e-15)
    # A tie inside a member's row votes for the first maximum.
    tied = np.array([[[0.5, 0.5]], [[0.4, 0.6]]])
    assert uq.score("disagreement", members=tied)[0] == 1.0


# ---- diversity -----------------------------------------------------------------------------


def ref_diversity(members, labels=None):
    m, n, c = members.shape
    logs = np.log(np.maximum(members, EPS))
    kl = 0.0
    for i in range(n):
        for a in range(m):
            for b in range(m):
                if a != b:
                    kl += np.sum(members[a, i] * (logs[a, i] - logs[b, i]))
    out = {
        "disagreement": ref_disagreement(members).mean(),
        "mutual_info": ref_mutual_info(members).mean(),
        "pairwise_kl": kl / (n * m * (m - 1)),
        "member_accuracy": np.nan,
        "ensemble_gain": np.nan,
    }
    if labels is not None:
        member_acc = np.mean([(members[k].argmax(1) == labels).mean() for k in range(m)])
        out["member_accuracy"] = member_acc
        out["ensemble_gain"] = (members.mean(0).argmax(1) == labels).mean() - member_acc
    return out


@pytest.mark.parametrize("with_labels", [True, False])
def test_diversity_against_reference(ensemble, with_labels):
    _, members, labels = ensemble
    y = labels if with_labels else None
    got = uq.diversity(members, y)
    ref = ref_diversity(members, y)
    assert set(got) == set(ref)
    for key, value in ref.items():
        if np.isnan(value):
            assert np.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


def test_diversity_hand_case_with_zeros():
    # Two confident members that disagree: KL is -ln(eps) each way (zeros clipped in the logs).
    members = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    got = uq.diversity(members, [0])
    assert got["disagreement"] == 1.0
    assert got["pairwise_kl"] == pytest.approx(-np.log(EPS), rel=1e-15)
    assert got["mutual_info"] == pytest.approx(np.log(2), rel=1e-15)
    assert got["member_accuracy"] == 0.5
    assert got["ensemble_gain"] == 0.5  # the mean (0.5, 0.5) predicts class 0: right


def test_diversity_random_small_ensembles():
    for seed in range(3):
        _, members, labels = draw_members(np.random.default_rng(seed), 2 + seed, 40, 3 + seed)
        got = uq.diversity(members, labels)
        for key, value in ref_diversity(members, labels).items():
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (seed, key)
