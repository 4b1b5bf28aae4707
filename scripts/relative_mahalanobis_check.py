#!/usr/bin/env python3
"""Relative Mahalanobis on a run's own saved features, recomputed with numpy and scikit-learn,
against the run's summary.json; with --figure, the two distances it subtracts, drawn.

    python3 scripts/relative_mahalanobis_check.py RUN_DIR METHOD SEED [--figure OUT.svg] [--before]

The run must list `mahalanobis` and `relative_mahalanobis` among its OOD scores and save its
predictions (`[eval] save_predictions = true`), which writes each set's features
(docs/results.md). The reference follows the definition in docs/methods.md, written apart from
the Rust code: class means with one shared covariance, d_k(x) the squared Mahalanobis distance
to class k; a background Gaussian of every training feature, d_0(x); the score
min_k d_k(x) - d_0(x) (higher = more OOD). Each covariance is the 1/n scatter of its centred
rows, shrunk towards tr/D * I and inverted by scipy's pinvh: the class covariance by the
Ledoit-Wolf share (scikit-learn) when the rows left after the means are fewer than 10 per
dimension, the background by the same share (with --before, by its own Ledoit-Wolf share, the
definition of runs made before that was fixed). Several members: each scored, the scores
averaged.
Prints, per OOD set, the AUROC of both detectors and of d_0 alone from the run and from this
reference, and the mean distances on each side; exits 1 when an AUROC differs by over 1e-6.

--figure draws min_k d_k against d_0 for the test and the first OOD set, under both
definitions side by side (docs/img/relative-mahalanobis-dinov2.png is this for a DINOv2 run).
Needs numpy, scipy, scikit-learn (and matplotlib for --figure).
"""
import json
import sys
from pathlib import Path

import numpy as np
from scipy.linalg import pinvh
from sklearn.covariance import ledoit_wolf_shrinkage
from sklearn.metrics import roc_auc_score

SHRINK_BELOW = 10  # samples per dimension, as uq-metrics' AUTO_SHRINK_BELOW


def shrinkage(residuals, fitted_means):
    """The Ledoit-Wolf share where the rows are too few for the width, else 0."""
    n, d = residuals.shape
    if n - fitted_means < SHRINK_BELOW * d:
        return ledoit_wolf_shrinkage(residuals, assume_centered=True)
    return 0.0


def precision(residuals, share):
    n, d = residuals.shape
    cov = residuals.T @ residuals / n
    cov = (1 - share) * cov + share * np.trace(cov) / d * np.eye(d)
    return pinvh(cov)


def distances(train, labels, x, own_share):
    """(min_k d_k(x), d_0(x)) for the rows of x. With `own_share`, the background covariance
    takes the Ledoit-Wolf share of its own rows (the definition before the fix), else the
    class covariance's share (the definition now)."""
    classes = labels.max() + 1
    means = np.stack([train[labels == c].mean(0) for c in range(classes)])
    residuals = train - means[labels]
    share = shrinkage(residuals, classes)
    p = precision(residuals, share)
    diff = x[:, None, :] - means[None]
    d_k = np.einsum("ncd,de,nce->nc", diff, p, diff).min(1)
    centre = train.mean(0)
    share_0 = shrinkage(train - centre, 1) if own_share else share
    p0 = precision(train - centre, share_0)
    diff0 = x - centre
    d_0 = np.einsum("nd,de,ne->n", diff0, p0, diff0)
    return d_k, d_0


def load(run, method, seed, set_name, what):
    return np.load(run / f"{method}-seed{seed}-{set_name}-{what}.npy")


def auroc(id_scores, ood_scores):
    y = np.r_[np.zeros(len(id_scores)), np.ones(len(ood_scores))]
    return roc_auc_score(y, np.r_[id_scores, ood_scores])


def member_mean(run, method, seed, set_name, train, labels, own_share):
    feats = load(run, method, seed, set_name, "features").astype(np.float64)
    per = [distances(train[m], labels, feats[m], own_share) for m in range(len(feats))]
    d_k = np.mean([p[0] for p in per], 0)
    d_0 = np.mean([p[1] for p in per], 0)
    rel = np.mean([p[0] - p[1] for p in per], 0)
    return d_k, d_0, rel


