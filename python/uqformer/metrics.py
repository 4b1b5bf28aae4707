"""Classification, calibration and selective-classification metrics.

`probs` is `[N, C]` probabilities, or `[M, N, C]` member probabilities (then the members' mean
is scored, as an ensemble predicts); `labels` is `[N]` integer classes. Any array-like of real
numbers is accepted (float32 is widened to float64).
"""

from __future__ import annotations

from typing import Optional, TypedDict, cast

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _native

DEFAULT_BINS: int = _native.DEFAULT_BINS
"""Bins of ECE, adaptive ECE, class-wise ECE and the reliability diagram (15)."""


class Report(TypedDict):
    n: int
    accuracy: float
    nll: float
    brier: float
    ece: float
    aece: float
    classwise_ece: float
    aurc: float
    augrc: float


def mean_probs(probs: ArrayLike, name: str = "probs") -> np.ndarray:
    """`[N, C]` as it is, or the members' mean of `[M, N, C]`; every row checked (finite, in
    [0, 1], summing to 1), errors naming `name`."""
    return _native.member_mean(_args.members(name, probs), name)


def prediction(probs: ArrayLike, name: str = "probs") -> np.ndarray:
    """What a metric scores: `[N, C]` as given (the native metric checks it), or the checked
    members' mean of `[M, N, C]`."""
    array = _args.floats(name, probs, (2, 3))
    return _native.member_mean(array, name) if array.ndim == 3 else array


def _pair(probs: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = prediction(probs)
    return p, _args.labels("labels", labels, len(p))


def accuracy(probs: ArrayLike, labels: ArrayLike) -> float:
    """Fraction of samples whose first maximum is the label (numpy.argmax's tie rule)."""
    return _native.metric("accuracy", *_pair(probs, labels), 0)


def nll(probs: ArrayLike, labels: ArrayLike) -> float:
    """Mean negative log-likelihood, `p[y]` clipped to [eps, 1 - eps] as scikit-learn's log_loss."""
    return _native.metric("nll", *_pair(probs, labels), 0)


def brier(probs: ArrayLike, labels: ArrayLike) -> float:
    """Multi-class Brier score: mean of `sum_c (p[c] - [c == y])^2`, in [0, 2]."""
    return _native.metric("brier", *_pair(probs, labels), 0)


def ece(probs: ArrayLike, labels: ArrayLike, bins: int = DEFAULT_BINS) -> float:
    """Top-label expected calibration error, equal-width bins `(lo, hi]`."""
    return _native.metric("ece", *_pair(probs, labels), _args.count("bins", bins))


def adaptive_ece(probs: ArrayLike, labels: ArrayLike, bins: int = DEFAULT_BINS) -> float:
    """Top-label ECE with equal-mass bins."""
    return _native.metric("adaptive_ece", *_pair(probs, labels), _args.count("bins", bins))


def classwise_ece(probs: ArrayLike, labels: ArrayLike, bins: int = DEFAULT_BINS) -> float:
    """Class-wise ECE: the mean over classes of the ECE of each one-vs-rest forecast `p[k]`
    against `[y == k]`, equal-width bins on `p[k]`."""
    return _native.metric("classwise_ece", *_pair(probs, labels), _args.count("bins", bins))


def evaluate(probs: ArrayLike, labels: ArrayLike, bins: int = DEFAULT_BINS) -> Report:
    """Every metric above at once, ranking samples by MSP for AURC and AUGRC."""
    return cast(Report, _native.evaluate(*_pair(probs, labels), _args.count("bins", bins)))


def reliability_diagram(
    probs: ArrayLike, labels: ArrayLike, bins: int = DEFAULT_BINS
) -> list[dict]:
    """The equal-width bins of ECE: `lo`, `hi`, `count`, mean `confidence` and `accuracy`
    (None when empty)."""
    return _native.reliability_diagram(*_pair(probs, labels), _args.count("bins", bins))


def _selective(uncertainty: ArrayLike, correct: ArrayLike):
    u = _args.floats("uncertainty", uncertainty, 1)
    return u, _args.flags("correct", correct, len(u))


def aurc(uncertainty: ArrayLike, correct: ArrayLike) -> float:
    """Area under the risk-coverage curve: samples ranked by `uncertainty` (most confident
    first), the mean over k of the error rate among the k most confident; ties by expectation."""
    return _native.aurc(*_selective(uncertainty, correct))


def augrc(uncertainty: ArrayLike, correct: ArrayLike) -> float:
    """Area under the generalized risk-coverage curve (Traub et al. 2024): the mean over k of
    (errors among the k most confident) / N; ties by expectation."""
    return _native.augrc(*_selective(uncertainty, correct))


def msp_uncertainty(probs: ArrayLike) -> np.ndarray:
    """`1 - max_c p[c]`, the ranking `evaluate` uses for AURC and AUGRC."""
    return 1.0 - prediction(probs).max(axis=1)


def diversity(members: ArrayLike, labels: Optional[ArrayLike] = None) -> dict:
    """How differently M >= 2 members predict: `disagreement`, `mutual_info`, `pairwise_kl`
    and, with labels, `member_accuracy` and `ensemble_gain` (NaN without)."""
    m = _args.floats("members", members, 3)
    y = None if labels is None else _args.labels("labels", labels, m.shape[1])
    return _native.diversity(m, y)
