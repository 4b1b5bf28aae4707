#!/usr/bin/env python3
"""uqformer's metrics from Python against scikit-learn and torch-uncertainty, side by side.

    pip install ./python scikit-learn torch-uncertainty torch torchmetrics lightning rich
    python python/benches/against_peers.py [--rounds 5]

Each round times every implementation of a task once, in turn, on the same arrays (seeded), so
the ratios are taken side by side; printed are the median and the range over rounds of each
ratio (their time over uqformer's: above 1, uqformer is faster) and the values, which must
agree. Tasks: OOD metrics on 10^6 scores (AUROC, AUPR-In, AUPR-Out, FPR95), calibration and
selective metrics on 10^6 predictions of 10 classes (ECE, AURC, AUGRC), and KNN and
Mahalanobis detectors on 10,000 training features of width 384 with 2,000 queries.
torch-uncertainty is skipped when it cannot be imported.
"""

import argparse
import statistics
import time

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve
from sklearn.neighbors import NearestNeighbors

import uqformer as uq

try:
    import torch
    from torch_uncertainty.metrics.classification import AUGRC, AURC, CalibrationError
    from torchmetrics.classification import BinaryAUROC, BinaryAveragePrecision

    torch.set_num_threads(2)
except ImportError:
    torch = None


def timed(f):
    start = time.perf_counter()
    value = f()
    return time.perf_counter() - start, value


def sk_ood(id_s, ood_s):
    y = np.r_[np.zeros(len(id_s)), np.ones(len(ood_s))]
    s = np.r_[id_s, ood_s]
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    return {
        "auroc": roc_auc_score(y, s),
        "aupr_out": average_precision_score(y, s),
        "aupr_in": average_precision_score(1 - y, -s),
        "fpr95": float(fpr[np.searchsorted(tpr, 0.95)]),
    }


def tu_ood(id_s, ood_s):
    y = torch.from_numpy(np.r_[np.zeros(len(id_s)), np.ones(len(ood_s))]).long()
    s = torch.from_numpy(np.r_[id_s, ood_s])
    return {
        "auroc": float(BinaryAUROC()(s, y)),
        "aupr_out": float(BinaryAveragePrecision()(s, y)),
        "aupr_in": float(BinaryAveragePrecision()(-s, 1 - y)),
    }


def tu_calibration(probs, labels):
    p, y = torch.from_numpy(probs), torch.from_numpy(labels)
    out = {}
    for name, metric in [
        ("ece", CalibrationError(task="multiclass", num_classes=probs.shape[1], num_bins=15)),
        ("aurc", AURC()),
        ("augrc", AUGRC()),
    ]:
        metric.update(p, y)
        out[name] = float(metric.compute())
    return out


def uq_calibration(probs, labels):
    uncertainty = uq.msp_uncertainty(probs)
    correct = probs.argmax(1) == labels
    return {
        "ece": uq.ece(probs, labels),
        "aurc": uq.aurc(uncertainty, correct),
        "augrc": uq.augrc(uncertainty, correct),
    }


def sk_mahalanobis(train, labels, queries):
    means = np.stack([train[labels == k].mean(0) for k in range(labels.max() + 1)])
    precision = EmpiricalCovariance().fit(train - means[labels]).precision_
    return np.stack([np.sum(((queries - m) @ precision) * (queries - m), 1) for m in means], 1).min(1)


def sk_knn(train, queries, k=50):
    unit = lambda x: x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-10)  # noqa: E731
    return NearestNeighbors(n_neighbors=k).fit(unit(train)).kneighbors(unit(queries))[0][:, -1]


def tasks(rng):
    n = 500_000
    id_s, ood_s = rng.normal(0, 1, n), rng.normal(0.7, 1, n)
    logits = rng.normal(0, 1, (1_000_000, 10)) * 2
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    labels = rng.integers(0, 10, len(probs))
    centres = rng.normal(0, 3, (10, 384))
    train_labels = np.arange(10_000) % 10
    train = centres[train_labels] + rng.normal(0, 1, (10_000, 384))
    queries = centres[np.arange(2_000) % 10] + rng.normal(0, 1.3, (2_000, 384))
    out = {
        "OOD metrics, 10^6 scores": {
            "uqformer": lambda: uq.ood_report(id_s, ood_s),
            "scikit-learn": lambda: sk_ood(id_s, ood_s),
        },
        "ECE, AURC, AUGRC, 10^6 x 10": {
            "uqformer": lambda: uq_calibration(probs, labels),
        },
        "Mahalanobis fit+score, 10k x 384": {
            "uqformer": lambda: uq.FeatureDetector("mahalanobis", shrinkage="none")
            .fit(train, train_labels)
            .score(queries),
            "scikit-learn": lambda: sk_mahalanobis(train, train_labels, queries),
        },
        "KNN (k=50) fit+score, 10k x 384": {
            "uqformer": lambda: uq.FeatureDetector("knn").fit(train, train_labels).score(queries),
            "scikit-learn": lambda: sk_knn(train, queries),
        },
    }
    if torch is not None:
        out["OOD metrics, 10^6 scores"]["torch-uncertainty"] = lambda: tu_ood(id_s, ood_s)
        out["ECE, AURC, AUGRC, 10^6 x 10"]["torch-uncertainty"] = lambda: tu_calibration(
            probs, labels
        )
    return out


def agree(a, b):
    """The largest difference between two results (dicts by shared key, or arrays)."""
    if isinstance(a, dict):
        return max(abs(a[k] - b[k]) for k in a.keys() & b.keys())
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    print(f"numpy threads: see threadpoolctl; torch threads: {torch and torch.get_num_threads()}")
    for task, impls in tasks(np.random.default_rng(0)).items():
        seconds = {name: [] for name in impls}
        values = {}
        for _ in range(rounds):
            for name, f in impls.items():
                t, values[name] = timed(f)
                seconds[name].append(t)
        ours = seconds["uqformer"]
        print(f"\n{task}: uqformer median {statistics.median(ours) * 1e3:.1f} ms")
        for name in impls:
            if name == "uqformer":
                continue
            ratios = [theirs / mine for theirs, mine in zip(seconds[name], ours)]
            print(
                f"  {name:<18} median {statistics.median(seconds[name]) * 1e3:8.1f} ms, "
                f"ratio {statistics.median(ratios):.2f}x [{min(ratios):.2f}, {max(ratios):.2f}], "
                f"largest difference {agree(values['uqformer'], values[name]):.1e}"
            )


if __name__ == "__main__":
    main()
