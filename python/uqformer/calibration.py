"""Post-hoc calibration on saved predictions: temperature scaling, and split conformal
prediction sets (THR, APS, RAPS) with their coverage guarantee."""

from __future__ import annotations

from typing import Optional, TypedDict, cast

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _native
from .metrics import prediction


def fit_temperature(val_logits: ArrayLike, val_labels: ArrayLike) -> float:
    """The temperature T minimising the validation NLL of `softmax(z / T)` over T in
    [0.05, 20]. `val_logits` `[N, C]`, or `[M, N, C]` for an ensemble: one T divides every
    member's logits and the prediction is the mean of the members' softmax (as runs fit it)."""
    z = _args.members("val_logits", val_logits)
    y = _args.labels("val_labels", val_labels, z.shape[1])
    with _args.renamed({"logits": "val_logits", "labels": "val_labels"}):
        return _native.fit_temperature(z, y)


def temperature_scale(logits: ArrayLike, temperature: float) -> np.ndarray:
    """The calibrated probabilities `[N, C]`: `softmax(z / T)`, or for `[M, N, C]` the mean of
    the members' `softmax(z_m / T)`."""
    members = _native.scaled_members(_args.members("logits", logits), float(temperature))
    return _native.member_mean(members)


class ConformalReport(TypedDict):
    alpha: float
    score: str
    threshold: float
    coverage: float
    set_size: float


class Conformal:
    """Split conformal prediction sets at miscoverage `alpha`.

    `score`: `thr` (1 - p of the label: the smallest sets), `aps` (the probability mass ranked
    at or above the label) or `raps` (APS plus `penalty` for each rank past `k_reg`: smaller,
    steadier sets; defaults 0.1 and 1, torch-uncertainty's). RAPS may also be named with its
    parameters, as experiment files and summary.json write it: `raps(penalty=0.05, k_reg=2)`.
    Scores are not randomised, so sets are deterministic.

    `calibrate` on held-out probabilities and labels fixes the threshold: the
    `ceil((n + 1)(1 - alpha))`-th smallest calibration score (+inf when n is too small), which
    covers an exchangeable test point with probability at least `1 - alpha`. `predict` gives
    the sets as a boolean mask `[N, C]`; `evaluate` their coverage and mean size on labelled data.
    """

    def __init__(
        self,
        score: str = "aps",
        alpha: float = 0.1,
        penalty: Optional[float] = None,
        k_reg: Optional[int] = None,
    ):
        self.score, self.alpha, self.penalty, self.k_reg = score, float(alpha), penalty, k_reg
        self.threshold: Optional[float] = None

    def _options(self):
        k_reg = None if self.k_reg is None else _args.count("k_reg", self.k_reg)
        return self.score, self.penalty, k_reg

    def scores(self, probs: ArrayLike, labels: ArrayLike) -> np.ndarray:
        """The non-conformity score of each sample's label."""
        p = prediction(probs)
        return _native.conformal_scores(
            p, _args.labels("labels", labels, len(p)), *self._options()
        )

    def calibrate(self, probs: ArrayLike, labels: ArrayLike) -> "Conformal":
        p = prediction(probs)
        score, penalty, k_reg = self._options()
        self.threshold = _native.conformal_threshold(
            p, _args.labels("labels", labels, len(p)), score, self.alpha, penalty, k_reg
        )
        return self

    def predict(self, probs: ArrayLike) -> np.ndarray:
        if self.threshold is None:
            raise _native.UqformerError("predict: not calibrated; call calibrate first")
        return _native.prediction_sets(prediction(probs), self.threshold, *self._options())

    def evaluate(self, probs: ArrayLike, labels: ArrayLike) -> dict:
        """Coverage (the fraction of labels in their set) and mean set size."""
        sets = self.predict(probs)
        y = _args.labels("labels", labels, len(sets))
        bad = (y < 0) | (y >= sets.shape[1])
        if np.any(bad):
            i = int(np.argmax(bad))
            raise _native.UqformerError(
                f"labels: [{i}] = {y[i]}; expected a class from 0 to {sets.shape[1] - 1}"
            )
        return {
            "coverage": float(sets[np.arange(len(y)), y].mean()),
            "set_size": float(sets.sum(axis=1).mean()),
        }


def conformal(
    cal_probs: ArrayLike,
    cal_labels: ArrayLike,
    test_probs: ArrayLike,
    test_labels: ArrayLike,
    score: str = "aps",
    alpha: float = 0.1,
    penalty: Optional[float] = None,
    k_reg: Optional[int] = None,
) -> ConformalReport:
    """Calibrate on one split and measure on another in one call, exactly as runs do:
    `threshold`, `coverage` and mean `set_size`."""
    cal = prediction(cal_probs, "cal_probs")
    test = prediction(test_probs, "test_probs")
    report = _native.conformal(
        cal,
        _args.labels("cal_labels", cal_labels, len(cal)),
        test,
        _args.labels("test_labels", test_labels, len(test)),
        score,
        float(alpha),
        penalty,
        k_reg,
    )
    return cast(ConformalReport, report)

