#!/usr/bin/env python3
"""Reference values for uq-metrics' decisions over seeds (paired t-test, TOST equivalence,
Holm's adjustment, the detectable difference), from scipy and statsmodels, written
independently of the Rust code.

Writes crates/uq-metrics/tests/fixtures/decide.json, inputs included (drawn here with a fixed
numpy seed). Run by hand after changing a definition:
  pip install numpy scipy statsmodels && python3 scripts/decide_fixtures.py
"""

import json
from pathlib import Path

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower
from statsmodels.stats.weightstats import ttost_paired

OUT = Path(__file__).resolve().parent.parent / "crates/uq-metrics/tests/fixtures/decide.json"
ALPHA, POWER = 0.05, 0.8


def exact_power(delta, std, n):
    """Power of the two-sided paired t-test at ALPHA for a true mean difference delta."""
    df, nc = n - 1, delta * np.sqrt(n) / std
    crit = stats.t.ppf(1 - ALPHA / 2, df)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def paired_case(name, a, b, margin):
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    n, std = len(d), float(np.std(d, ddof=1))
    p_difference = float(stats.ttest_rel(a, b).pvalue)
    p_equivalence = float(ttost_paired(a, b, -margin, margin)[0])
    # The crate's approximation, with scipy's quantiles; and statsmodels' exact solve for
    # comparison (the power the approximation actually has).
    k = stats.t.ppf(1 - ALPHA / 2, n - 1) + stats.t.ppf(POWER, n - 1)
    detectable = float(k * std / np.sqrt(n))
    exact = float(TTestPower().solve_power(nobs=n, alpha=ALPHA, power=POWER) * std)
    needed = next((m for m in range(2, 1001)
                   if (stats.t.ppf(1 - ALPHA / 2, m - 1) + stats.t.ppf(POWER, m - 1))
                   * std / np.sqrt(m) <= margin), None)
    return {"name": name, "a": a.tolist(), "b": b.tolist(), "margin": margin,
            "p_difference": p_difference, "p_equivalence": p_equivalence,
            "detectable": detectable, "detectable_exact": exact,
            "power_at_detectable": exact_power(detectable, std, n), "seeds_needed": needed}


def paired_cases(rng):
    cases = []
    for name, (n, shift, spread, margin) in {
        "three_seeds_tie": (3, 0.002, 0.01, 0.005),
        "five_seeds_equivalent": (5, 0.0005, 0.001, 0.005),
        "ten_seeds_better": (10, 0.03, 0.01, 0.005),
        "ten_seeds_worse": (10, -0.02, 0.01, 0.01),
        "twenty_seeds_auroc": (20, 0.01, 0.08, 0.01),
        "two_seeds": (2, 0.01, 0.02, 0.02),
    }.items():
        b = 0.8 + 0.05 * rng.standard_normal(n)
        a = b + shift + spread * rng.standard_normal(n)
        cases.append(paired_case(name, a, b, margin))
    return cases


def holm_cases(rng):
    cases = []
    for name, p in {
        "spread": rng.uniform(0, 0.2, 12),
        "ties_and_ones": np.array([0.01, 0.01, 0.04, 0.5, 1.0, 0.002, 0.03]),
        "tiny": rng.uniform(0, 1e-4, 5),
        "one": np.array([0.03]),
    }.items():
        adjusted = multipletests(p, alpha=ALPHA, method="holm")[1]
        cases.append({"name": name, "p": p.tolist(), "adjusted": adjusted.tolist()})
    return cases


def main():
    rng = np.random.default_rng(20261203)
    fixture = {"paired": paired_cases(rng), "holm": holm_cases(rng)}
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
