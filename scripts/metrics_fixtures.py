#!/usr/bin/env python3
"""Reference values for the uq-metrics crate, from scikit-learn (and numpy/scipy where
scikit-learn has no function).

Writes crates/uq-metrics/tests/fixtures/sklearn.json. Run by hand after changing a metric's
definition:  pip install scikit-learn numpy && python3 scripts/metrics_fixtures.py
Floats are written with repr, so they round-trip exactly.
"""

import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.special import entr, logsumexp, softmax
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    log_loss,
    roc_auc_score,
    roc_curve,
)

OUT = Path(__file__).resolve().parent.parent / "crates/uq-metrics/tests/fixtures/sklearn.json"


# ---------------------------------------------------------------- OOD (OOD = positive class)
def ood_reference(id_scores, ood_scores):
    """AUROC, AUPR-In, AUPR-Out and FPR95 as scikit-learn defines them."""
    s = np.concatenate([id_scores, ood_scores])
    y = np.concatenate([np.zeros(len(id_scores)), np.ones(len(ood_scores))])
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    return {
        "auroc": roc_auc_score(y, s),
        "aupr_in": average_precision_score(1 - y, -s),
        "aupr_out": average_precision_score(y, s),
        "fpr95": fpr[np.argmax(tpr >= 0.95)],
    }


# ------------------------------------------------------------- classification and calibration
def top_label(probs, labels):
    pred = np.argmax(probs, axis=1)
    return probs[np.arange(len(probs)), pred], (pred == labels).astype(float)


def reliability(probs, labels, bins):
    conf, correct = top_label(probs, labels)
    # Bin rule of the crate: ceil(c * B) - 1 clamped to [0, B - 1], i.e. bins (lo, hi].
    idx = np.clip(np.ceil(conf * bins).astype(np.int64) - 1, 0, bins - 1)
    out = []
    for b in range(bins):
        mask = idx == b
        count = int(mask.sum())
        out.append({
            "lo": b / bins,
            "hi": (b + 1) / bins,
            "count": count,
            "confidence": float(conf[mask].mean()) if count else None,
            "accuracy": float(correct[mask].mean()) if count else None,
        })
    return out


def ece(probs, labels, bins):
    n = len(labels)
    return sum(b["count"] / n * abs(b["accuracy"] - b["confidence"])
               for b in reliability(probs, labels, bins) if b["count"])


