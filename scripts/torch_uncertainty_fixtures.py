#!/usr/bin/env python3
"""Reference values from torch-uncertainty for the metrics it defines beside uqformer's:
class-wise ECE (`ClasswiseCalibrationError`, reduction mean), AUGRC (`AUGRC`) and the RAPS
conformal scores (`ConformalClsRAPS`, not randomised).

Writes crates/uq-metrics/tests/fixtures/torch_uncertainty.json, read by the uq-metrics tests and
by python/tests. Run by hand after changing one of these metrics:

    python3 -m venv /tmp/tu && /tmp/tu/bin/pip install torch-uncertainty torch torchmetrics \
        lightning rich && /tmp/tu/bin/python scripts/torch_uncertainty_fixtures.py

Inputs are float64 softmax outputs of seeded normal logits: no probability lies on a bin edge
and no two are equal, the cases where the libraries' conventions differ (bins (lo, hi] against
[lo, hi); the order of tied samples). Floats are written with repr, so they round-trip exactly.
"""

import json
from pathlib import Path

import numpy as np
import torch
import torch_uncertainty
from torch_uncertainty.metrics.classification import AUGRC, ClasswiseCalibrationError
from torch_uncertainty.post_processing import ConformalClsRAPS

OUT = (
    Path(__file__).resolve().parent.parent
    / "crates/uq-metrics/tests/fixtures/torch_uncertainty.json"
)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def draw(rng, n, c, beta):
    """Predictions `softmax(beta g)` and labels drawn from `softmax(g)`: miscalibrated."""
    g = rng.normal(size=(n, c))
    truth = softmax(g)
    labels = np.array([rng.choice(c, p=row) for row in truth])
    return softmax(beta * g), labels


def case(rng, name, n, c, beta, bins):
    probs, labels = draw(rng, n, c, beta)
    p, y = torch.from_numpy(probs), torch.from_numpy(labels)
    classwise = ClasswiseCalibrationError(num_classes=c, num_bins=bins, reduction="mean")
    classwise.update(p, y)
    augrc = AUGRC()
    augrc.update(p, y)
    raps = []
    for penalty, k_reg in [(0.1, 1), (0.02, 3), (0.0, 1)]:
        conformal = ConformalClsRAPS(
            alpha=0.1, randomized=False, penalty=penalty, regularization_rank=k_reg
        )
        raps.append(
            {
                "penalty": penalty,
                "k_reg": k_reg,
                "class_scores": conformal._calculate_all_labels(p).numpy().ravel().tolist(),
                "label_scores": conformal._calculate_single_label(p, y).numpy().tolist(),
            }
        )
    return {
        "name": name,
        "n": n,
        "c": c,
        "bins": bins,
        "probs": probs.ravel().tolist(),
        "labels": labels.tolist(),
        "classwise_ece": float(classwise.compute()),
        "augrc": float(augrc.compute()),
        "raps": raps,
    }


def main():
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(2026)
    cases = [
        case(rng, "3 classes, sharp", 150, 3, 3.0, 15),
        case(rng, "10 classes, flat", 150, 10, 0.5, 15),
        case(rng, "5 classes, 10 bins", 120, 5, 1.5, 10),
    ]
    out = {"torch_uncertainty": torch_uncertainty.__version__ if hasattr(
        torch_uncertainty, "__version__") else "unknown", "torch": torch.__version__,
        "cases": cases}
    OUT.write_text(json.dumps(out, indent=None) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
