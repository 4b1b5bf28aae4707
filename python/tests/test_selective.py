"""AURC and AUGRC: ranking by uncertainty, ties by expectation (brute force over orderings), and
AUGRC against torch-uncertainty's trapezoid value."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import draw

import uqformer as uq


def curve_areas(order, correct):
    """(AURC, AUGRC) of one ranking: errors among the k first, over k and over N."""
    errors = np.cumsum(~correct[np.asarray(order)])
    n = len(errors)
    return np.mean(errors / np.arange(1, n + 1)), np.mean(errors / n)


def brute_force(uncertainty, correct):
    """The mean of both areas over every ordering that ranks by uncertainty (every permutation
    inside each group of equal uncertainties)."""
    u = np.asarray(uncertainty, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    groups = [np.flatnonzero(u == v) for v in sorted(set(u.tolist()))]
    areas = [
        curve_areas(np.concatenate(combo), correct)
        for combo in itertools.product(*(itertools.permutations(g) for g in groups))
    ]
    return tuple(np.mean(areas, axis=0))


def test_hand_case_without_ties():
    u = [0.3, 0.1, 0.2]
    correct = [True, True, False]
    # Ranked: right, wrong, right -> errors 0, 1, 1.
    assert uq.aurc(u, correct) == pytest.approx((0 + 1 / 2 + 1 / 3) / 3, abs=1e-15)
    assert uq.augrc(u, correct) == pytest.approx(2 / 9, abs=1e-15)


def test_hand_tie_is_the_mean_over_orders():
    # Orders (right, wrong) and (wrong, right): AURC 0.25 and 0.75, AUGRC 0.25 and 0.5.
    assert uq.aurc([0.4, 0.4], [True, False]) == pytest.approx(0.5, abs=1e-15)
    assert uq.augrc([0.4, 0.4], [True, False]) == pytest.approx(0.375, abs=1e-15)
    # -0.0 and 0.0 are one tie.
    assert uq.aurc([-0.0, 0.0], [True, False]) == pytest.approx(0.5, abs=1e-15)
    assert uq.augrc([0.0, -0.0], [False, True]) == pytest.approx(0.375, abs=1e-15)


def test_perfect_and_worst_rankings():
    u = np.arange(10.0)
    correct = u < 6  # the 6 most confident right, then 4 wrong
    errors = np.maximum(0, np.arange(1, 11) - 6)
    assert uq.aurc(u, correct) == pytest.approx(np.mean(errors / np.arange(1, 11)), abs=1e-15)
    assert uq.augrc(u, correct) == pytest.approx(errors.sum() / 100, abs=1e-15)
    assert uq.aurc(u, np.ones(10, bool)) == 0.0
    assert uq.augrc(u, np.zeros(10, bool)) == pytest.approx(np.arange(1, 11).sum() / 100, abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_ties_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 8
    u = rng.integers(0, 3, n) / 2.0  # three levels: tie groups of ~3
    correct = rng.random(n) < 0.6
    aurc, augrc = brute_force(u, correct)
    assert uq.aurc(u, correct) == pytest.approx(aurc, rel=1e-13, abs=1e-15)
    assert uq.augrc(u, correct) == pytest.approx(augrc, rel=1e-13, abs=1e-15)
    # The value does not depend on the input order.
    perm = rng.permutation(n)
    assert uq.aurc(u[perm], correct[perm]) == pytest.approx(aurc, rel=1e-13, abs=1e-15)
    assert uq.augrc(u[perm], correct[perm]) == pytest.approx(augrc, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_random_without_ties(seed):
    rng = np.random.default_rng(100 + seed)
    n = 500
    u = rng.random(n)
    correct = rng.random(n) > u  # more uncertain, more often wrong
    aurc, augrc = curve_areas(np.argsort(u), correct)
    assert uq.aurc(u, correct) == pytest.approx(aurc, rel=1e-12)
    assert uq.augrc(u, correct) == pytest.approx(augrc, rel=1e-12)
    # 0 / 1 integers are accepted for `correct`.
    assert uq.aurc(u, correct.astype(int)) == pytest.approx(aurc, rel=1e-12)


def test_random_ranking_augrc_is_about_half_the_error_rate():
    rng = np.random.default_rng(9)
    n = 20000
    correct = rng.random(n) < 0.7
    value = uq.augrc(rng.random(n), correct)
    # Expected e (N + 1) / (2 N); a random ranking spreads it by sqrt(e (1 - e) / (12 N)) ~ 1e-3.
    assert value == pytest.approx((1 - correct.mean()) * (n + 1) / (2 * n), abs=6e-3)


def test_augrc_against_torch_uncertainty(tu_cases):
    for case in tu_cases:
        p, y = case["probs"], case["labels"]
        n = len(y)
        u = 1 - p.max(axis=1)
        wrong = p.argmax(axis=1) != y
        # torch-uncertainty: trapezoids from coverage 1/N, rescaled by N / (N - 1).
        g1 = float(wrong[np.argmin(u)]) / n
        g_n = wrong.mean()
        expected = ((n - 1) * case["augrc"] + (g1 + g_n) / 2) / n
        assert uq.augrc(u, ~wrong) == pytest.approx(expected, rel=1e-12), case["name"]
        assert uq.evaluate(p, y)["augrc"] == pytest.approx(expected, rel=1e-12)
        # The numpy reference satisfies the same relation (no ties in these cases).
        assert curve_areas(np.argsort(u), ~wrong)[1] == pytest.approx(expected, rel=1e-12)


def test_evaluate_ranks_by_msp():
    _, probs, labels = draw(np.random.default_rng(4), 400, 5, 1.3)
    correct = probs.argmax(1) == labels
    aurc, augrc = curve_areas(np.argsort(1 - probs.max(axis=1)), correct)
    report = uq.evaluate(probs, labels)
    assert report["aurc"] == pytest.approx(aurc, rel=1e-12)
    assert report["augrc"] == pytest.approx(augrc, rel=1e-12)