def adaptive_ece(probs, labels, bins):
    conf, correct = top_label(probs, labels)
    order = np.argsort(conf, kind="stable")  # ties keep input order
    n = len(labels)
    total = 0.0
    for b in range(bins):
        members = order[(b * n) // bins:((b + 1) * n) // bins]
        if len(members):
            total += len(members) / n * abs(correct[members].mean() - conf[members].mean())
    return total


def classwise_ece(probs, labels, bins):
    """Mean over classes k of the ECE of the forecast p[:, k] against [y == k], in the crate's
    bins (lo, hi] (p = 0 in the first)."""
    n, c = probs.shape
    total = 0.0
    for k in range(c):
        p, hit = probs[:, k], (labels == k).astype(float)
        idx = np.clip(np.ceil(p * bins).astype(np.int64) - 1, 0, bins - 1)
        total += sum(abs(hit[idx == b].sum() - p[idx == b].sum()) / n for b in range(bins))
    return total / c


def augrc(uncertainty, correct):
    """Mean over k of (errors among the k least uncertain samples) / N, ties spread evenly as
    in aurc below: the area under the generalized risk-coverage curve."""
    u = np.asarray(uncertainty, dtype=float) + 0.0
    err = 1.0 - np.asarray(correct, dtype=float)
    n = len(u)
    order = np.argsort(u, kind="stable")
    values = u[order]
    total = 0.0
    for k in range(1, n + 1):
        v = values[k - 1]
        before, group = u < v, u == v
        total += (err[before].sum() + (k - before.sum()) * err[group].mean()) / n
    return total / n


def aurc(uncertainty, correct):
    """Mean over k of the error rate among the k least uncertain samples; within a group of
    equal uncertainty the errors are spread evenly (expectation over the group's orders)."""
    u = np.asarray(uncertainty, dtype=float) + 0.0
    err = 1.0 - np.asarray(correct, dtype=float)
    n = len(u)
    values = np.unique(u)  # ascending
    risks = []
    for k in range(1, n + 1):
        # The group that position k falls in: the smallest value with >= k samples at or below.
        below_or_at = np.array([(u <= v).sum() for v in values])
        v = values[np.argmax(below_or_at >= k)]
        before = u < v
        group = u == v
        errors = err[before].sum() + (k - before.sum()) * err[group].mean()
        risks.append(errors / k)
    return float(np.mean(risks))


def classification_case(name, probs, labels, bins=15, adaptive_bins=15):
    probs = np.asarray(probs, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)
    n, c = probs.shape
    conf, correct = top_label(probs, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # f32-saved rows do not sum to 1 within sqrt(eps)
        nll = log_loss(labels, probs, labels=np.arange(c))
    onehot = np.eye(c)[labels]
    return {
        "name": name,
        "n": n,
        "c": c,
        "probs": probs.ravel().tolist(),
        "labels": labels.tolist(),
        "bins": bins,
        "adaptive_bins": adaptive_bins,
        "expected": {
            "accuracy": accuracy_score(labels, np.argmax(probs, axis=1)),
            "nll": nll,
            "brier": float(np.mean(np.sum((probs - onehot) ** 2, axis=1))),
            "ece": ece(probs, labels, bins),
            "aece": adaptive_ece(probs, labels, adaptive_bins),
            "classwise_ece": classwise_ece(probs, labels, bins),
            "aurc": aurc(1.0 - conf, correct),
            "augrc": augrc(1.0 - conf, correct),
            "reliability": reliability(probs, labels, bins),
        },
    }


# -------------------------------------------------------------------------------- scores
def scores_case(name, members, logits):
    members = np.asarray(members, dtype=float)
    logits = np.asarray(logits, dtype=float)
    m, n, c = members.shape
    mean = members.mean(axis=0)
    expected = {
        "msp": 1.0 - mean.max(axis=1),
        "entropy": entr(mean).sum(axis=1),
        "mutual_info": np.maximum(entr(mean).sum(axis=1) - entr(members).sum(axis=2).mean(axis=0), 0.0),
        "max_logit": -logits.max(axis=1),
        "energy": -logsumexp(logits, axis=1),
        "member_variance": members.var(axis=0).sum(axis=1),
        "disagreement": None,  # undefined for one member: the crate must refuse
    }
    if m >= 2:
        votes = members.argmax(axis=2)
        pairs = list(itertools.combinations(range(m), 2))
        expected["disagreement"] = np.mean([votes[a] != votes[b] for a, b in pairs], axis=0)
    return {
        "name": name,
        "m": m,
        "n": n,
        "c": c,
        "members": members.ravel().tolist(),
        "logits": logits.ravel().tolist(),
        "expected": {k: (None if v is None else np.asarray(v, dtype=float).tolist())
                     for k, v in expected.items()},
    }


# ---------------------------------------------------------------------------------- cases
def ood_cases(rng):
    cases = {}
    cases["random_normal"] = (rng.normal(0, 1, 100), rng.normal(1, 1, 80))
    cases["heavy_ties_integers"] = (rng.integers(0, 4, 60).astype(float),
                                    rng.integers(1, 5, 50).astype(float))
    cases["constant_scores"] = (np.full(7, 0.3), np.full(5, 0.3))
    cases["perfect_separation"] = (rng.uniform(0, 1, 30), rng.uniform(2, 3, 20))
    cases["inverted_separation"] = (rng.uniform(2, 3, 30), rng.uniform(0, 1, 20))
    cases["tiny_1_1"] = (np.array([0.2]), np.array([0.7]))
    cases["tiny_1_1_tied"] = (np.array([0.5]), np.array([0.5]))
    cases["tiny_2_1"] = (np.array([0.1, 0.9]), np.array([0.5]))
    cases["tiny_1_2"] = (np.array([0.4]), np.array([0.4, 0.1]))
    cases["imbalanced_many_id"] = (rng.normal(0, 1, 1000), rng.normal(1.5, 1, 10))
    cases["imbalanced_many_ood"] = (rng.normal(0, 1, 10), rng.normal(0.5, 1, 1000))
    # 20 OOD: TPR reaches 0.95 exactly at the 19th; ID ties sit on that threshold.
    ood = np.arange(20, dtype=float)[::-1] + 10.0
    cases["tpr_exactly_095_with_ties"] = (np.array([11.0, 11.0, 11.0, 10.0, 9.0, 30.0, 5.0]), ood)
    cases["signed_zeros_and_negatives"] = (np.array([-0.0, 0.0, -1.5, 2.0, -0.0, 0.25]),
                                           np.array([0.0, -0.0, 3.0, -2.0, 0.25]))
    cases["f32_rounded_ties"] = (rng.uniform(0, 1, 300).astype(np.float32).round(2).astype(float),
                                 rng.uniform(0.2, 1.2, 200).astype(np.float32).round(2).astype(float))
    cases["large_magnitudes"] = (rng.normal(0, 1e6, 50), rng.normal(5e5, 1e6, 40))
    return [{"name": name, "id": i.tolist(), "ood": o.tolist(), "expected": ood_reference(i, o)}
            for name, (i, o) in cases.items()]


def dirichlet_probs(rng, n, c, concentration):
    return rng.dirichlet(np.full(c, concentration), size=n)


def calibrated_labels(rng, probs):
    return np.array([rng.choice(len(p), p=p) for p in probs])


def classification_cases(rng):
    cases = []
    p = dirichlet_probs(rng, 200, 10, 0.3)
    cases.append(classification_case("random_c10_calibrated", p, calibrated_labels(rng, p)))
    p = dirichlet_probs(rng, 50, 2, 1.0)
    cases.append(classification_case("random_c2_uniform_labels", p, rng.integers(0, 2, 50)))
    p = dirichlet_probs(rng, 7, 3, 0.5)
    cases.append(classification_case("tiny_c3_n7_bins5", p, rng.integers(0, 3, 7), bins=5,
                                     adaptive_bins=3))
    p = dirichlet_probs(rng, 80, 100, 0.05)
    cases.append(classification_case("c100_peaked", p, calibrated_labels(rng, p), bins=10,
                                     adaptive_bins=20))
    # Top-label confidences exactly on bin edges (exact in binary for 4 bins; inexact for 15).
    edges = np.array([
        [0.25, 0.25, 0.25, 0.25], [0.5, 0.25, 0.25, 0.0], [0.75, 0.25, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0],
        [0.4, 0.2, 0.2, 0.2], [0.6, 0.2, 0.1, 0.1], [0.8, 0.1, 0.05, 0.05],
        [0.2 + 0.1, 0.7 - 0.1, 0.1, 0.0],
    ])
    edge_labels = [0, 0, 1, 0, 1, 1, 0, 2, 0, 1]
    cases.append(classification_case("bin_edges_4_bins", edges, edge_labels, bins=4, adaptive_bins=4))
    cases.append(classification_case("bin_edges_15_bins", edges, edge_labels))
    cases.append(classification_case("bin_edges_5_bins", edges, edge_labels, bins=5, adaptive_bins=5))
    # Many identical rows with mixed correctness: AECE splits ties by input order, AURC by expectation.
    tied = np.tile([[0.7, 0.2, 0.1]], (12, 1))
    tied = np.vstack([tied, np.tile([[0.1, 0.5, 0.4]], (5, 1))])
    tied_labels = [0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 0, 0, 1, 1, 2, 0, 1]
    cases.append(classification_case("tied_confidences", tied, tied_labels, bins=10, adaptive_bins=4))
    cases.append(classification_case("tiny_n2", [[0.9, 0.1], [0.3, 0.7]], [0, 0]))
    cases.append(classification_case("tiny_n1", [[0.2, 0.3, 0.5]], [2], bins=3, adaptive_bins=1))
    # True-class probability 0 and 1: NLL clipping at float64 eps on both ends.
    cases.append(classification_case("nll_clipping", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0],
                                                       [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]],
                                     [0, 2, 2, 1], bins=15, adaptive_bins=2))
    # Softmax saved as float32, widened to float64: rows sum to 1 only within ~1e-7.
    logits = rng.normal(0, 3, (40, 5))
    p32 = softmax(logits.astype(np.float32), axis=1).astype(np.float32).astype(float)
    cases.append(classification_case("f32_softmax", p32, rng.integers(0, 5, 40), bins=8))
    p = dirichlet_probs(rng, 60, 4, 2.0)
    cases.append(classification_case("one_label_for_all", p, np.full(60, 3), bins=1,
                                     adaptive_bins=1))
    p = dirichlet_probs(rng, 33, 6, 0.2)
    cases.append(classification_case("overconfident_random_labels", p, rng.integers(0, 6, 33),
                                     bins=20, adaptive_bins=7))
    return cases


