"""Feature-space detectors against scikit-learn's covariance estimators and NearestNeighbors, and
a numpy ViM (the definitions of scripts/feature_fixtures.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.covariance import EmpiricalCovariance, LedoitWolf, ShrunkCovariance, ledoit_wolf_shrinkage
from sklearn.neighbors import NearestNeighbors

import uqformer as uq


# ---- references ----------------------------------------------------------------------------


def precision(centred, shrinkage):
    if shrinkage == "none":
        est = EmpiricalCovariance(assume_centered=True)
    elif shrinkage == "ledoit_wolf":
        est = LedoitWolf(assume_centered=True)
    else:
        est = ShrunkCovariance(shrinkage=shrinkage, assume_centered=True)
    return est.fit(centred).precision_  # pinvh of the covariance


def sq_mahalanobis(x, means, prec):
    diff = x[:, None, :] - means[None]
    return np.einsum("ncd,de,nce->nc", diff, prec, diff)


def ref_mahalanobis(train, labels, test, shrinkage="none"):
    means = np.stack([train[labels == c].mean(0) for c in range(labels.max() + 1)])
    return sq_mahalanobis(test, means, precision(train - means[labels], shrinkage)).min(1)


def ref_relative(train, labels, test, shrinkage="none"):
    # The background is shrunk by the share Ledoit-Wolf gives the class covariance.
    if shrinkage == "ledoit_wolf":
        means = np.stack([train[labels == c].mean(0) for c in range(labels.max() + 1)])
        shrinkage = ledoit_wolf_shrinkage(train - means[labels], assume_centered=True)
    mean = train.mean(0)
    background = sq_mahalanobis(test, mean[None], precision(train - mean, shrinkage))[:, 0]
    return ref_mahalanobis(train, labels, test, shrinkage) - background


def unit(x):
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-10)


def ref_knn(train, test, k):
    distances, _ = NearestNeighbors(n_neighbors=k).fit(unit(train)).kneighbors(unit(test))
    return distances[:, -1]


def ref_vim(train, train_logits, test, test_logits, dim):
    origin = train.mean(0)
    values, vectors = np.linalg.eigh(np.cov(train - origin, rowvar=False, bias=True))
    residual = vectors[:, np.argsort(-values)[dim:]]  # outside the `dim` leading directions
    norm = lambda x: np.linalg.norm((x - origin) @ residual, axis=-1)  # noqa: E731
    alpha = train_logits.max(-1).mean() / norm(train).mean()
    return alpha * norm(test) - logsumexp(test_logits, axis=-1)


def assert_close(got, ref):
    # Eigendecompositions / pseudo-inverses computed two ways: agreement to ~1e-12 relative;
    # scores near 0 (a test point at a class mean) are compared against the scale of the set.
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * np.max(np.abs(ref)))


# ---- data ------------------------------------------------------------------------------------


def blobs(rng, n, d, classes, spread=3.0):
    centres = rng.normal(0, spread, (classes, d))
    labels = np.arange(n) % classes
    mixing = rng.normal(0, 1, (d, d)) / np.sqrt(d) + np.eye(d)
    return centres[labels] + rng.normal(0, 1, (n, d)) @ mixing, labels


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(20261206)
    train, labels = blobs(rng, 240, 6, 3)
    test = np.concatenate([train[:15] + 0.3 * rng.normal(size=(15, 6)), rng.normal(0, 6, (10, 6))])
    w = rng.normal(0, 1, (6, 4))
    return {
        "train": train,
        "labels": labels,
        "test": test,
        "train_logits": train @ w + 1.0,
        "test_logits": test @ w + 1.0,
    }


def test_detectors_dict():
    assert set(uq.DETECTORS) == {"mahalanobis", "relative_mahalanobis", "vim", "knn"}
    assert all(isinstance(v, str) and v for v in uq.DETECTORS.values())


@pytest.mark.parametrize("shrinkage", ["none", "ledoit_wolf", 0.0, 0.3, 1.0])
def test_mahalanobis(data, shrinkage):
    det = uq.FeatureDetector("mahalanobis", shrinkage=shrinkage).fit(data["train"], data["labels"])
    assert_close(det.score(data["test"]), ref_mahalanobis(data["train"], data["labels"], data["test"], shrinkage))


@pytest.mark.parametrize("shrinkage", ["none", "ledoit_wolf", 0.5])
def test_relative_mahalanobis(data, shrinkage):
    det = uq.FeatureDetector("relative_mahalanobis", shrinkage=shrinkage)
    det.fit(data["train"], data["labels"])
    assert_close(det.score(data["test"]), ref_relative(data["train"], data["labels"], data["test"], shrinkage))


def test_far_points_score_higher(data):
    det = uq.FeatureDetector("mahalanobis", shrinkage="none").fit(data["train"], data["labels"])
    s = det.score(data["test"])
    assert s[:15].max() < s[15:].min()


def test_mahalanobis_auto_shrinkage_rule():
    rng = np.random.default_rng(3)
    # 40 samples in 2 classes, 8 dims: 38 degrees of freedom < 10 * 8, so Ledoit-Wolf.
    small, small_labels = blobs(rng, 40, 8, 2)
    probe = rng.normal(0, 3, (10, 8))
    det = uq.FeatureDetector("mahalanobis").fit(small, small_labels)
    assert_close(det.score(probe), ref_mahalanobis(small, small_labels, probe, "ledoit_wolf"))
    # 600 samples in 3 classes, 5 dims: 597 >= 50, the empirical covariance.
    big, big_labels = blobs(rng, 600, 5, 3)
    probe = rng.normal(0, 3, (10, 5))
    det = uq.FeatureDetector("mahalanobis").fit(big, big_labels)
    assert_close(det.score(probe), ref_mahalanobis(big, big_labels, probe, "none"))


def test_mahalanobis_rank_deficient_uses_pseudo_inverse(data):
    # Layer-normed features: every row sums to 0, the covariance has rank D - 1.
    ln = data["train"] - data["train"].mean(1, keepdims=True)
    ln_test = data["test"] - data["test"].mean(1, keepdims=True)
    det = uq.FeatureDetector("mahalanobis", shrinkage="none").fit(ln, data["labels"])
    assert_close(det.score(ln_test), ref_mahalanobis(ln, data["labels"], ln_test, "none"))


@pytest.mark.parametrize("k", [1, 5, 50, 240])
def test_knn(data, k):
    det = uq.FeatureDetector("knn", k=k).fit(data["train"], data["labels"])
    assert_close(det.score(data["test"]), ref_knn(data["train"], data["test"], k))


def test_knn_zero_feature_stays_zero(data):
    det = uq.FeatureDetector("knn", k=3).fit(data["train"], data["labels"])
    # The zero vector is normalised to itself (norm + 1e-10): its distance to the training
    # vectors, of norm 1 - 1e-10 / |x|, is about 1.
    zero = np.zeros((1, 6))
    assert_close(det.score(zero), ref_knn(data["train"], zero, 3))
    assert det.score(zero)[0] == pytest.approx(1.0, abs=1e-9)


def test_knn_scoring_the_training_set_counts_itself(data):
    det = uq.FeatureDetector("knn", k=1).fit(data["train"], data["labels"])
    np.testing.assert_allclose(det.score(data["train"]), 0.0, atol=1e-7)  # sqrt of rounding


@pytest.mark.parametrize("dim", [None, 2, 3, 5])
def test_vim(data, dim):
    det = uq.FeatureDetector("vim", vim_dim=dim)
    det.fit(data["train"], data["labels"], logits=data["train_logits"])
    expected = ref_vim(
        data["train"], data["train_logits"], data["test"], data["test_logits"],
        dim if dim is not None else 6 // 2,  # the default below width 768: half the width
    )
    assert_close(det.score(data["test"], logits=data["test_logits"]), expected)


# ---- ensembles: one detector per member, the mean of their scores -------------------------


@pytest.fixture(scope="module")
def members(data):
    rng = np.random.default_rng(8)
    mix = [np.eye(6), np.eye(6) + 0.2 * rng.normal(size=(6, 6)), rng.normal(size=(6, 6))]
    train = np.stack([data["train"] @ a for a in mix])
    test = np.stack([data["test"] @ a for a in mix])
    shift = np.array([0.0, 0.5, -0.3])[:, None, None]
    return train, test, data["train_logits"][None] + shift, data["test_logits"][None] + shift


def test_members_mahalanobis_and_knn(data, members):
    train, test, _, _ = members
    y = data["labels"]
    det = uq.FeatureDetector("mahalanobis", shrinkage="none").fit(train, y)
    assert_close(det.score(test), np.mean([ref_mahalanobis(train[k], y, test[k]) for k in range(3)], 0))
    det = uq.FeatureDetector("relative_mahalanobis", shrinkage="none").fit(train, y)
    assert_close(det.score(test), np.mean([ref_relative(train[k], y, test[k]) for k in range(3)], 0))
    det = uq.FeatureDetector("knn", k=7).fit(train, y)
    assert_close(det.score(test), np.mean([ref_knn(train[k], test[k], 7) for k in range(3)], 0))


def test_members_vim(data, members):
    train, test, train_logits, test_logits = members
    det = uq.FeatureDetector("vim", vim_dim=2).fit(train, data["labels"], logits=train_logits)
    expected = np.mean(
        [ref_vim(train[k], train_logits[k], test[k], test_logits[k], 2) for k in range(3)], 0
    )
    assert_close(det.score(test, logits=test_logits), expected)


def test_members_equal_the_mean_of_members_fitted_alone(data, members):
    train, test, _, _ = members
    together = uq.FeatureDetector("knn", k=4).fit(train, data["labels"]).score(test)
    alone = [uq.FeatureDetector("knn", k=4).fit(train[k], data["labels"]).score(test[k]) for k in range(3)]
    np.testing.assert_allclose(together, np.mean(alone, axis=0), rtol=1e-14)
