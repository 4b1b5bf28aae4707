#!/usr/bin/env python3
"""Reference scores for the feature-space OOD detectors of the uq-metrics crate, from
scikit-learn (EmpiricalCovariance, LedoitWolf, ShrunkCovariance, NearestNeighbors) and numpy.

Writes crates/uq-metrics/tests/fixtures/features.json. Run by hand after changing a detector's
definition:  pip install scikit-learn numpy && python3 scripts/feature_fixtures.py
Floats are written with repr, so they round-trip exactly. Higher score = more OOD throughout.
"""

import json
from pathlib import Path

import numpy as np
from scipy.special import logsumexp
from sklearn.covariance import EmpiricalCovariance, LedoitWolf, ShrunkCovariance, ledoit_wolf_shrinkage
from sklearn.neighbors import NearestNeighbors

OUT = Path(__file__).resolve().parent.parent / "crates/uq-metrics/tests/fixtures/features.json"


def covariance(x, shrinkage):
    """The estimator the Rust `Shrinkage` names, on rows already centred."""
    if shrinkage == "none":
        est = EmpiricalCovariance(assume_centered=True)
    elif shrinkage == "ledoit_wolf":
        est = LedoitWolf(assume_centered=True)
    else:
        est = ShrunkCovariance(shrinkage=shrinkage, assume_centered=True)
    return est.fit(x).precision_


def class_distances(train, labels, test, shrinkage):
    classes = labels.max() + 1
    means = np.stack([train[labels == c].mean(0) for c in range(classes)])
    precision = covariance(train - means[labels], shrinkage)
    diff = test[:, None, :] - means[None, :, :]
    return np.einsum("ncd,de,nce->nc", diff, precision, diff)


def mahalanobis(train, labels, test, shrinkage):
    return class_distances(train, labels, test, shrinkage).min(1)


def relative_mahalanobis(train, labels, test, shrinkage):
    # The background is shrunk by the share the class covariance was shrunk by.
    if shrinkage == "ledoit_wolf":
        means = np.stack([train[labels == c].mean(0) for c in range(labels.max() + 1)])
        shrinkage_0 = ledoit_wolf_shrinkage(train - means[labels], assume_centered=True)
    else:
        shrinkage_0 = shrinkage
    mean = train.mean(0)
    precision = covariance(train - mean, shrinkage_0)
    diff = test - mean
    background = np.einsum("nd,de,ne->n", diff, precision, diff)
    return class_distances(train, labels, test, shrinkage).min(1) - background


def vim(train, train_logits, test, test_logits, dim):
    origin = train.mean(0)
    cov = EmpiricalCovariance(assume_centered=True).fit(train - origin).covariance_
    values, vectors = np.linalg.eigh(cov)  # ascending
    residual = vectors[:, np.argsort(-values)[dim:]]
    norm = lambda x: np.linalg.norm((x - origin) @ residual, axis=-1)
    alpha = train_logits.max(-1).mean() / norm(train).mean()
    return alpha * norm(test) - logsumexp(test_logits, axis=-1)


def knn(train, test, k):
    unit = lambda x: x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-10)
    distances, _ = NearestNeighbors(n_neighbors=k).fit(unit(train)).kneighbors(unit(test))
    return distances[:, -1]


def blobs(rng, n, d, classes, spread=3.0):
    centres = rng.normal(0, spread, (classes, d))
    labels = np.arange(n) % classes
    mixing = rng.normal(0, 1, (d, d)) / np.sqrt(d) + np.eye(d)
    return centres[labels] + rng.normal(0, 1, (n, d)) @ mixing, labels, centres


def case(name, detector, train, labels, test, expected, **extra):
    n, d = train.shape
    out = {
        "name": name,
        "detector": detector,
        "n": n,
        "d": d,
        "train": train.ravel().tolist(),
        "labels": labels.tolist(),
        "test": test.ravel().tolist(),
        "expected": np.asarray(expected).tolist(),
    }
    out.update(extra)
    return out


def main():
    rng = np.random.default_rng(20261203)
    cases = []
    train, labels, centres = blobs(rng, 90, 6, 3)
    test = np.concatenate([blobs(rng, 12, 6, 3)[0], rng.normal(0, 6, (8, 6))])
    for shrinkage in ["none", "ledoit_wolf", 0.3]:
        for name, f in [("mahalanobis", mahalanobis), ("relative_mahalanobis", relative_mahalanobis)]:
            cases.append(case(f"{name} {shrinkage}", name, train, labels, test,
                              f(train, labels, test, shrinkage), shrinkage=shrinkage))

    # Few samples for the width: "auto" shrinks (Ledoit-Wolf), 40 - 2 < 10 * 8.
    small, small_labels, _ = blobs(rng, 40, 8, 2)
    small_test = rng.normal(0, 3, (10, 8))
    cases.append(case("mahalanobis auto (shrinks)", "mahalanobis", small, small_labels, small_test,
                      mahalanobis(small, small_labels, small_test, "ledoit_wolf"), shrinkage="auto"))

    # Features after a LayerNorm without affine: every row sums to zero, so the covariance has
    # rank D - 1 and the precision is its pseudo-inverse.
    ln = train - train.mean(1, keepdims=True)
    ln_test = test - test.mean(1, keepdims=True)
    cases.append(case("mahalanobis rank-deficient (layer-normed)", "mahalanobis", ln, labels, ln_test,
                      mahalanobis(ln, labels, ln_test, "none"), shrinkage="none"))

    w = rng.normal(0, 1, (6, 3))
    train_logits, test_logits = train @ w + 0.5, test @ w + 0.5
    for dim in [2, 3]:
        cases.append(case(f"vim dim {dim}", "vim", train, labels, test,
                          vim(train, train_logits, test, test_logits, dim), vim_dim=dim,
                          train_logits=train_logits.ravel().tolist(),
                          test_logits=test_logits.ravel().tolist(), c=3))

    for k in [1, 5, 90]:
        cases.append(case(f"knn k {k}", "knn", train, labels, test, knn(train, test, k), k=k))

    OUT.write_text(json.dumps({"cases": cases}, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
