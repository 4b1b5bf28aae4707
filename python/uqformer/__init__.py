"""uqformer's evaluation from Python.

Metrics of classifiers and ensembles (`metrics`), OOD detection (`ood`), post-hoc calibration
and conformal sets (`calibration`) and paired comparisons over seeds (`stats`), computed by
uqformer's Rust crate `uq-metrics`: the same code that scores uqformer's own runs. Arrays in,
plain Python values, dicts or numpy arrays out; bad input raises `UqformerError` (a
`ValueError`) naming the argument.

    import numpy as np, uqformer as uq
    uq.evaluate(probs, labels)                  # accuracy, nll, brier, ece, ..., augrc
    uq.ood_report(uq.score("msp", probs=probs), uq.score("msp", probs=ood_probs))
    t = uq.fit_temperature(val_logits, val_labels)
    sets = uq.Conformal("raps", alpha=0.1).calibrate(val_probs, val_labels).predict(probs)
"""

from ._native import UqformerError
from .calibration import Conformal, conformal, fit_temperature, temperature_scale
from .metrics import (
    DEFAULT_BINS,
    accuracy,
    adaptive_ece,
    augrc,
    aurc,
    brier,
    classwise_ece,
    diversity,
    ece,
    evaluate,
    mean_probs,
    msp_uncertainty,
    nll,
    reliability_diagram,
)
from .ood import (
    DETECTORS,
    SCORES,
    FeatureDetector,
    aupr_in,
    aupr_out,
    auroc,
    auroc_bootstrap,
    fpr95,
    ood_report,
    roc_curve,
    score,
)
from .stats import (
    CLAIM_KINDS,
    claim_test,
    compare,
    compare_family,
    decide,
    detectable_difference,
    holm,
    mean_ci,
    paired,
    paired_test,
    retained_share,
    seeds_needed,
)

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]
