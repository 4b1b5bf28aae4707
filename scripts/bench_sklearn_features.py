#!/usr/bin/env python3
"""Times the feature-space OOD detectors in scikit-learn / numpy on the arrays written by
crates/uq-metrics/benches/features.rs, with the definitions of scripts/feature_fixtures.py.

Usage: python3 scripts/bench_sklearn_features.py FILE
FILE is little-endian: u64 n, d, c, q, then f64 training features [n, d], labels [n], training
logits [n, c], queries [q, d] and their logits [q, c]. Prints one JSON line: best-of-3 seconds
per step, the scores of each detector on the queries, and the threads BLAS used. Exits with code 3
when scikit-learn cannot be imported (the bench then skips).
"""

import json
import sys
import time

try:
    import numpy as np
    from sklearn.covariance import EmpiricalCovariance

    from feature_fixtures import knn, vim
except ImportError as e:
    print(f"cannot import scikit-learn/numpy: {e}", file=sys.stderr)
    sys.exit(3)

RUNS = 3


def best_of(f):
    best, value = float("inf"), None
    for _ in range(RUNS):
        start = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - start)
    return best, value


def threads():
    try:
        from threadpoolctl import threadpool_info

        return [{k: i.get(k) for k in ("internal_api", "num_threads", "architecture")}
                for i in threadpool_info()]
    except ImportError:
        import os

        return os.cpu_count()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    n, d, c, q = (int(x) for x in np.fromfile(sys.argv[1], dtype="<u8", count=4))
    flat = np.fromfile(sys.argv[1], dtype="<f8", offset=32)
    sizes = [n * d, n, n * c, q * d, q * c]
    if len(flat) != sum(sizes):
        sys.exit(f"{sys.argv[1]}: expected {sum(sizes)} values, found {len(flat)}")
    parts = np.split(flat, np.cumsum(sizes)[:-1])
    train, labels, train_logits = parts[0].reshape(n, d), parts[1].astype(int), parts[2].reshape(n, c)
    queries, query_logits = parts[3].reshape(q, d), parts[4].reshape(q, c)

    # Mahalanobis split into its fit (class means, covariance, pinvh) and its scoring.
    def mds_fit():
        means = np.stack([train[labels == k].mean(0) for k in range(c)])
        precision = EmpiricalCovariance(assume_centered=False).fit(train - means[labels]).precision_
        return means, precision

    def distances(means, precision):
        # One product per class, as OpenOOD's loop does (an einsum over [q, c, d] is slower).
        diff = [queries - m for m in means]
        return np.stack([np.sum((x @ precision) * x, axis=1) for x in diff], 1)

    def mds_score(model):
        return distances(*model).min(1)

    def rmds():
        mean = train.mean(0, keepdims=True)
        background = EmpiricalCovariance(assume_centered=False).fit(train).precision_
        return mds_score(mds_fit()) - distances(mean, background)[:, 0]

    seconds, scores = {}, {}
    seconds["mahalanobis fit"], model = best_of(mds_fit)
    seconds["mahalanobis score"], scores["mahalanobis score"] = best_of(lambda: mds_score(model))
    steps = {
        "relative_mahalanobis": rmds,
        "vim": lambda: vim(train, train_logits, queries, query_logits, d // 2),
        "knn": lambda: knn(train, queries, 50),
    }
    for name, f in steps.items():
        seconds[name], scores[name] = best_of(f)
    print(json.dumps({"seconds": seconds, "threads": threads(),
                      "scores": {k: v.tolist() for k, v in scores.items()}}))


if __name__ == "__main__":
    main()
