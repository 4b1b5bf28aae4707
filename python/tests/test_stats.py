"""Statistics over seeds against scipy.stats (t interval, ttest_rel, TOST) and statsmodels (Holm)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import uqformer as uq

# statrs' t quantiles and CDF agree with scipy to ~1e-12 relative; beyond 100 degrees of
# freedom the package uses Hill's expansion (error < 1e-10 relative).
RTOL = 1e-9


def ref_interval(values):
    x = np.asarray(values, dtype=float)
    n, mean, std = len(x), x.mean(), x.std(ddof=1)
    low, high = stats.t.interval(0.95, n - 1, loc=mean, scale=std / np.sqrt(n))
    return {"mean": mean, "std": std, "ci_low": low, "ci_high": high, "n": n}


def ref_detectable(std, n):
    return (stats.t.ppf(1 - 0.05 / 2, n - 1) + stats.t.ppf(0.8, n - 1)) * std / np.sqrt(n)


def ref_seeds_needed(std, margin):
    return next((n for n in range(2, 1001) if ref_detectable(std, n) <= margin), None)


def ref_paired_test(diffs, margin):
    d = np.asarray(diffs, dtype=float)
    n, mean, std = len(d), d.mean(), d.std(ddof=1)
    se = std / np.sqrt(n)
    p_low = stats.t.sf((mean + margin) / se, n - 1)  # H0: mean <= -margin
    p_high = stats.t.cdf((mean - margin) / se, n - 1)  # H0: mean >= +margin
    # TOST at 5% shows equivalence exactly when the 90% interval lies within +-margin.
    ci90_low, ci90_high = stats.t.interval(0.90, n - 1, loc=mean, scale=se)
    return {
        "p_difference": stats.ttest_rel(d, np.zeros(n)).pvalue,
        "p_equivalence": max(p_low, p_high),
        "ci90_low": ci90_low,
        "ci90_high": ci90_high,
        "detectable": ref_detectable(std, n),
        "seeds_needed": ref_seeds_needed(std, margin),
    }


def ref_decide(mean, p_diff, p_eq, higher_is_better):
    if math.isnan(p_diff) or math.isnan(p_eq):
        return "n/a"
    if p_eq < 0.05:
        return "equivalent"
    if p_diff < 0.05:
        return "better" if (mean > 0) == higher_is_better else "worse"
    return "inconclusive"


def ref_holm(p):
    p = np.asarray(p, dtype=float)
    out = np.full(len(p), np.nan)
    keep = ~np.isnan(p)
    if keep.any():
        out[keep] = multipletests(p[keep], method="holm")[1]
    return out


def assert_dict_close(got, ref):
    assert set(ref) <= set(got)
    for key, value in ref.items():
        if value is None or isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            assert got[key] == value, key
        else:
            assert got[key] == pytest.approx(value, rel=RTOL, abs=1e-15, nan_ok=True), key


@pytest.mark.parametrize("n", [2, 3, 5, 10, 30, 101, 150])
def test_mean_ci(n):
    values = np.random.default_rng(n).normal(0.8, 0.05, n)
    got = uq.mean_ci(values)
    assert set(got) == {"mean", "std", "ci_low", "ci_high", "n"}
    assert_dict_close(got, ref_interval(values))


def test_mean_ci_degenerate():
    one = uq.mean_ci([0.5])
    assert one["mean"] == 0.5 and one["n"] == 1
    assert all(math.isnan(one[k]) for k in ["std", "ci_low", "ci_high"])
    empty = uq.mean_ci([])
    assert empty["n"] == 0 and all(math.isnan(empty[k]) for k in ["mean", "std", "ci_low", "ci_high"])
    with_nan = uq.mean_ci([1.0, np.nan, 2.0])
    assert with_nan["n"] == 3 and all(math.isnan(with_nan[k]) for k in ["mean", "std", "ci_low", "ci_high"])
    flat = uq.mean_ci([0.3, 0.3, 0.3])
    assert (flat["std"], flat["ci_low"], flat["ci_high"]) == (0.0, 0.3, 0.3)


def test_paired_is_the_interval_of_differences():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.8, 0.02, 8), rng.normal(0.79, 0.02, 8)
    assert_dict_close(uq.paired(a, b), ref_interval(a - b))


@pytest.mark.parametrize("seed,n,shift,margin", [(0, 5, 0.0, 0.05), (1, 10, 0.02, 0.01), (2, 3, -0.1, 0.2), (3, 20, 0.001, 0.01), (4, 120, 0.003, 0.02)])
def test_paired_test(seed, n, shift, margin):
    diffs = np.random.default_rng(seed).normal(shift, 0.02, n)
    got = uq.paired_test(diffs, margin)
    ref = ref_paired_test(diffs, margin)
    assert set(got) == set(ref)
    assert_dict_close(got, ref)
    inside = -margin < got["ci90_low"] and got["ci90_high"] < margin
    assert inside == (got["p_equivalence"] < 0.05)
    # The difference p-value is also scipy's paired test of the two series.
    a = np.random.default_rng(99).normal(0.8, 0.05, n)
    assert got["p_difference"] == pytest.approx(stats.ttest_rel(a + diffs, a).pvalue, rel=1e-8)


def test_paired_test_degenerate():
    one = uq.paired_test([0.1], 0.05)
    assert all(
        math.isnan(one[k])
        for k in ["p_difference", "p_equivalence", "ci90_low", "ci90_high", "detectable"]
    )
    assert one["seeds_needed"] is None
    # Zero spread: decided by the mean alone.
    same = uq.paired_test([0.01, 0.01, 0.01], 0.05)
    assert (same["p_difference"], same["p_equivalence"], same["detectable"]) == (0.0, 0.0, 0.0)
    assert same["seeds_needed"] == 2
    zero = uq.paired_test([0.0, 0.0], 0.05)
    assert (zero["p_difference"], zero["p_equivalence"]) == (1.0, 0.0)
    outside = uq.paired_test([0.2, 0.2], 0.05)
    assert (outside["p_difference"], outside["p_equivalence"]) == (0.0, 1.0)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10, 50, 101, 102, 500, 1000])
def test_detectable_difference(n):
    assert uq.detectable_difference(0.013, n) == pytest.approx(ref_detectable(0.013, n), rel=RTOL)


def test_detectable_difference_below_two_seeds_is_nan():
    assert math.isnan(uq.detectable_difference(1.0, 1))
    assert math.isnan(uq.detectable_difference(1.0, 0))


@pytest.mark.parametrize("std,margin", [(0.01, 0.01), (0.02, 0.01), (0.005, 0.02), (0.1, 0.01), (1.0, 0.01), (0.0, 0.01), (0.03, 0.0031)])
def test_seeds_needed(std, margin):
    assert uq.seeds_needed(std, margin) == ref_seeds_needed(std, margin)


def test_seeds_needed_undefined_std():
    assert uq.seeds_needed(float("nan"), 0.01) is None


@pytest.mark.parametrize("p", [
    [0.01, 0.04, 0.03, 0.005],
    [0.5, 0.2, 0.9, 0.01, 0.02, 0.02],  # ties
    [0.01, np.nan, 0.04, 0.03],
    [np.nan, np.nan],
    [],
    [1.0, 0.0, 0.3],
])
def test_holm_against_statsmodels(p):
    got = uq.holm(p)
    np.testing.assert_allclose(got, ref_holm(p), rtol=1e-15, atol=0, equal_nan=True)


def test_holm_random():
    p = np.random.default_rng(0).random(40) ** 3
    np.testing.assert_allclose(uq.holm(p), ref_holm(p), rtol=1e-15, atol=0)


@pytest.mark.parametrize("mean,pd,pe,hib", [
    (0.1, 0.01, 0.5, True), (0.1, 0.01, 0.5, False), (-0.1, 0.01, 0.5, True),
    (-0.1, 0.01, 0.5, False), (0.01, 0.01, 0.01, True), (0.1, 0.2, 0.3, True),
    (0.1, 0.05, 0.5, True), (0.1, 0.5, 0.05, True), (0.1, np.nan, 0.01, True),
    (0.1, 0.01, np.nan, False), (0.1, 0.0499, 0.0501, False),
])
def test_decide(mean, pd, pe, hib):
    assert uq.decide(mean, pd, pe, hib) == ref_decide(mean, pd, pe, hib)


def test_verdicts_listed():
    from uqformer import stats as uq_stats

    assert set(uq_stats.VERDICTS) == {"better", "worse", "equivalent", "inconclusive", "n/a"}
    assert uq_stats.ALPHA == 0.05 and uq_stats.POWER == 0.8 and uq_stats.MAX_SEEDS == 1000


def test_compare():
    rng = np.random.default_rng(12)
    ref_values = rng.normal(0.80, 0.01, 6)
    method = ref_values + rng.normal(0.015, 0.004, 6)
    got = uq.compare(method, ref_values, margin=0.005, higher_is_better=True)
    expected = {**ref_interval(method - ref_values), **ref_paired_test(method - ref_values, 0.005)}
    assert_dict_close(got, expected)
    assert got["verdict"] == ref_decide(got["mean"], got["p_difference"], got["p_equivalence"], True)
    assert got["verdict"] == "better"
    assert uq.compare(method, ref_values, 0.005, higher_is_better=False)["verdict"] == "worse"
    assert uq.compare(ref_values, ref_values + 1e-4, 0.01, True)["verdict"] == "equivalent"


def test_compare_family():
    rng = np.random.default_rng(13)
    base = rng.normal(0.7, 0.02, 5)
    comparisons = [
        uq.compare(base + rng.normal(d, 0.01, 5), base, 0.01, hib)
        for d, hib in [(0.03, True), (0.0, True), (-0.02, False), (0.005, True)]
    ]
    hib = [True, True, False, True]
    got = uq.compare_family(comparisons, hib)
    family = [p for c in comparisons for p in (c["p_difference"], c["p_equivalence"])]
    adjusted = ref_holm(family).reshape(-1, 2)
    assert len(got) == 4
    for g, c, (pd, pe), h in zip(got, comparisons, adjusted, hib):
        assert {k: g[k] for k in c} == c  # the comparison itself is kept
        assert g["p_difference_holm"] == pytest.approx(pd, rel=1e-15)
        assert g["p_equivalence_holm"] == pytest.approx(pe, rel=1e-15)
        assert g["verdict_holm"] == ref_decide(c["mean"], pd, pe, h)
    assert uq.compare_family([], []) == []


def test_compare_family_keeps_undefined_comparisons_out_of_the_family():
    ok = uq.compare([0.9, 0.91, 0.92], [0.8, 0.8, 0.81], 0.01, True)
    single = uq.compare([0.9], [0.8], 0.01, True)  # one seed: NaN p-values
    got = uq.compare_family([ok, single], [True, True])
    expected = ref_holm([ok["p_difference"], ok["p_equivalence"], np.nan, np.nan])
    assert got[0]["p_difference_holm"] == pytest.approx(expected[0], rel=1e-15)
    assert got[0]["p_equivalence_holm"] == pytest.approx(expected[1], rel=1e-15)
    assert math.isnan(got[1]["p_difference_holm"]) and got[1]["verdict_holm"] == "n/a"


def ref_claim_p(gains, kind, margin):
    g = np.asarray(gains, dtype=float)
    above = lambda m: stats.ttest_1samp(g, m, alternative="greater").pvalue
    below = lambda m: stats.ttest_1samp(g, m, alternative="less").pvalue
    if kind == "non-inferior":
        return above(-margin)
    if kind == "superior":
        return above(margin)
    return max(above(-margin), below(margin))


def ref_claim_power(kind, mean, std, margin, n):
    crit = stats.t.ppf(0.95, n - 1)
    side = lambda d: stats.t.cdf(d * np.sqrt(n) / std - crit, n - 1)
    if kind == "non-inferior":
        return side(mean + margin)
    if kind == "superior":
        return side(mean - margin)
    return max(side(margin - mean) + side(margin + mean) - 1.0, 0.0)


@pytest.mark.parametrize("kind", ["non-inferior", "equivalent", "superior"])
@pytest.mark.parametrize("seed,n,shift,margin", [(0, 5, 0.01, 0.02), (1, 10, -0.005, 0.01), (2, 4, 0.03, 0.01)])
def test_claim_test(kind, seed, n, shift, margin):
    gains = np.random.default_rng(seed).normal(shift, 0.01, n)
    got = uq.claim_test(gains, kind, margin)
    assert set(got) == {"p", "ci90_low", "ci90_high", "seeds_needed"}
    assert got["p"] == pytest.approx(ref_claim_p(gains, kind, margin), rel=RTOL)
    mean, std = gains.mean(), gains.std(ddof=1)
    low, high = stats.t.interval(0.90, n - 1, loc=mean, scale=std / np.sqrt(n))
    assert (got["ci90_low"], got["ci90_high"]) == (pytest.approx(low, rel=RTOL), pytest.approx(high, rel=RTOL))
    # The verdict and the interval agree (a one-sided 5% test is the 90% interval's bound).
    shown = {"non-inferior": low > -margin, "superior": low > margin, "equivalent": -margin < low and high < margin}
    assert (got["p"] < 0.05) == shown[kind]
    want = next((m for m in range(2, uq.stats.MAX_SEEDS + 1) if ref_claim_power(kind, mean, std, margin, m) >= 0.8), None)
    assert got["seeds_needed"] == want


def test_claim_test_refuses_unknown_kinds_and_bad_margins():
    with pytest.raises(uq.UqformerError, match="kind.*non-inferior, equivalent, superior"):
        uq.claim_test([0.1, 0.2], "better", 0.1)
    with pytest.raises(uq.UqformerError, match="margin"):
        uq.claim_test([0.1, 0.2], "equivalent", 0.0)
    assert uq.claim_test([0.1, 0.2], "superior", 0.0)["p"] < 1.0


@pytest.mark.parametrize("seed,n,keep", [(0, 5, 0.8), (1, 10, 0.4), (2, 6, 1.1)])
def test_retained_share_is_fiellers_set(seed, n, keep):
    rng = np.random.default_rng(seed)
    y = rng.normal(0.05, 0.01, n)  # the reference's gain, clearly away from 0
    x = keep * y + rng.normal(0.0, 0.005, n)
    got = uq.retained_share(x, y)
    assert got["estimate"] == pytest.approx(x.mean() / y.mean(), rel=RTOL)
    s = got["set"]
    assert s["kind"] == "bounded"
    # Fieller's set is every ratio r at which the paired t-test of x - r y keeps 0 (scipy).
    keeps = lambda r: stats.ttest_1samp(x - r * y, 0.0).pvalue >= 0.05
    width = s["high"] - s["low"]
    assert keeps(s["low"] + 1e-6 * width) and keeps(s["high"] - 1e-6 * width)
    assert not keeps(s["low"] - 1e-6 * width) and not keeps(s["high"] + 1e-6 * width)
    assert s["low"] < got["estimate"] < s["high"]


def test_retained_share_of_a_gain_indistinguishable_from_zero_is_unbounded_or_outside():
    rng = np.random.default_rng(4)
    y = rng.normal(0.0, 0.01, 5)
    x = rng.normal(0.0, 0.01, 5)
    assert uq.retained_share(x, y)["set"]["kind"] in ("unbounded", "outside")
    with pytest.raises(uq.UqformerError, match="reference_gain"):
        uq.retained_share([0.1, 0.2], [0.1])
