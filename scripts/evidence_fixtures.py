#!/usr/bin/env python3
"""Reference values for uq-metrics' diversity, temperature scaling, statistics over seeds and
split conformal prediction, from numpy and scipy, written independently of the Rust code.

Writes crates/uq-metrics/tests/fixtures/evidence.json, inputs included (drawn here with a fixed
numpy seed), so the Rust tests read the same data. Run by hand after changing a definition:
  pip install numpy scipy && python3 scripts/evidence_fixtures.py
Floats are written with repr, so they round-trip exactly; +inf thresholds are written as null.
"""

import itertools
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import optimize, special, stats

OUT = Path(__file__).resolve().parent.parent / "crates/uq-metrics/tests/fixtures/evidence.json"
EPS = np.finfo(np.float64).eps  # the crate's NLL_EPS


# ------------------------------------------------------------------------------ diversity
def diversity_case(name, members, labels):
    members = np.asarray(members, dtype=float)
    m, n, c = members.shape
    votes = members.argmax(axis=2)  # first maximum on ties
    pairs = list(itertools.combinations(range(m), 2))
    disagreement = np.mean([votes[a] != votes[b] for a, b in pairs])
    mean = members.mean(axis=0)
    mi = np.maximum(special.entr(mean).sum(axis=1) - special.entr(members).sum(axis=2).mean(axis=0), 0)
    logs = np.log(np.maximum(members, EPS))
    kl = [np.sum(members[a] * (logs[a] - logs[b]), axis=1)
          for a in range(m) for b in range(m) if a != b]
    if members.min() > EPS:  # without clipping, the same as scipy's relative entropy
        unclipped = [special.rel_entr(members[a], members[b]).sum(axis=1)
                     for a in range(m) for b in range(m) if a != b]
        assert np.allclose(kl, unclipped, rtol=0, atol=1e-12)
    expected = {
        "disagreement": float(disagreement),
        "mutual_info": float(mi.mean()),
        "pairwise_kl": float(np.mean(kl)),
        "ensemble_gain": None,
        "member_accuracy": None,
    }
    if labels is not None:
        labels = np.asarray(labels)
        member_acc = float(np.mean([(votes[k] == labels).mean() for k in range(m)]))
        expected["member_accuracy"] = member_acc
        expected["ensemble_gain"] = float((mean.argmax(axis=1) == labels).mean()) - member_acc
        labels = labels.tolist()
    return {"name": name, "m": m, "n": n, "c": c, "members": members.ravel().tolist(),
            "labels": labels, "expected": expected}


def diversity_cases(rng):
    cases = []
    for name, (m, n, c, scale, labelled) in {
        "m5_c4": (5, 30, 4, 2.0, True),
        "m2_c3": (2, 20, 3, 1.0, True),
        "m4_c10_unlabelled": (4, 15, 10, 3.0, False),
    }.items():
        members = special.softmax(rng.normal(0, scale, (m, n, c)), axis=2)
        labels = rng.integers(0, c, n) if labelled else None
        cases.append(diversity_case(name, members, labels))
    # One-hot members (KL clipped at eps), argmax ties, a member identical to another.
    members = [
        [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.0, 0.0, 1.0]],
        [[0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.0, 0.5, 0.5]],
        [[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.6, 0.3, 0.1], [0.0, 0.0, 1.0]],
    ]
    cases.append(diversity_case("one_hot_and_ties", members, [0, 1, 2, 2]))
    return cases


# --------------------------------------------------------------------- temperature scaling
def nll_at_log_t(logits, labels, u):
    z = logits / math.exp(u)
    return float(np.mean(special.logsumexp(z, axis=1) - z[np.arange(len(z)), labels]))


def temperature_case(name, logits, labels):
    lo, hi = math.log(0.05), math.log(20.0)
    res = optimize.minimize_scalar(lambda u: nll_at_log_t(logits, labels, u), bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-12})
    # The objective is unimodal in ln T; a fine grid confirms scipy found the minimum.
    grid = np.linspace(lo, hi, 4001)
    best = grid[np.argmin([nll_at_log_t(logits, labels, u) for u in grid])]
    assert abs(best - res.x) < 2 * (hi - lo) / 4000, (name, best, res.x)
    n, c = logits.shape
    return {"name": name, "n": n, "c": c, "logits": logits.ravel().tolist(),
            "labels": labels.tolist(), "temperature": math.exp(res.x),
            "nll": nll_at_log_t(logits, labels, res.x)}


def temperature_cases(rng):
    cases = []
    for name, (n, c, scale, t0) in {
        "overconfident_t2": (80, 5, 4.0, 2.0),
        "underconfident_t04": (60, 4, 1.0, 0.4),
        "binary_n15": (15, 2, 2.0, 1.3),
    }.items():
        logits = rng.normal(0, scale, (n, c))
        p = special.softmax(logits / t0, axis=1)
        labels = np.array([rng.choice(c, p=row) for row in p])
        cases.append(temperature_case(name, logits, labels))
    return cases