def figure(path, run, method, seed, train, labels, ood_set):
    """The two distances the score subtracts, test against `ood_set`, under both definitions."""
    import matplotlib

    matplotlib.use("agg" if path.endswith(".png") else "svg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    panels = [
        (axes[0], True, "before: background shrunk by its own Ledoit-Wolf share"),
        (axes[1], False, "now: background shrunk by the classes' share"),
    ]
    for ax, before, title in panels:
        test = member_mean(run, method, seed, "test", train, labels, before)
        ood = member_mean(run, method, seed, f"ood-{ood_set}", train, labels, before)
        for (d_k, d_0, _), colour, name in [(test, "tab:blue", "test"), (ood, "tab:red", f"OOD: {ood_set}")]:
            ax.scatter(d_0, d_k, s=4, alpha=0.35, color=colour, label=name)
        values = np.concatenate([test[0], test[1], ood[0], ood[1]])
        ax.plot([values.min(), values.max()], [values.min(), values.max()], color="grey", lw=0.8,
                ls="--", label="relative score 0")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("d_0: squared distance to the background Gaussian")
        score = auroc(test[2], ood[2])
        ax.text(0.03, 0.95, f"Relative Mahalanobis AUROC {100 * score:.1f}%", transform=ax.transAxes,
                va="top")
    axes[0].set_ylabel("min_k d_k: squared distance to the nearest class")
    axes[1].legend(markerscale=4, loc="lower right")
    fig.suptitle(f"{method}, seed {seed}: the two distances Relative Mahalanobis subtracts "
                 "(above the line: more OOD)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    args = sys.argv[1:]
    out = None
    before = "--before" in args
    if before:
        args.remove("--before")
    if "--figure" in args:
        i = args.index("--figure")
        out = args[i + 1]
        del args[i : i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    run, method, seed = Path(args[0]), args[1], int(args[2])
    summary = json.loads((run / "summary.json").read_text())
    entry = next(
        (m for m in summary["methods"] if m["name"] == method and m["seed"] == seed), None
    )
    if entry is None:
        sys.exit(f"{run}/summary.json: no entry for {method} at seed {seed}")
    train = load(run, method, seed, "train", "features").astype(np.float64)
    labels = load(run, method, seed, "train", "labels")
    test = member_mean(run, method, seed, "test", train, labels, before)
    worst = 0.0
    for set_name, got in entry["ood_scores"]["relative_mahalanobis"].items():
        ood = member_mean(run, method, seed, f"ood-{set_name}", train, labels, before)
        ours = {
            "mahalanobis": auroc(test[0], ood[0]),
            "relative_mahalanobis": auroc(test[2], ood[2]),
        }
        print(f"{method} seed {seed}, OOD set {set_name}:")
        for name, value in ours.items():
            ran = entry["ood_scores"][name][set_name]["auroc"]
            worst = max(worst, abs(ran - value))
            print(f"  {name:22} AUROC run {ran:.6f}  numpy {value:.6f}")
        print(f"  {'-d_0 alone':22} AUROC numpy {auroc(-test[1], -ood[1]):.6f}")
        print(f"  {'d_0 alone':22} AUROC numpy {auroc(test[1], ood[1]):.6f}")
        for name, (d_k, d_0, rel) in [("test", test), (set_name, ood)]:
            print(
                f"  {name:>12}: mean min_k d_k {d_k.mean():10.1f}  mean d_0 {d_0.mean():10.1f}"
                f"  mean relative {rel.mean():9.1f}"
            )
    if out:
        first = next(iter(entry["ood_scores"]["relative_mahalanobis"]))
        figure(out, run, method, seed, train, labels, first)
        print("figure:", out)
    print(f"largest AUROC difference, run against numpy: {worst:.2e}")
    sys.exit(0 if worst <= 1e-6 else 1)


if __name__ == "__main__":
    main()
