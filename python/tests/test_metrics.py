"""Classification and calibration metrics against scikit-learn and explicit-loop numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import draw, draw_members
from sklearn.metrics import accuracy_score, log_loss

import uqformer as uq

EPS = np.finfo(np.float64).eps


# ---- references, written independently of the package ---------------------------------------


def ref_bin(conf: float, bins: int) -> int:
    """The bin (lo, hi] holding `conf`, by explicit interval tests; 0 also in the first bin."""
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        if lo < conf <= hi or (b == 0 and conf == 0.0):
            return b
    raise AssertionError(f"confidence {conf} outside [0, 1]")


def ref_binned_gap(conf, hit, bins: int) -> float:
    """sum_b n_b / N |acc_b - conf_b| over equal-width bins (lo, hi]."""
    members = [[] for _ in range(bins)]
    for i, c in enumerate(conf):
        members[ref_bin(float(c), bins)].append(i)
    total = 0.0
    for idx in members:
        if idx:
            total += len(idx) / len(conf) * abs(np.mean(hit[idx]) - np.mean(conf[idx]))
    return total


def top(probs):
    return probs.max(axis=1), probs.argmax(axis=1)


def ref_ece(probs, labels, bins=15):
    conf, pred = top(probs)
    return ref_binned_gap(conf, (pred == labels).astype(float), bins)


def ref_adaptive_ece(probs, labels, bins=15):
    conf, pred = top(probs)
    hit = (pred == labels).astype(float)
    order = np.argsort(conf, kind="stable")
    n, total = len(conf), 0.0
    for b in range(bins):
        idx = order[(b * n) // bins : ((b + 1) * n) // bins]
        if len(idx):
            total += len(idx) / n * abs(hit[idx].mean() - conf[idx].mean())
    return total


def ref_classwise_ece(probs, labels, bins=15):
    c = probs.shape[1]
    return np.mean([ref_binned_gap(probs[:, k], (labels == k).astype(float), bins) for k in range(c)])


def ref_brier(probs, labels):
    onehot = np.eye(probs.shape[1])[labels]
    return np.mean(np.sum((probs - onehot) ** 2, axis=1))


def ref_nll(probs, labels):
    return log_loss(labels, probs, labels=np.arange(probs.shape[1]))


def ref_accuracy(probs, labels):
    return accuracy_score(labels, probs.argmax(axis=1))


REFS = {
    "accuracy": ref_accuracy,
    "nll": ref_nll,
    "brier": ref_brier,
    "ece": ref_ece,
    "adaptive_ece": ref_adaptive_ece,
    "classwise_ece": ref_classwise_ece,
}

# ---- hand cases ------------------------------------------------------------------------------

# Confidences 0.25, 0.5, 0.6, 1.0 with 4 bins: 0.25 and 0.5 lie on bin edges, so (lo, hi] and
# [lo, hi) disagree (0.4125 here against 0.2125). Row 1 ties classes 0 and 1: argmax takes 0.
HAND_P = np.array(
    [[0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], [0.1, 0.6, 0.2, 0.1], [0.0, 0.0, 0.0, 1.0]]
)
HAND_Y = np.array([0, 1, 1, 3])


def test_hand_accuracy_first_max_wins_ties():
    assert uq.accuracy(HAND_P, HAND_Y) == 0.75
    # The tied row is right when its label is the first maximum.
    assert uq.accuracy(HAND_P, np.array([0, 0, 1, 3])) == 1.0
    assert uq.accuracy([[0.5, 0.5]], [1]) == 0.0


def test_hand_ece_bins_are_open_below_closed_above():
    assert uq.ece(HAND_P, HAND_Y, bins=4) == pytest.approx(0.4125, abs=1e-15)
    assert ref_ece(HAND_P, HAND_Y, bins=4) == pytest.approx(0.4125, abs=1e-15)


def test_hand_brier():
    # Rows: 3 * 0.0625 + 0.5625; 0.25 + 0.25; 0.01 + 0.16 + 0.04 + 0.01; 0.
    expected = (0.75 + 0.5 + 0.22 + 0.0) / 4
    assert uq.brier(HAND_P, HAND_Y) == pytest.approx(expected, abs=1e-15)
    # A confident wrong one-hot prediction costs the maximum, 2.
    assert uq.brier([[1.0, 0.0, 0.0]], [2]) == 2.0


def test_hand_classwise_ece_counts_zero_probabilities_in_first_bin():
    # Class 1 forecasts 0 for a sample of class 1: a gap of 1 in the first bin.
    p = np.array([[1.0, 0.0], [0.25, 0.75]])
    assert uq.classwise_ece(p, [1, 1], bins=2) == pytest.approx(0.625, abs=1e-15)
    assert ref_classwise_ece(p, np.array([1, 1]), bins=2) == pytest.approx(0.625, abs=1e-15)


def test_hand_adaptive_ece_stable_order_of_ties():
    # Equal confidences keep input order, so the equal-mass split depends on it.
    p = np.tile([0.7, 0.3], (4, 1))
    assert uq.adaptive_ece(p, [0, 0, 1, 1], bins=2) == pytest.approx(0.5, abs=1e-15)
    assert uq.adaptive_ece(p, [0, 1, 0, 1], bins=2) == pytest.approx(0.2, abs=1e-15)


def test_hand_adaptive_ece_skips_empty_bins():
    p = np.array([[0.9, 0.1], [0.6, 0.4], [0.8, 0.2]])
    y = np.array([0, 1, 0])
    # Three samples in 15 bins: each sample alone, gaps 0.1, 0.6 and 0.2.
    assert uq.adaptive_ece(p, y) == pytest.approx(0.9 / 3, abs=1e-15)


def test_nll_clips_like_sklearn():
    # p[y] = 0 and p[y] = 1: clipped to eps and 1 - eps.
    p = np.array([[1.0, 0.0], [0.0, 1.0], [0.3, 0.7]])
    y = np.array([1, 1, 0])
    expected = (-np.log(EPS) - np.log1p(-EPS) - np.log(0.3)) / 3
    assert uq.nll(p, y) == pytest.approx(expected, rel=1e-14)
    assert uq.nll(p, y) == pytest.approx(ref_nll(p, y), rel=1e-14)


# ---- seeded random cases ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n,c,beta", [(50, 2, 3.0), (300, 5, 1.5), (257, 10, 0.7)])
@pytest.mark.parametrize("name", sorted(REFS))
def test_random_against_reference(name, n, c, beta, seed):
    _, probs, labels = draw(np.random.default_rng(seed), n, c, beta)
    got = getattr(uq, name)(probs, labels)
    assert got == pytest.approx(REFS[name](probs, labels), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("bins", [1, 3, 10, 15, 40])
def test_bins_option(bins):
    _, probs, labels = draw(np.random.default_rng(bins), 400, 4, 1.2)
    for name in ["ece", "adaptive_ece", "classwise_ece"]:
        got = getattr(uq, name)(probs, labels, bins=bins)
        assert got == pytest.approx(REFS[name](probs, labels, bins), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("name", sorted(REFS))
def test_members_are_scored_by_their_mean(name):
    _, members, labels = draw_members(np.random.default_rng(7), 4, 200, 6)
    mean = members.mean(axis=0)
    # The package's mean and numpy's differ in the last bit, hence rel 1e-12.
    assert getattr(uq, name)(members, labels) == pytest.approx(
        REFS[name](mean, labels), rel=1e-12, abs=1e-14
    )


def test_members_evaluate_and_diagram():
    _, members, labels = draw_members(np.random.default_rng(8), 3, 150, 4)
    mean = members.mean(axis=0)
    report = uq.evaluate(members, labels)
    for key, ref in [("accuracy", ref_accuracy), ("nll", ref_nll), ("ece", ref_ece), ("aece", ref_adaptive_ece)]:
        assert report[key] == pytest.approx(ref(mean, labels), rel=1e-12, abs=1e-14), key
    counts = [row["count"] for row in uq.reliability_diagram(members, labels)]
    assert counts == np.bincount([ref_bin(c, 15) for c in mean.max(1)], minlength=15).tolist()


def test_float32_and_lists_are_accepted():
    _, probs, labels = draw(np.random.default_rng(3), 60, 3)
    p32 = probs.astype(np.float32)
    wide = p32.astype(np.float64)
    # float32 rows are widened exactly (sklearn would warn that they do not sum to 1 in f64).
    expected = np.mean(-np.log(np.clip(wide[np.arange(60), labels], EPS, 1 - EPS)))
    assert uq.nll(p32, labels) == pytest.approx(expected, rel=1e-13)
    assert uq.brier(probs.tolist(), labels.tolist()) == pytest.approx(
        ref_brier(probs, labels), rel=1e-13
    )
    # Integer-valued float labels are labels.
    assert uq.accuracy(probs, labels.astype(float)) == ref_accuracy(probs, labels)


def test_classwise_ece_matches_torch_uncertainty(tu_cases):
    for case in tu_cases:
        got = uq.classwise_ece(case["probs"], case["labels"], bins=case["bins"])
        assert got == pytest.approx(case["classwise_ece"], rel=1e-12, abs=1e-14), case["name"]
        # ... and the numpy reference agrees with torch-uncertainty too (no edge values).
        ref = ref_classwise_ece(case["probs"], case["labels"], case["bins"])
        assert ref == pytest.approx(case["classwise_ece"], rel=1e-12, abs=1e-14)


# ---- evaluate, reliability diagram, msp, mean_probs --------------------------------------------


def test_evaluate_keys_and_values():
    _, probs, labels = draw(np.random.default_rng(11), 333, 7, 1.8)
    report = uq.evaluate(probs, labels, bins=12)
    assert set(report) == {
        "n", "accuracy", "nll", "brier", "ece", "aece", "classwise_ece", "aurc", "augrc",
    }
    assert report["n"] == 333
    singles = {
        "accuracy": uq.accuracy(probs, labels),
        "nll": uq.nll(probs, labels),
        "brier": uq.brier(probs, labels),
        "ece": uq.ece(probs, labels, bins=12),
        "aece": uq.adaptive_ece(probs, labels, bins=12),
        "classwise_ece": uq.classwise_ece(probs, labels, bins=12),
        "aurc": uq.aurc(uq.msp_uncertainty(probs), probs.argmax(1) == labels),
        "augrc": uq.augrc(uq.msp_uncertainty(probs), probs.argmax(1) == labels),
    }
    for key, value in singles.items():
        assert report[key] == value, key
    refs = {
        "accuracy": ref_accuracy(probs, labels),
        "nll": ref_nll(probs, labels),
        "brier": ref_brier(probs, labels),
        "ece": ref_ece(probs, labels, 12),
        "aece": ref_adaptive_ece(probs, labels, 12),
        "classwise_ece": ref_classwise_ece(probs, labels, 12),
    }
    for key, value in refs.items():
        assert report[key] == pytest.approx(value, rel=1e-12, abs=1e-14), key


def test_evaluate_default_bins_is_15():
    _, probs, labels = draw(np.random.default_rng(12), 200, 3)
    assert uq.DEFAULT_BINS == 15
    assert uq.evaluate(probs, labels)["ece"] == pytest.approx(ref_ece(probs, labels, 15), rel=1e-12)


@pytest.mark.parametrize("bins", [4, 15])
def test_reliability_diagram(bins):
    _, probs, labels = draw(np.random.default_rng(bins), 120, 3, 2.5)
    # Plus confidences on the edges of 4 bins (0.5, 0.75, 1) and a tie.
    edges = [[0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.0, 0.0, 1.0], [0.5, 0.25, 0.25]]
    probs = np.concatenate([probs, edges])
    labels = np.concatenate([labels, [1, 1, 2, 0]])
    diagram = uq.reliability_diagram(probs, labels, bins=bins)
    conf, pred = top(probs)
    hit = pred == labels
    where = np.array([ref_bin(c, bins) for c in conf])
    assert len(diagram) == bins
    for b, row in enumerate(diagram):
        assert row["lo"] == b / bins and row["hi"] == (b + 1) / bins
        inside = where == b
        assert row["count"] == int(inside.sum())
        if inside.any():
            assert row["confidence"] == pytest.approx(conf[inside].mean(), rel=1e-13)
            assert row["accuracy"] == pytest.approx(hit[inside].mean(), rel=1e-13)
        else:
            assert row["confidence"] is None and row["accuracy"] is None
    # Its bins weigh up to the ECE.
    total = sum(r["count"] / len(labels) * abs(r["accuracy"] - r["confidence"]) for r in diagram if r["count"])
    assert total == pytest.approx(ref_ece(probs, labels, bins), rel=1e-12)


def test_msp_uncertainty_and_mean_probs():
    _, members, _ = draw_members(np.random.default_rng(5), 3, 50, 4)
    mean = np.mean(members, axis=0)
    np.testing.assert_allclose(uq.mean_probs(members), mean, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(uq.mean_probs(members[0]), members[0])
    np.testing.assert_allclose(uq.msp_uncertainty(members), 1 - mean.max(axis=1), rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        uq.msp_uncertainty(members[1]), 1 - members[1].max(axis=1), rtol=0, atol=0
    )
