"""Bad input raises `UqformerError` (a `ValueError`) whose message starts with the offending
argument's name ("labels: ...") — never a crash, never a silent wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

import uqformer as uq

P = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
Y = np.array([0, 1, 2])
MEMBERS = np.stack([P, P[::-1]])
NAN_P = np.where(P == 0.8, np.nan, P)
Z = np.log(P)
X = np.random.default_rng(0).normal(size=(60, 3))
L = np.arange(60) % 2


def fitted(name="knn", x=X, **kw):
    return uq.FeatureDetector(name, **kw).fit(x, L, logits=X[..., :2] + 3 if name == "vim" else None)


def calibrated(**kw):
    return uq.Conformal("aps", alpha=0.5, **kw).calibrate(P, Y)


# (id, call, the argument the message must start with)
CASES = [
    # ---- metrics
    ("labels 3-D", lambda: uq.accuracy(P, np.zeros((3, 1, 1), int)), "labels"),
    ("probs 1-D", lambda: uq.accuracy([0.5, 0.5], [0]), "probs"),
    ("probs 4-D", lambda: uq.accuracy(P[None, None], Y), "probs"),
    ("probs NaN", lambda: uq.nll(NAN_P, Y), "probs"),
    ("probs inf", lambda: uq.brier(np.where(P == 0.8, np.inf, P), Y), "probs"),
    ("probs not summing to 1", lambda: uq.nll(P * 1.1, Y), "probs"),
    ("probs negative", lambda: uq.nll([[1.2, -0.2]], [0]), "probs"),
    ("probs strings", lambda: uq.nll([["a", "b"]], [0]), "probs"),
    ("probs ragged", lambda: uq.nll([[0.5, 0.5], [1.0]], [0, 0]), "probs"),
    ("labels out of range", lambda: uq.ece(P, [0, 3, 2]), "labels"),
    ("labels negative", lambda: uq.ece(P, [0, -1, 2]), "labels"),
    ("labels fractional", lambda: uq.accuracy(P, [0, 1.5, 2]), "labels"),
    ("labels NaN", lambda: uq.accuracy(P, [0, np.nan, 2]), "labels"),
    ("labels strings", lambda: uq.accuracy(P, ["a", "b", "c"]), "labels"),
    ("labels too few", lambda: uq.adaptive_ece(P, [0, 1]), "labels"),
    ("evaluate labels", lambda: uq.evaluate(P, [0, 1, 9]), "labels"),
    ("ece bins 0", lambda: uq.ece(P, Y, bins=0), "bins"),
    ("aece bins 0", lambda: uq.adaptive_ece(P, Y, bins=0), "bins"),
    ("cwece bins 0", lambda: uq.classwise_ece(P, Y, bins=0), "bins"),
    ("evaluate bins 0", lambda: uq.evaluate(P, Y, bins=0), "bins"),
    ("diagram bins 0", lambda: uq.reliability_diagram(P, Y, bins=0), "bins"),
    ("uncertainty NaN", lambda: uq.aurc([np.nan, 0.1], [True, False]), "uncertainty"),
    ("uncertainty 2-D", lambda: uq.augrc([[0.1]], [True]), "uncertainty"),
    ("correct length", lambda: uq.aurc([0.1, 0.2], [True]), "correct"),
    ("correct not boolean", lambda: uq.augrc([0.1, 0.2], [2, 0]), "correct"),
    ("diversity 1 member", lambda: uq.diversity(P[None]), "members"),
    ("diversity [N, C]", lambda: uq.diversity(P), "members"),
    ("diversity labels length", lambda: uq.diversity(MEMBERS, [0, 1]), "labels"),
    # ---- OOD
    ("id NaN", lambda: uq.auroc([np.nan, 0.1], [1.0]), "id_scores"),
    ("ood inf", lambda: uq.ood_report([0.1], [np.inf]), "ood_scores"),
    ("id 2-D", lambda: uq.aupr_in(np.zeros((2, 2)), [1.0]), "id_scores"),
    ("ood scalar", lambda: uq.fpr95([1.0], 1.0), "ood_scores"),
    ("roc NaN", lambda: uq.roc_curve([0.0], [np.nan]), "ood_scores"),
    ("bootstrap NaN", lambda: uq.auroc_bootstrap([np.nan], [1.0]), "id_scores"),
    ("bootstrap resamples 1", lambda: uq.auroc_bootstrap([0.0], [1.0], resamples=1), "resamples"),
    ("score unknown", lambda: uq.score("softmax", probs=P), "name"),
    ("score probs NaN", lambda: uq.score("msp", probs=NAN_P), "probs"),
    ("score probs not summing", lambda: uq.score("entropy", probs=P * 0.5), "probs"),
    ("score logits NaN", lambda: uq.score("energy", logits=np.where(P == 0.8, np.nan, Z)), "logits"),
    ("score members [N, C]", lambda: uq.score("mutual_info", members=P), "members"),
    ("score members NaN", lambda: uq.score("disagreement", members=np.full((2, 3, 3), np.nan)), "members"),
    ("detector unknown", lambda: uq.FeatureDetector("odin"), "name"),
    ("shrinkage weight", lambda: fitted("mahalanobis", shrinkage=2.0), "shrinkage"),
    ("shrinkage name", lambda: fitted("mahalanobis", shrinkage="oas"), "shrinkage"),
    ("features NaN", lambda: fitted("mahalanobis", x=np.where(X > 2, np.nan, X)), "features"),
    ("features 4-D", lambda: uq.FeatureDetector("knn").fit(np.zeros((1, 1, 60, 3)), L), "features"),
    ("detector labels length", lambda: uq.FeatureDetector("knn").fit(X, L[:5]), "labels"),
    ("detector labels negative", lambda: uq.FeatureDetector("knn").fit(X, -L), "labels"),
    ("score features NaN", lambda: fitted(k=3).score(np.full((2, 3), np.nan)), "features"),
    ("score width", lambda: fitted(k=3).score(np.zeros((2, 4))), "features"),
    ("score members", lambda: fitted(x=np.stack([X, X]), k=3).score(X), "features"),
    ("score unfitted", lambda: uq.FeatureDetector("knn").score(X), "score"),
    ("vim logits rows", lambda: uq.FeatureDetector("vim").fit(X, L, logits=np.zeros((59, 2))), "logits"),
    ("unshrunk singular", lambda: uq.FeatureDetector("mahalanobis", shrinkage="none").fit(X[:3], L[:3]), "features"),
    ("class without features", lambda: uq.FeatureDetector("mahalanobis").fit(X, 2 * L), "features"),
    # ---- calibration
    ("fit_temperature labels length", lambda: uq.fit_temperature(Z, [0, 1]), "val_labels"),
    ("fit_temperature labels 2-D", lambda: uq.fit_temperature(Z, Y[:, None]), "val_labels"),
    ("temperature 0", lambda: uq.temperature_scale(Z, 0.0), "temperature"),
    ("temperature negative", lambda: uq.temperature_scale(Z, -1.0), "temperature"),
    ("temperature NaN", lambda: uq.temperature_scale(Z, np.nan), "temperature"),
    ("temperature_scale logits NaN", lambda: uq.temperature_scale(np.full((2, 2), np.nan), 1.0), "logits"),
    ("conformal score unknown", lambda: uq.Conformal("lac").calibrate(P, Y), "score"),
    ("conformal raps bad", lambda: uq.Conformal("raps(foo=1)").calibrate(P, Y), "score"),
    ("penalty for thr", lambda: uq.Conformal("thr", penalty=0.1).calibrate(P, Y), "penalty"),
    ("k_reg for aps", lambda: uq.conformal(P, Y, P, Y, "aps", k_reg=2), "penalty"),
    ("penalty negative", lambda: uq.Conformal("raps", penalty=-0.1).scores(P, Y), "penalty"),
    ("alpha 0", lambda: uq.Conformal(alpha=0.0).calibrate(P, Y), "alpha"),
    ("alpha 1", lambda: uq.conformal(P, Y, P, Y, alpha=1.0), "alpha"),
    ("alpha 1.5", lambda: uq.Conformal(alpha=1.5).calibrate(P, Y), "alpha"),
    ("alpha negative", lambda: uq.conformal(P, Y, P, Y, alpha=-0.1), "alpha"),
    ("alpha NaN", lambda: uq.Conformal(alpha=np.nan).calibrate(P, Y), "alpha"),
    ("predict uncalibrated", lambda: uq.Conformal().predict(P), "predict"),
    ("calibrate probs NaN", lambda: uq.Conformal().calibrate(NAN_P, Y), "probs"),
    ("predict probs NaN", lambda: calibrated().predict(NAN_P), "probs"),
    ("scores labels", lambda: uq.Conformal().scores(P, [0, 1, 3]), "labels"),
    ("evaluate labels", lambda: calibrated().evaluate(P, [0, 1, 3]), "labels"),
    ("cal_labels", lambda: uq.conformal(P, [0, 1, 3], P, Y), "cal_labels"),
    ("test_labels", lambda: uq.conformal(P, Y, P, [0, 1, 3]), "test_labels"),
    ("cal_probs NaN", lambda: uq.conformal(NAN_P, Y, P, Y), "cal_probs"),
    ("test_probs classes", lambda: uq.conformal(P, Y, P[:, :2] / P[:, :2].sum(1, keepdims=True), [0, 1, 0]), "test_probs"),
    # ---- stats
    ("values inf", lambda: uq.mean_ci([1.0, np.inf]), "values"),
    ("values 2-D", lambda: uq.mean_ci([[1.0, 2.0]]), "values"),
    ("paired lengths", lambda: uq.paired([1.0, 2.0], [1.0]), "b"),
    ("paired inf", lambda: uq.paired([np.inf, 1.0], [1.0, 2.0]), "a"),
    ("margin 0", lambda: uq.paired_test([0.1, 0.2], 0.0), "margin"),
    ("margin negative", lambda: uq.paired_test([0.1, 0.2], -0.1), "margin"),
    ("margin NaN", lambda: uq.paired_test([0.1, 0.2], np.nan), "margin"),
    ("diffs inf", lambda: uq.paired_test([np.inf, 0.1], 0.1), "diffs"),
    ("holm above 1", lambda: uq.holm([0.5, 1.5]), "p_values"),
    ("holm negative", lambda: uq.holm([-0.1]), "p_values"),
    ("compare margin", lambda: uq.compare([1.0, 2.0], [1.0, 2.0], 0.0, True), "margin"),
    # ---- once suspected bugs (review of the first version), fixed: wrong argument named,
    # negative integers raising OverflowError, negative labels wrapping round in evaluate.
    ("calibrate labels out of range", lambda: uq.Conformal().calibrate(P, [0, 1, 3]), "labels"),
    ("evaluate negative labels", lambda: calibrated().evaluate(P, [0, 1, -1]), "labels"),
    ("ood empty id", lambda: uq.auroc([], [1.0]), "id_scores"),
    ("ood empty ood", lambda: uq.ood_report([1.0], []), "ood_scores"),
    ("aurc empty", lambda: uq.aurc([], []), "uncertainty"),
    ("members probs NaN", lambda: uq.accuracy(np.stack([NAN_P, P]), Y), "probs"),
    ("members cal_probs", lambda: uq.conformal(np.stack([P * 2, P]), Y, P, Y), "cal_probs"),
    ("diversity labels out of range", lambda: uq.diversity(MEMBERS, [0, 1, 7]), "labels"),
    ("fit_temperature labels out of range", lambda: uq.fit_temperature(Z, [0, 1, 3]), "val_labels"),
    ("fit_temperature logits NaN", lambda: uq.fit_temperature(np.full((3, 3), np.nan), Y), "val_logits"),
    ("compare method inf", lambda: uq.compare([np.inf, 1.0], [1.0, 2.0], 0.1, True), "method"),
    ("compare lengths", lambda: uq.compare([1.0, 2.0], [1.0, 2.0, 3.0], 0.1, True), "reference"),
    ("knn k too large", lambda: uq.FeatureDetector("knn", k=61).fit(X, L), "k"),
    ("vim_dim too large", lambda: fitted("vim", vim_dim=3), "vim_dim"),
    ("bins -1", lambda: uq.ece(P, Y, bins=-1), "bins"),
    ("resamples -1", lambda: uq.auroc_bootstrap([0.0], [1.0], resamples=-1), "resamples"),
    ("seed -1", lambda: uq.auroc_bootstrap([0.0], [1.0], seed=-1), "seed"),
    ("k -1", lambda: uq.FeatureDetector("knn", k=-1).fit(X, L), "k"),
    ("k_reg -1", lambda: uq.Conformal("raps", k_reg=-1).calibrate(P, Y), "k_reg"),
    ("detectable n -1", lambda: uq.detectable_difference(1.0, -1), "n"),
    ("compare_family flags", lambda: uq.compare_family([uq.compare([1.0, 2.0], [1.5, 2.0], 1.0, True)], [True, False]), "higher_is_better"),
]

def check(call, name):
    try:
        call()
    except uq.UqformerError as e:
        assert isinstance(e, ValueError)
        assert str(e).startswith(f"{name}:"), str(e)
    else:
        pytest.fail(f"no error; expected one naming {name}")


@pytest.mark.parametrize("call,name", [pytest.param(c, n, id=i) for i, c, n in CASES])
def test_error_names_the_argument(call, name):
    check(call, name)
