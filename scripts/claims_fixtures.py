#!/usr/bin/env python3
"""Reference values for uq-metrics' declared claims (one-sided paired t-tests for
non-inferiority and superiority, TOST with its 90% interval, the seeds each test needs at 80%
power, Fieller's interval for the share of a gain kept), from scipy and statsmodels, written
independently of the Rust code.

Writes crates/uq-metrics/tests/fixtures/claims.json, inputs included (drawn here with a fixed
numpy seed). Run by hand after changing a definition:
  pip install numpy scipy statsmodels && python3 scripts/claims_fixtures.py
"""

import json
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, stats
from statsmodels.stats.power import TTestPower
from statsmodels.stats.weightstats import DescrStatsW, ttost_paired

OUT = Path(__file__).resolve().parent.parent / "crates/uq-metrics/tests/fixtures/claims.json"
ALPHA, POWER, MAX_SEEDS = 0.05, 0.8, 1000


def one_sided_p(gains, bound):
    """p of "the mean gain is at most `bound`" against "above it" (scipy's one-sided t)."""
    return float(stats.ttest_1samp(gains, bound, alternative="greater").pvalue)


def approx_power(kind, mean, std, margin, n):
    """The shifted central-t approximation the crate documents, with scipy's t."""
    crit = stats.t.ppf(1 - ALPHA, n - 1)
    side = lambda d: stats.t.cdf(d * np.sqrt(n) / std - crit, n - 1)
    if kind == "non-inferior":
        return side(mean + margin)
    if kind == "superior":
        return side(mean - margin)
    return max(side(margin - mean) + side(margin + mean) - 1, 0.0)


def approx_seeds(kind, mean, std, margin):
    return next((n for n in range(2, MAX_SEEDS + 1)
                 if approx_power(kind, mean, std, margin, n) >= POWER), None)


def exact_power(kind, mean, std, margin, n):
    """The tests' exact power: the noncentral t for one side; for TOST, the probability that
    the 90% interval lies within ± margin, integrated over the sample standard deviation's
    (scaled chi) distribution."""
    df, crit = n - 1, stats.t.ppf(1 - ALPHA, n - 1)
    if kind != "equivalent":
        shift = mean + margin if kind == "non-inferior" else mean - margin
        return float(stats.nct.sf(crit, df, shift * np.sqrt(n) / std))
    se = std / np.sqrt(n)

    def given_s(s):
        half = margin - crit * s / np.sqrt(n)
        if half <= 0:
            return 0.0
        inside = stats.norm.cdf((half - mean) / se) - stats.norm.cdf((-half - mean) / se)
        return inside * stats.chi.pdf(s * np.sqrt(df) / std, df) * np.sqrt(df) / std

    return float(integrate.quad(given_s, 0, margin * np.sqrt(n) / crit, limit=200)[0])


def claim_case(name, kind, a, b, margin):
    a, b = np.asarray(a, float), np.asarray(b, float)
    gains = a - b
    n, mean, std = len(gains), float(gains.mean()), float(gains.std(ddof=1))
    if kind == "non-inferior":
        p = one_sided_p(gains, -margin)
    elif kind == "superior":
        p = one_sided_p(gains, margin)
    else:
        p = float(ttost_paired(a, b, -margin, margin)[0])
    low, high = DescrStatsW(gains).tconfint_mean(alpha=2 * ALPHA)
    seeds = approx_seeds(kind, mean, std, margin)
    case = {"name": name, "kind": kind, "a": a.tolist(), "b": b.tolist(), "margin": margin,
            "p": p, "ci90_low": float(low), "ci90_high": float(high), "seeds_needed": seeds,
            "exact_power_at_seeds": exact_power(kind, mean, std, margin, seeds) if seeds else None}
    if kind != "equivalent" and seeds:
        # statsmodels' exact solve (noncentral t), for how far the approximation lands.
        shift = mean + margin if kind == "non-inferior" else mean - margin
        case["seeds_exact"] = float(TTestPower().solve_power(
            effect_size=shift / std, alpha=ALPHA, power=POWER, alternative="larger"))
    return case


