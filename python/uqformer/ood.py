"""Out-of-distribution detection: the metrics (OOD positive, higher score = more OOD), the
scores computed from a model's outputs, and the feature-space detectors as fit / score objects.
"""

from __future__ import annotations

from typing import Optional, TypedDict, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _native


class OodReport(TypedDict):
    auroc: float
    aupr_in: float
    aupr_out: float
    fpr95: float


def _sides(id_scores: ArrayLike, ood_scores: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    return _args.floats("id_scores", id_scores, 1), _args.floats("ood_scores", ood_scores, 1)


def ood_report(id_scores: ArrayLike, ood_scores: ArrayLike) -> OodReport:
    """AUROC, AUPR-In, AUPR-Out and FPR95 from one sort (scikit-learn's definitions)."""
    return cast(OodReport, _native.ood_report(*_sides(id_scores, ood_scores)))


def auroc(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Area under the ROC curve, OOD positive."""
    return ood_report(id_scores, ood_scores)["auroc"]


def aupr_in(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Average precision with the in-distribution samples positive (scores negated)."""
    return ood_report(id_scores, ood_scores)["aupr_in"]


def aupr_out(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """Average precision with the OOD samples positive."""
    return ood_report(id_scores, ood_scores)["aupr_out"]


def fpr95(id_scores: ArrayLike, ood_scores: ArrayLike) -> float:
    """The fraction of in-distribution samples flagged at the first threshold that flags 95%
    of the OOD samples."""
    return ood_report(id_scores, ood_scores)["fpr95"]


def roc_curve(id_scores: ArrayLike, ood_scores: ArrayLike) -> np.ndarray:
    """The ROC curve as `[K, 2]` rows of (false-positive rate, true-positive rate)."""
    return _native.roc_curve(*_sides(id_scores, ood_scores))


def auroc_bootstrap(
    id_scores: ArrayLike, ood_scores: ArrayLike, resamples: int = 200, seed: int = 0
) -> dict:
    """The AUROC over bootstrap resamples of both sets (seeded): the spread that sampling the
    test sets alone gives."""
    return _native.auroc_bootstrap(
        *_sides(id_scores, ood_scores), _args.count("resamples", resamples), _args.count("seed", seed)
    )


SCORES: dict[str, str] = dict(_native.scores())
"""The output scores, name -> what it measures."""


def score(
    name: str,
    probs: Optional[ArrayLike] = None,
    members: Optional[ArrayLike] = None,
    logits: Optional[ArrayLike] = None,
) -> np.ndarray:
    """An output-space OOD score per sample (higher = more OOD), one of `SCORES`: `msp` and
    `entropy` read `probs` (or the members' mean), `mutual_info`, `disagreement` and
    `member_variance` read `members` `[M, N, C]`, `max_logit` and `energy` read `logits`.
    `probs` of shape `[M, N, C]` are taken as the members, as the metrics take them."""
    p = None if probs is None else _args.floats("probs", probs, (2, 3))
    if p is not None and p.ndim == 3:
        if members is not None:
            raise _native.UqformerError("probs: [M, N, C] probs are members; members was given too")
        p, members = None, p
    m = None if members is None else _args.floats("members", members, 3)
    z = None if logits is None else _args.floats("logits", logits, 2)
    return _native.score(name, p, m, z)


DETECTORS: dict[str, str] = dict(_native.detectors())
"""The feature-space detectors, name -> what it scores."""


class FeatureDetector:
    """A feature-space OOD detector (`mahalanobis`, `relative_mahalanobis`, `vim`, `knn`).

    `fit` takes training features `[N, D]`, or `[M, N, D]` for an ensemble (one detector per
    member, a sample's score the members' mean), their labels, and for ViM their logits
    (`[N, C]` or `[M, N, C]`). `score` takes features (and logits) of the same layout and
    returns one score per sample, higher = more OOD.

    Options: `k` (KNN's neighbour, 50), `vim_dim` (ViM's principal subspace, default by width),
    `shrinkage` of the Mahalanobis covariances (`auto`, `none`, `ledoit_wolf` or a weight).
    """

    def __init__(
        self,
        name: str,
        k: int = 50,
        vim_dim: Optional[int] = None,
        shrinkage: Union[str, float] = "auto",
    ):
        if name not in DETECTORS:
            raise _native.UqformerError(
                f"name: unknown detector '{name}'; expected one of {', '.join(DETECTORS)}"
            )
        self.name, self.k, self.vim_dim, self.shrinkage = name, k, vim_dim, shrinkage
        self._fitted: Optional[_native.FittedDetector] = None

    def fit(
        self, features: ArrayLike, labels: ArrayLike, logits: Optional[ArrayLike] = None
    ) -> "FeatureDetector":
        x = _args.members("features", features, _args.FEATURES)
        y = _args.labels("labels", labels, x.shape[1])
        z = None if logits is None else self._logits(logits, x)
        # Options checked here so that errors name them (the native fit names the detector).
        n, d = x.shape[1], x.shape[2]
        k = _args.count("k", self.k, 1)
        if self.name == "knn" and k > n:
            raise _native.UqformerError(f"k: {k}; expected 1 to the {n} training features")
        vim_dim = None if self.vim_dim is None else _args.count("vim_dim", self.vim_dim, 1)
        if self.name == "vim" and vim_dim is not None and vim_dim >= d:
            raise _native.UqformerError(f"vim_dim: {vim_dim}; expected 1 to {d - 1} (width {d})")
        self._fitted = _native.fit_detector(self.name, x, y, z, k, vim_dim, self.shrinkage)
        return self

    def score(self, features: ArrayLike, logits: Optional[ArrayLike] = None) -> np.ndarray:
        if self._fitted is None:
            raise _native.UqformerError("score: the detector is not fitted; call fit first")
        x = _args.members("features", features, _args.FEATURES)
        z = None if logits is None else self._logits(logits, x)
        return self._fitted.score(x, z)

    @staticmethod
    def _logits(logits: ArrayLike, features: np.ndarray) -> np.ndarray:
        z = _args.members("logits", logits)
        if z.shape[:2] != features.shape[:2]:
            raise _native.UqformerError(
                f"logits: {z.shape[0]} member(s) of {z.shape[1]} rows, but the features have "
                f"{features.shape[0]} of {features.shape[1]}"
            )
        return z
