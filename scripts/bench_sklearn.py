#!/usr/bin/env python3
"""Times scikit-learn's OOD metrics on the scores written by crates/uq-metrics/benches/ood.rs.

Usage: python3 scripts/bench_sklearn.py FILE
FILE is little-endian: u64 n_id, u64 n_ood, then n_id ID and n_ood OOD scores as f64.
Prints one JSON line: best-of-3 seconds for all four metrics and for roc_auc_score alone, and
the values. Exits with code 3 when scikit-learn cannot be imported (the bench then skips).
"""

import json
import sys
import time

try:
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from metrics_fixtures import ood_reference
except ImportError as e:
    print(f"cannot import scikit-learn/numpy: {e}", file=sys.stderr)
    sys.exit(3)

RUNS = 3


def best_of(runs, f):
    best, value = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - start)
    return best, value


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    n_id, n_ood = (int(x) for x in np.fromfile(path, dtype="<u8", count=2))
    scores = np.fromfile(path, dtype="<f8", offset=16)
    if len(scores) != n_id + n_ood:
        sys.exit(f"{path}: header says {n_id} + {n_ood} scores, file holds {len(scores)}")
    id_scores, ood_scores = scores[:n_id], scores[n_id:]
    labels = np.concatenate([np.zeros(n_id), np.ones(n_ood)])

    seconds_all, values = best_of(RUNS, lambda: ood_reference(id_scores, ood_scores))
    seconds_auroc, _ = best_of(RUNS, lambda: roc_auc_score(labels, scores))
    print(json.dumps({"seconds_all": seconds_all, "seconds_auroc": seconds_auroc,
                      **{k: float(v) for k, v in values.items()}}))


if __name__ == "__main__":
    main()
