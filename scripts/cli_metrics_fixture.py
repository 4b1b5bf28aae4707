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
keys = ("accuracy", "nll", "brier", "ece", "aece", "classwise_ece", "aurc", "augrc")
expected = {k: case[k] for k in keys}
expected.update(ref.ood_reference(1 - p.max(1), 1 - q.max(1)))
(out / "expected.json").write_text(json.dumps({k: float(v) for k, v in expected.items()}, indent=1) + "\n")
print(json.dumps({k: float(v) for k, v in expected.items()}, indent=1))

# Saved features for the feature-space detectors: 2 members, training features with labels, test
# and OOD features, and their logits (for ViM). The CLI fits each detector per member on the
# training features and averages the member scores; the references come from
# scripts/feature_fixtures.py on the same f32 values widened to f64.
import feature_fixtures as feat  # noqa: E402

members_f, d, n_train, n_test, n_far = 2, 8, 300, 100, 80
train_labels = np.arange(n_train) % c
centres = rng.normal(0, 3, (members_f, c, d))
train_f = (centres[:, train_labels] + rng.normal(0, 1, (members_f, n_train, d))).astype(np.float32)
test_labels = np.arange(n_test) % c
test_f = (centres[:, test_labels] + rng.normal(0, 1, (members_f, n_test, d))).astype(np.float32)
# OOD near the classes, wider and shifted: separable, but not perfectly.
ood_labels = rng.integers(0, c, n_far)
ood_f = (centres[:, ood_labels] + 1.0 + rng.normal(0, 1.6, (members_f, n_far, d))).astype(np.float32)
w = rng.normal(0, 1, (members_f, d, c))
logit = lambda x: (x.astype(np.float64) @ w).astype(np.float32)
saved = {
    "train_features": train_f,
    "train_labels": train_labels.astype(np.int64),
    "features": test_f,
    "ood_features": ood_f,
    "train_logits": logit(train_f),
    "test_logits": logit(test_f),
    "ood_feature_logits": logit(ood_f),
}
for name, array in saved.items():
    np.save(out / f"{name}.npy", array)
wide = {k: v.astype(np.float64) for k, v in saved.items()}


def member_mean(score):
    """A detector's scores of the test and the OOD features, averaged over members."""
    pairs = [score(k, wide["features"][k], wide["test_logits"][k]) for k in range(members_f)]
    far = [score(k, wide["ood_features"][k], wide["ood_feature_logits"][k]) for k in range(members_f)]
    return np.mean(pairs, 0), np.mean(far, 0)


tr, tl = wide["train_features"], train_labels
detectors = {
    # 300 samples in 5 classes over 8 dimensions: 295 >= 10 * 8, so "auto" shrinks nothing.
    "mahalanobis": lambda k, x, _: feat.mahalanobis(tr[k], tl, x, "none"),
    "relative_mahalanobis": lambda k, x, _: feat.relative_mahalanobis(tr[k], tl, x, "none"),
    "vim": lambda k, x, lx: feat.vim(tr[k], wide["train_logits"][k], x, lx, d // 2),
    "knn": lambda k, x, _: feat.knn(tr[k], x, 50),
}
expected_features = {}
for name, score in detectors.items():
    id_scores, ood_scores = member_mean(score)
    expected_features[name] = {k: float(v) for k, v in ref.ood_reference(id_scores, ood_scores).items()}
(out / "expected_features.json").write_text(json.dumps(expected_features, indent=1) + "\n")
print(json.dumps(expected_features, indent=1))