def claim_cases(rng):
    cases = []
    for name, (kind, n, shift, spread, margin) in {
        "non_inferior_shown": ("non-inferior", 10, 0.001, 0.004, 0.005),
        "non_inferior_close": ("non-inferior", 5, -0.004, 0.005, 0.005),
        "non_inferior_worse": ("non-inferior", 5, -0.02, 0.005, 0.005),
        "superior_at_zero": ("superior", 8, 0.01, 0.01, 0.0),
        "superior_at_margin": ("superior", 10, 0.03, 0.01, 0.01),
        "equivalent_shown": ("equivalent", 10, 0.0005, 0.002, 0.005),
        "equivalent_ten_seeds": ("equivalent", 10, 0.0, 0.006, 0.005),
        "equivalent_near_margin": ("equivalent", 5, 0.0035, 0.003, 0.005),
        "equivalent_noisy": ("equivalent", 5, 0.001, 0.012, 0.005),
        "equivalent_three_seeds": ("equivalent", 3, -0.002, 0.01, 0.02),
    }.items():
        b = 0.8 + 0.05 * rng.standard_normal(n)
        a = b + shift + spread * rng.standard_normal(n)
        cases.append(claim_case(name, kind, a, b, margin))
    return cases


def fieller_by_inversion(x, y):
    """Fieller's set as the ratios rho whose paired t-test of x - rho y keeps 0 at 95%,
    found by root-finding on scipy's p-value (not by Fieller's quadratic)."""
    keeps = lambda rho: stats.ttest_1samp(x - rho * y, 0).pvalue - ALPHA
    est = x.mean() / y.mean()
    far = 1e6
    if keeps(est) < 0:
        return {"kind": "undefined"}
    if keeps(far) < 0 and keeps(-far) < 0:
        return {"kind": "bounded", "low": optimize.brentq(keeps, -far, est, xtol=1e-14),
                "high": optimize.brentq(keeps, est, far, xtol=1e-14)}
    # The set reaches infinity: find where it is cut, if anywhere, on a fine grid.
    grid = np.linspace(-1e3, 1e3, 400001)
    out = stats.ttest_1samp(x[None, :] - grid[:, None] * y[None, :], 0, axis=1).pvalue < ALPHA
    if not out.any():
        return {"kind": "unbounded"}
    i, j = np.flatnonzero(out)[[0, -1]]
    return {"kind": "outside", "low": optimize.brentq(keeps, grid[i - 1], grid[i], xtol=1e-14),
            "high": optimize.brentq(keeps, grid[j], grid[j + 1], xtol=1e-14)}


def ratio_cases(rng):
    cases = []
    for name, (n, kept, gain, spread, offset) in {
        "clear_gain_half_kept": (10, 0.5, 0.02, 0.004, 0.0),
        "five_seeds_most_kept": (5, 0.9, 0.01, 0.003, 0.0),
        "gain_near_zero": (5, 0.5, 0.001, 0.004, 0.0),
        "gain_near_zero_method_gains": (6, 0.5, 0.001, 0.004, 0.02),
        "nothing_shown": (3, 0.0, 0.0005, 0.01, 0.0),
    }.items():
        y = gain + spread * rng.standard_normal(n)
        x = offset + kept * y + spread * rng.standard_normal(n)
        cases.append({"name": name, "x": x.tolist(), "y": y.tolist(),
                      "estimate": float(x.mean() / y.mean()), **fieller_by_inversion(x, y)})
    return cases


def main():
    rng = np.random.default_rng(20261206)
    fixture = {"claims": claim_cases(rng), "ratios": ratio_cases(rng)}
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT}")
    for c in fixture["claims"]:
        print(c["name"], c["p"], c["seeds_needed"], c.get("exact_power_at_seeds"),
              c.get("seeds_exact"))
    for c in fixture["ratios"]:
        print(c["name"], c["estimate"], c["kind"], c.get("low"), c.get("high"))


if __name__ == "__main__":
    main()
