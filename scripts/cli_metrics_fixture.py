"""Writes the .npy inputs and scikit-learn's values for the `uqformer metrics` CLI test.

Run by hand (needs numpy and scikit-learn): python3 scripts/cli_metrics_fixture.py
Output: crates/cli/tests/fixtures/{probs,labels,ood_probs}.npy and expected.json.
Reference values come from scripts/metrics_fixtures.py (scikit-learn, and numpy where
scikit-learn has no function), imported so that each definition lives in one place.
"""
import json
import pathlib
import sys

import numpy as np

root = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "scripts"))
import metrics_fixtures as ref  # noqa: E402

out = root / "crates/cli/tests/fixtures"
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(7)
m, n, n_ood, c = 3, 200, 150, 5


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


labels = rng.integers(0, c, n)
logits = rng.normal(0, 1, (m, n, c))
logits[:, np.arange(n), labels] += 2.0  # members mostly right, so the metrics are not trivial
members = softmax(logits).astype(np.float32)
ood = softmax(rng.normal(0, 1, (m, n_ood, c))).astype(np.float32)
np.save(out / "probs.npy", members)
np.save(out / "labels.npy", labels.astype(np.int64))
np.save(out / "ood_probs.npy", ood)

# The CLI averages members in f64 after widening the saved f32 values; do the same here.
p = members.astype(np.float64).mean(0)
q = ood.astype(np.float64).mean(0)
case = ref.classification_case("cli", p, labels)["expected"]
expected = {k: case[k] for k in ("accuracy", "nll", "brier", "ece", "aece", "aurc")}
expected.update(ref.ood_reference(1 - p.max(1), 1 - q.max(1)))
(out / "expected.json").write_text(json.dumps({k: float(v) for k, v in expected.items()}, indent=1) + "\n")
print(json.dumps({k: float(v) for k, v in expected.items()}, indent=1))
