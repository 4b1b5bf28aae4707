"""OOD metrics (OOD positive, higher score = more OOD) against scikit-learn and scipy, and the
AUROC bootstrap against a numpy bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from sklearn import metrics as skm

import uqformer as uq


def sk_report(id_scores, ood_scores):
    s = np.concatenate([id_scores, ood_scores]).astype(float)
    y = np.concatenate([np.zeros(len(id_scores)), np.ones(len(ood_scores))])
    fpr, tpr, _ = skm.roc_curve(y, s, drop_intermediate=False)
    return {
        "auroc": skm.roc_auc_score(y, s),
        "aupr_out": skm.average_precision_score(y, s),
        "aupr_in": skm.average_precision_score(1 - y, -s),
        "fpr95": fpr[np.argmax(tpr >= 0.95)],
        "roc": np.column_stack([fpr, tpr]),
    }


def cases():
    rng = np.random.default_rng(42)
    out = {
        "gaussian": (rng.normal(0, 1, 300), rng.normal(1.2, 1, 200)),
        "heavy overlap": (rng.normal(0, 1, 101), rng.normal(0.1, 1.5, 37)),
        # Integer scores: ties inside and across the two sets.
        "ties": (rng.integers(0, 6, 150).astype(float), rng.integers(2, 8, 90).astype(float)),
        # 20 OOD samples: TPR reaches 0.95 exactly at the 19th.
        "tpr exactly 0.95": (rng.normal(0, 1, 50), rng.normal(1, 1, 20)),
        "separated": (rng.random(40), 2 + rng.random(30)),
        "reversed": (2 + rng.random(40), rng.random(30)),
        "all equal": (np.full(10, 0.5), np.full(7, 0.5)),
        "signed zeros": (np.array([-0.0, 0.0, 1.0]), np.array([0.0, -0.0, 2.0])),
        "one each": (np.array([0.3]), np.array([0.2])),
    }
    return out


CASES = cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_against_sklearn(name):
    id_s, ood_s = CASES[name]
    ref = sk_report(id_s, ood_s)
    report = uq.ood_report(id_s, ood_s)
    assert set(report) == {"auroc", "aupr_in", "aupr_out", "fpr95"}
    for key in ["auroc", "aupr_in", "aupr_out", "fpr95"]:
        assert report[key] == pytest.approx(ref[key], rel=1e-12, abs=1e-15), key
    # The single-metric functions give the same numbers.
    assert uq.auroc(id_s, ood_s) == report["auroc"]
    assert uq.aupr_in(id_s, ood_s) == report["aupr_in"]
    assert uq.aupr_out(id_s, ood_s) == report["aupr_out"]
    assert uq.fpr95(id_s, ood_s) == report["fpr95"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_roc_curve_is_sklearns_without_dropped_points(name):
    id_s, ood_s = CASES[name]
    curve = uq.roc_curve(id_s, ood_s)
    assert curve.shape[1] == 2
    np.testing.assert_allclose(curve, sk_report(id_s, ood_s)["roc"], rtol=1e-15, atol=0)
    # Its trapezoid area is the AUROC.
    area = np.sum(np.diff(curve[:, 0]) * (curve[1:, 1] + curve[:-1, 1]) / 2)
    assert area == pytest.approx(uq.auroc(id_s, ood_s), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", ["gaussian", "ties", "heavy overlap"])
def test_auroc_is_mann_whitney_probability(name):
    id_s, ood_s = CASES[name]
    u = mannwhitneyu(ood_s, id_s, alternative="two-sided").statistic
    assert uq.auroc(id_s, ood_s) == pytest.approx(u / (len(id_s) * len(ood_s)), rel=1e-12)


def test_hand_case():
    id_s, ood_s = [0.1, 0.4, 0.35, 0.8], [0.35, 0.9, 0.7]
    # OOD 0.35 beats 0.1 and ties 0.35 (1.5 pairs), 0.9 beats all 4, 0.7 beats 3.
    assert uq.auroc(id_s, ood_s) == pytest.approx(8.5 / 12, abs=1e-15)
    assert uq.auroc(CASES["separated"][0], CASES["separated"][1]) == 1.0
    assert uq.fpr95(*CASES["separated"]) == 0.0
    assert uq.auroc(*CASES["reversed"]) == 0.0
    assert uq.fpr95(*CASES["reversed"]) == 1.0
    assert uq.auroc(*CASES["all equal"]) == 0.5


def test_inputs_as_lists_and_float32():
    id_s, ood_s = CASES["gaussian"]
    ref = sk_report(id_s.astype(np.float32).astype(float), ood_s.astype(np.float32).astype(float))
    got = uq.ood_report(id_s.astype(np.float32).tolist(), ood_s.astype(np.float32))
    assert got["auroc"] == pytest.approx(ref["auroc"], rel=1e-12)


# ---- bootstrap ---------------------------------------------------------------------------------


def numpy_bootstrap(id_s, ood_s, resamples, seed):
    rng = np.random.default_rng(seed)
    i = id_s[rng.integers(0, len(id_s), (resamples, len(id_s)))]
    o = ood_s[rng.integers(0, len(ood_s), (resamples, len(ood_s)))]
    diff = o[:, :, None] - i[:, None, :]
    values = ((diff > 0) + 0.5 * (diff == 0)).mean(axis=(1, 2))
    return values


def test_bootstrap_is_deterministic_for_a_seed():
    id_s, ood_s = CASES["heavy overlap"]
    a = uq.auroc_bootstrap(id_s, ood_s, resamples=300, seed=5)
    assert a == uq.auroc_bootstrap(id_s, ood_s, resamples=300, seed=5)
    assert a != uq.auroc_bootstrap(id_s, ood_s, resamples=300, seed=6)
    assert set(a) == {"std", "ci_low", "ci_high", "resamples"}
    assert a["resamples"] == 300
    # Defaults: 200 resamples, seed 0.
    assert uq.auroc_bootstrap(id_s, ood_s) == uq.auroc_bootstrap(id_s, ood_s, 200, 0)


@pytest.mark.parametrize("name", ["gaussian", "ties"])
def test_bootstrap_spread_matches_a_numpy_bootstrap(name):
    id_s, ood_s = CASES[name]
    id_s, ood_s = id_s[:80], ood_s[:60]
    got = uq.auroc_bootstrap(id_s, ood_s, resamples=2000, seed=1)
    values = numpy_bootstrap(id_s, ood_s, 2000, seed=2)
    # Two independent bootstraps of 2000: their std estimates differ by ~2% (1 / sqrt(2R) each),
    # their 2.5% / 97.5% percentiles by ~0.004; the bounds are 4-5 of those standard errors.
    assert got["std"] == pytest.approx(values.std(ddof=1), rel=0.1)
    assert got["ci_low"] == pytest.approx(np.percentile(values, 2.5), abs=0.02)
    assert got["ci_high"] == pytest.approx(np.percentile(values, 97.5), abs=0.02)
    auroc = uq.auroc(id_s, ood_s)
    assert got["ci_low"] < auroc < got["ci_high"]


def test_bootstrap_degenerate_cases_are_exact():
    sep = uq.auroc_bootstrap(*CASES["separated"], resamples=50)
    assert (sep["std"], sep["ci_low"], sep["ci_high"]) == (0.0, 1.0, 1.0)
    flat = uq.auroc_bootstrap(*CASES["all equal"], resamples=50)
    assert (flat["std"], flat["ci_low"], flat["ci_high"]) == (0.0, 0.5, 0.5)


def test_bootstrap_resampled_values_are_aurocs_of_resamples():
    # One ID and one OOD sample: every resample is the pair itself.
    got = uq.auroc_bootstrap([0.3], [0.3], resamples=10)
    assert (got["std"], got["ci_low"], got["ci_high"]) == (0.0, 0.5, 0.5)
    # Two ID samples straddling one OOD sample: a resample's AUROC is 0, 0.5 or 1 with
    # probabilities 1/4, 1/2, 1/4, so the sample std is near sqrt(1/8).
    got = uq.auroc_bootstrap([0.0, 1.0], [0.5], resamples=4000, seed=3)
    assert got["std"] == pytest.approx(np.sqrt(1 / 8), rel=0.05)
    assert (got["ci_low"], got["ci_high"]) == (0.0, 1.0)