# ------------------------------------------------------------------------ statistics over seeds
def stats_fixture(rng):
    dfs = list(range(1, 41)) + [45, 50, 60, 80, 100, 120, 200, 500, 1000, 10000, 1000000]
    t_975 = [{"df": df, "value": float(stats.t.ppf(0.975, df))} for df in dfs]
    intervals = []
    for n in [2, 3, 5, 10, 31, 45]:
        x = rng.normal(0.8, 0.05, n)
        mean, std = float(np.mean(x)), float(np.std(x, ddof=1))
        low, high = stats.t.interval(0.95, n - 1, loc=mean, scale=std / math.sqrt(n))
        intervals.append({"values": x.tolist(), "mean": mean, "std": std,
                          "ci_low": float(low), "ci_high": float(high)})
    paired = []
    for n in [3, 8, 40]:
        base = rng.normal(0.7, 0.1, n)  # seed effect shared by both methods
        a, b = base + rng.normal(0.02, 0.01, n), base + rng.normal(0.0, 0.01, n)
        ci = stats.ttest_rel(a, b).confidence_interval(0.95)
        d = a - b
        paired.append({"a": a.tolist(), "b": b.tolist(), "mean": float(d.mean()),
                       "std": float(d.std(ddof=1)), "ci_low": float(ci.low),
                       "ci_high": float(ci.high)})
    return {"t_975": t_975, "intervals": intervals, "paired": paired}


# ---------------------------------------------------------------------- conformal prediction
def class_scores(probs, score):
    """s(x, c) for every sample and class."""
    if score == "thr":
        return 1.0 - probs
    order = np.argsort(-probs, axis=1, kind="stable")  # descending, ties by class index
    cums = np.cumsum(np.take_along_axis(probs, order, axis=1), axis=1)
    ranks = np.argsort(order, axis=1)
    return np.take_along_axis(cums, ranks, axis=1)


def threshold(cal_scores, alpha):
    n = len(cal_scores)
    k = math.ceil((n + 1) * (1 - Fraction(repr(alpha))))  # exact in the decimal alpha
    return float(np.sort(cal_scores)[k - 1]) if k <= n else math.inf


def conformal_case(name, cal, cal_labels, test, test_labels, alphas):
    runs = []
    for score in ["thr", "aps"]:
        cal_scores = class_scores(cal, score)[np.arange(len(cal)), cal_labels]
        test_scores = class_scores(test, score)
        for alpha in alphas:
            q = threshold(cal_scores, alpha)
            member = test_scores <= q
            sets = [np.flatnonzero(row).tolist() for row in member]
            runs.append({
                "score": score, "alpha": alpha, "threshold": None if math.isinf(q) else q,
                "coverage": float(member[np.arange(len(test)), test_labels].mean()),
                "set_size": float(member.sum(axis=1).mean()), "sets": sets,
            })
    c = cal.shape[1]
    return {"name": name, "c": c, "cal": cal.ravel().tolist(), "cal_labels": cal_labels.tolist(),
            "test": test.ravel().tolist(), "test_labels": test_labels.tolist(), "runs": runs}


def sample_labels(rng, probs):
    return np.array([rng.choice(probs.shape[1], p=row) for row in probs])


def conformal_cases(rng):
    cases = []
    probs = rng.dirichlet(np.full(5, 0.5), size=55)
    labels = sample_labels(rng, probs)
    cal, test = probs[:30], probs[30:].copy()
    test[:4] = cal[:4]  # test rows equal to calibration rows: scores tie with the threshold
    test_labels = labels[30:].copy()
    test_labels[:4] = labels[:4]
    # n = 30: alpha 0.02 needs k = 31 > n, so sets are full.
    cases.append(conformal_case("dirichlet_c5", cal, labels[:30], test, test_labels,
                                [0.05, 0.1, 0.2, 0.02]))
    # n = 9, alpha 0.7: (n + 1)(1 - alpha) = 3 exactly, 3.0000000000000004 in float64.
    probs = rng.dirichlet(np.full(3, 1.0), size=20)
    labels = sample_labels(rng, probs)
    cases.append(conformal_case("n9_c3_integer_rank", probs[:9], labels[:9], probs[9:],
                                labels[9:], [0.7, 0.5, 0.3]))
    # Rows with tied and zero probabilities (APS ranks ties by class index).
    tied = np.array([[0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], [0.4, 0.2, 0.2, 0.2],
                     [0.1, 0.3, 0.3, 0.3], [0.0, 1.0, 0.0, 0.0], [0.6, 0.2, 0.2, 0.0],
                     [0.3, 0.3, 0.4, 0.0], [0.5, 0.25, 0.25, 0.0]])
    tied_labels = np.array([2, 1, 0, 3, 1, 2, 1, 0])
    cases.append(conformal_case("ties_and_zeros", tied, tied_labels, tied[::-1].copy(),
                                tied_labels[::-1].copy(), [0.2, 0.5, 0.7]))
    return cases


def main():
    rng = np.random.default_rng(20250301)
    fixture = {
        "generator": "scripts/evidence_fixtures.py",
        "versions": {"numpy": np.__version__, "scipy": __import__("scipy").__version__},
        "diversity": diversity_cases(rng),
        "temperature": temperature_cases(rng),
        "stats": stats_fixture(rng),
        "conformal": conformal_cases(rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