def scores_cases(rng):
    cases = []
    for name, (m, n, c, scale) in {
        "ensemble_m5": (5, 12, 4, 2.0),
        "ensemble_m2": (2, 9, 3, 1.0),
        "ensemble_m3_c10": (3, 15, 10, 4.0),
        "single_member": (1, 6, 3, 1.5),
    }.items():
        member_logits = rng.normal(0, scale, (m, n, c))
        cases.append(scores_case(name, softmax(member_logits, axis=2), member_logits.mean(axis=0)))
    # One-hot members (entropy 0 ln 0), members all agreeing, huge logits (stable logsumexp).
    onehot = np.array([
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]],
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.0, 0.5]],
        [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]],
    ])
    cases.append(scores_case("one_hot_and_ties", onehot,
                             [[1000.0, 999.0, -1000.0], [-5.0, -5.0, -5.0], [0.0, 1e-3, -700.0]]))
    return cases


def main():
    rng = np.random.default_rng(20240601)
    fixture = {
        "generator": "scripts/metrics_fixtures.py",
        "versions": {"numpy": np.__version__, "sklearn": __import__("sklearn").__version__},
        "ood": ood_cases(rng),
        "classification": classification_cases(rng),
        "scores": scores_cases(rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, default=float) + "\n")
    total = sum(len(fixture[k]) for k in ("ood", "classification", "scores"))
    print(f"wrote {total} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
