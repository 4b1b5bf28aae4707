"""Split conformal sets (THR, APS, RAPS) against an explicit-loop numpy reference, RAPS against
torch-uncertainty's scores, and the coverage guarantee by simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from _helpers import draw, draw_members

import uqformer as uq


def ref_class_scores(p, score, penalty=0.1, k_reg=1):
    """s(x, c) for every class: THR 1 - p[c]; APS the mass ranked at or above c (p descending,
    ties to the lower index); RAPS that plus penalty * max(0, rank - k_reg), rank 1-based."""
    n, c = p.shape
    out = np.empty((n, c))
    for i in range(n):
        if score == "thr":
            out[i] = 1.0 - p[i]
            continue
        order = sorted(range(c), key=lambda k: (-p[i, k], k))
        mass = 0.0
        for rank, k in enumerate(order, start=1):
            mass += p[i, k]
            out[i, k] = mass + (penalty * max(0, rank - k_reg) if score == "raps" else 0.0)
    return out


def ref_label_scores(p, y, score, **kw):
    return ref_class_scores(p, score, **kw)[np.arange(len(y)), y]


def ref_threshold(scores, alpha):
    """The k-th smallest score, k = ceil((n + 1)(1 - alpha)) in exact decimal arithmetic."""
    n = len(scores)
    k = math.ceil((n + 1) * (1 - Fraction(repr(alpha))))
    return np.inf if k > n else float(np.sort(scores)[k - 1])


SCORES = [("thr", {}), ("aps", {}), ("raps", {}), ("raps", {"penalty": 0.02, "k_reg": 3})]


def test_hand_scores():
    p = np.array([[0.2, 0.5, 0.3]])
    label = lambda s, y, **kw: uq.Conformal(s, **kw).scores(p, [y])[0]  # noqa: E731
    assert [label("thr", y) for y in range(3)] == pytest.approx([0.8, 0.5, 0.7], abs=1e-15)
    # Ranking 1, 2, 0: masses 0.5, 0.8, 1.0.
    assert [label("aps", y) for y in range(3)] == pytest.approx([1.0, 0.5, 0.8], abs=1e-15)
    # RAPS defaults (0.1, k_reg 1): + 0.1 per rank past the first.
    assert [label("raps", y) for y in range(3)] == pytest.approx([1.2, 0.5, 0.9], abs=1e-15)
    assert label("raps", 0, penalty=0.5, k_reg=2) == pytest.approx(1.5, abs=1e-15)
    # Equal probabilities rank the lower index first.
    tied = np.array([[0.4, 0.4, 0.2]])
    assert uq.Conformal("aps").scores(tied, [0])[0] == pytest.approx(0.4, abs=1e-15)
    assert uq.Conformal("aps").scores(tied, [1])[0] == pytest.approx(0.8, abs=1e-15)


@pytest.mark.parametrize("score,kw", SCORES)
def test_scores_against_reference(score, kw):
    _, p, y = draw(np.random.default_rng(1), 300, 6, 1.5)
    got = uq.Conformal(score, **kw).scores(p, y)
    np.testing.assert_allclose(got, ref_label_scores(p, y, score, **kw), rtol=0, atol=1e-15)


def test_raps_against_torch_uncertainty(tu_cases):
    for case in tu_cases:
        p, y, c = case["probs"], case["labels"], case["c"]
        for r in case["raps"]:
            conf = uq.Conformal("raps", penalty=r["penalty"], k_reg=r["k_reg"])
            np.testing.assert_allclose(conf.scores(p, y), r["label_scores"], rtol=1e-12, atol=1e-14)
            every = np.column_stack([conf.scores(p, np.full(len(y), k)) for k in range(c)])
            np.testing.assert_allclose(every, r["class_scores"], rtol=1e-12, atol=1e-14)
            ref = ref_class_scores(p, "raps", penalty=r["penalty"], k_reg=r["k_reg"])
            np.testing.assert_allclose(ref, r["class_scores"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("score,kw", SCORES)
@pytest.mark.parametrize("n,alpha", [(200, 0.1), (57, 0.05), (9, 0.7), (19, 0.1), (30, 0.33)])
def test_threshold_sets_coverage_and_size(score, kw, n, alpha):
    rng = np.random.default_rng(n)
    _, cal, cal_y = draw(rng, n, 5, 1.2)
    _, test, test_y = draw(rng, 150, 5, 1.2)
    conf = uq.Conformal(score, alpha=alpha, **kw).calibrate(cal, cal_y)
    q = ref_threshold(ref_label_scores(cal, cal_y, score, **kw), alpha)
    assert conf.threshold == q
    sets = conf.predict(test)
    expected = ref_class_scores(test, score, **kw) <= q
    assert sets.dtype == bool and sets.shape == (150, 5)
    np.testing.assert_array_equal(sets, expected)
    coverage = expected[np.arange(150), test_y].mean()
    size = expected.sum(axis=1).mean()
    assert conf.evaluate(test, test_y) == {"coverage": coverage, "set_size": size}
    report = uq.conformal(cal, cal_y, test, test_y, score=score, alpha=alpha, **kw)
    assert report["threshold"] == q and report["alpha"] == alpha
    assert report["coverage"] == coverage and report["set_size"] == size


def test_decimal_alpha_gives_the_intended_rank():
    # (9 + 1)(1 - 0.7) is 3.0000000000000004 in f64; the rank is 3, not 4.
    s = np.arange(1, 10) / 10.0
    p = np.column_stack([1 - s, s])  # THR score of label 1 is 1 - s
    conf = uq.Conformal("thr", alpha=0.7).calibrate(p, np.ones(9, int))
    assert conf.threshold == pytest.approx(np.sort(1 - s)[2], abs=1e-15)


def test_too_few_calibration_samples_give_full_sets():
    _, p, y = draw(np.random.default_rng(2), 5, 4)
    conf = uq.Conformal("aps", alpha=0.1).calibrate(p, y)  # k = ceil(6 * 0.9) = 6 > 5
    assert conf.threshold == np.inf
    assert conf.predict(p).all()
    report = uq.conformal(p, y, p, y, "thr", alpha=0.1)
    assert report["threshold"] == np.inf
    assert report["coverage"] == 1.0 and report["set_size"] == 4.0


def test_report_names_and_defaults():
    _, p, y = draw(np.random.default_rng(3), 100, 4)
    report = uq.conformal(p, y, p, y)
    assert set(report) == {"alpha", "score", "threshold", "coverage", "set_size"}
    assert report["score"] == "aps" and report["alpha"] == 0.1
    assert uq.conformal(p, y, p, y, "raps")["score"] == "raps"
    tuned = uq.conformal(p, y, p, y, "raps", penalty=0.02, k_reg=3)
    assert tuned["score"] == "raps(penalty=0.02, k_reg=3)"
    # RAPS's defaults are penalty 0.1 and k_reg 1.
    default = uq.Conformal("raps").calibrate(p, y)
    assert default.threshold == uq.Conformal("raps", penalty=0.1, k_reg=1).calibrate(p, y).threshold
    assert default.threshold == ref_threshold(ref_label_scores(p, y, "raps"), 0.1)


def test_members_are_calibrated_by_their_mean():
    _, members, y = draw_members(np.random.default_rng(4), 3, 120, 5)
    mean = members.mean(axis=0)
    conf = uq.Conformal("thr", alpha=0.2).calibrate(members, y)
    # The package's mean and numpy's may differ in the last bit.
    assert conf.threshold == pytest.approx(ref_threshold(ref_label_scores(mean, y, "thr"), 0.2), abs=1e-15)
    np.testing.assert_allclose(conf.scores(members, y), 1 - mean[np.arange(120), y], atol=1e-15)
    report = uq.conformal(members, y, members, y, "thr", alpha=0.2)
    assert report["coverage"] == conf.evaluate(members, y)["coverage"]


def test_raps_sets_are_no_larger_than_aps_sets_on_average():
    _, cal, cal_y = draw(np.random.default_rng(5), 1000, 10, 0.5)
    _, test, test_y = draw(np.random.default_rng(6), 1000, 10, 0.5)
    aps = uq.conformal(cal, cal_y, test, test_y, "aps", alpha=0.1)
    raps = uq.conformal(cal, cal_y, test, test_y, "raps", alpha=0.1, penalty=0.2, k_reg=1)
    assert raps["set_size"] < aps["set_size"]


@pytest.mark.parametrize("score", ["thr", "aps", "raps"])
def test_coverage_guarantee_by_simulation(score):
    """On exchangeable data, mean coverage is in [1 - alpha, 1 - alpha + 1 / (n + 1)] (scores
    without ties); bounds widened by 4 standard errors of the simulated mean."""
    rng = np.random.default_rng({"thr": 10, "aps": 11, "raps": 12}[score])
    alpha, n_cal, n_test, trials = 0.1, 100, 100, 200
    coverages = []
    for _ in range(trials):
        _, p, y = draw(rng, n_cal + n_test, 6, 1.0)  # labels drawn from the model itself
        conf = uq.Conformal(score, alpha=alpha).calibrate(p[:n_cal], y[:n_cal])
        coverages.append(conf.evaluate(p[n_cal:], y[n_cal:])["coverage"])
    mean, se = np.mean(coverages), np.std(coverages, ddof=1) / np.sqrt(trials)
    assert mean >= 1 - alpha - 4 * se
    assert mean <= 1 - alpha + 1 / (n_cal + 1) + 4 * se
