"""Temperature scaling against scipy's bounded scalar minimiser and numpy softmax."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import draw, draw_members, softmax
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

import uqformer as uq

BOUNDS = (np.log(0.05), np.log(20.0))


def nll_single(z, y, t):
    """NLL of softmax(z / T), in log space."""
    return np.mean(logsumexp(z / t, axis=1) - z[np.arange(len(y)), y] / t)


def nll_ensemble(z, y, t):
    """NLL of the members' mean softmax(z_m / T)."""
    p = softmax(z / t).mean(axis=0)
    return np.mean(-np.log(p[np.arange(len(y)), y]))


def scipy_temperature(nll, z, y):
    res = minimize_scalar(
        lambda u: nll(z, y, np.exp(u)), bounds=BOUNDS, method="bounded", options={"xatol": 1e-10}
    )
    return float(np.exp(res.x))


@pytest.mark.parametrize("seed,beta", [(0, 3.0), (1, 0.4), (2, 1.0), (3, 8.0)])
def test_fit_temperature_single(seed, beta):
    z, _, y = draw(np.random.default_rng(seed), 500, 6, beta)
    t = uq.fit_temperature(z, y)
    t_ref = scipy_temperature(nll_single, z, y)
    # The NLL is flat at its minimum: both minimisers place T to ~1e-8 relative.
    assert t == pytest.approx(t_ref, rel=1e-6)
    # ... and the package's optimum is at least as good as scipy's.
    assert nll_single(z, y, t) <= nll_single(z, y, t_ref) + 1e-14
    assert nll_single(z, y, t) <= nll_single(z, y, 1.0)


def test_fit_temperature_recovers_the_overconfidence():
    # Logits 3 g with labels drawn from softmax(g): the NLL-optimal T tends to 3.
    z, _, y = draw(np.random.default_rng(17), 4000, 5, 3.0)
    assert uq.fit_temperature(z, y) == pytest.approx(3.0, rel=0.1)


@pytest.mark.parametrize("seed", [0, 1])
def test_fit_temperature_ensemble(seed):
    z, _, y = draw_members(np.random.default_rng(seed), 4, 300, 5, spread=2.0)
    t = uq.fit_temperature(z, y)
    t_ref = scipy_temperature(nll_ensemble, z, y)
    assert t == pytest.approx(t_ref, rel=1e-6)
    assert nll_ensemble(z, y, t) <= nll_ensemble(z, y, t_ref) + 1e-14
    # One member as [1, N, C] is the single model's temperature.
    assert uq.fit_temperature(z[:1], y) == uq.fit_temperature(z[0], y)
    # The ensemble's T is not the mean logits' T (the members are averaged after softmax).
    assert t != pytest.approx(scipy_temperature(nll_single, z.mean(0), y), rel=1e-3)


def test_fit_temperature_hits_the_bounds():
    c = 4
    y = np.arange(40) % c
    # Every prediction right by a margin of 1: sharper is always better. (A margin so large
    # that the NLL rounds to exactly 0 above T = 0.05 would make the objective flat there.)
    z = np.eye(c)[y]
    # Near the bound the NLL is ~1e-8 and its rounding ~1e-16: T is placed to ~1e-8.
    assert uq.fit_temperature(z, y) == pytest.approx(0.05, rel=1e-6)
    wrong = (y + 1) % c  # every prediction wrong: flatter is always better
    assert uq.fit_temperature(z, wrong) == pytest.approx(20.0, rel=1e-6)


def test_fit_temperature_flat_objective_keeps_one():
    z = np.tile([[0.7, 0.7, 0.7]], (10, 1))  # softmax is uniform at every T
    assert uq.fit_temperature(z, np.arange(10) % 3) == 1.0


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5])
def test_temperature_scale(t):
    z, _, _ = draw(np.random.default_rng(4), 100, 7, 2.0)
    p = uq.temperature_scale(z, t)
    np.testing.assert_allclose(p, softmax(z / t), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(p.argmax(1), z.argmax(1))  # it never moves the argmax


def test_temperature_scale_members_and_large_logits():
    z, _, _ = draw_members(np.random.default_rng(6), 3, 80, 4)
    np.testing.assert_allclose(
        uq.temperature_scale(z, 1.7), softmax(z / 1.7).mean(axis=0), rtol=0, atol=1e-15
    )
    # Huge logits do not overflow.
    p = uq.temperature_scale([[1000.0, 999.0, -1000.0]], 1.0)
    e = np.exp(-1.0)
    np.testing.assert_allclose(p, [[1 / (1 + e), e / (1 + e), 0.0]], rtol=1e-15, atol=1e-300)
