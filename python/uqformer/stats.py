"""Deciding a comparison over seeds the way uqformer decides its own: the paired interval, the
paired t-test, TOST for equivalence within a margin, the verdict, Holm's adjustment over a family,
and the power of the seeds at hand. A seed pairs two runs: same split, same base model."""

from __future__ import annotations

from typing import Optional, Sequence, TypedDict, cast

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _native

ALPHA: float = _native.ALPHA
"""The level of every test (0.05)."""
POWER: float = _native.POWER
"""The power of `detectable_difference` and `seeds_needed` (0.8)."""
MAX_SEEDS: int = _native.MAX_SEEDS
VERDICTS: list[str] = _native.verdicts()


class Interval(TypedDict):
    mean: float
    std: float
    ci_low: float
    ci_high: float
    n: int


def mean_ci(values: ArrayLike) -> Interval:
    """Mean, sample standard deviation and 95% Student-t interval."""
    return cast(Interval, _native.mean_ci(_args.floats("values", values, 1)))


def paired(a: ArrayLike, b: ArrayLike) -> Interval:
    """The interval of the per-seed differences `a - b`."""
    return cast(Interval, _native.paired(_args.floats("a", a, 1), _args.floats("b", b, 1)))


def paired_test(diffs: ArrayLike, margin: float) -> dict:
    """`p_difference` (two-sided paired t-test), `p_equivalence` (TOST at +-margin), its 90%
    interval `ci90_low` / `ci90_high` (equivalence is shown exactly when it lies within
    +-margin), `detectable` (the difference these seeds detect at ALPHA with POWER) and `seeds_needed` (to
    detect one margin), of per-seed differences."""
    return _native.paired_test(_args.floats("diffs", diffs, 1), float(margin))


CLAIM_KINDS: list[str] = ["non-inferior", "equivalent", "superior"]


def claim_test(gains: ArrayLike, kind: str, margin: float) -> dict:
    """A declared claim's test on per-seed gains (method - reference, oriented so that positive
    is better): `p` (one-sided for `non-inferior` and `superior`, TOST for `equivalent`), the 90%
    interval `ci90_low` / `ci90_high` of the mean gain (the claim is shown at ALPHA exactly when
    it lies above -margin, above +margin or within +-margin) and `seeds_needed` for 80% power at
    the observed mean and spread (None past MAX_SEEDS)."""
    return _native.claim_test(_args.floats("gains", gains, 1), str(kind), float(margin))


def retained_share(method_gain: ArrayLike, reference_gain: ArrayLike) -> dict:
    """The share of a reference's gain (over a baseline, per seed) that a method keeps,
    `mean(method_gain) / mean(reference_gain)`, and its 95% Fieller set (`set`: `kind` bounded,
    outside, unbounded or undefined, with `low` and `high` where it has them)."""
    x = _args.floats("method_gain", method_gain, 1)
    y = _args.floats("reference_gain", reference_gain, 1)
    with _args.renamed({"x": "method_gain", "y": "reference_gain"}):
        return _native.retained_share(x, y)


def decide(
    mean_diff: float, p_difference: float, p_equivalence: float, higher_is_better: bool
) -> str:
    """`equivalent` when TOST's p is below ALPHA, else `better` / `worse` when the difference
    test's is, else `inconclusive`; `n/a` when a p-value is NaN."""
    return _native.decide(mean_diff, p_difference, p_equivalence, bool(higher_is_better))


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm's step-down adjustment (statsmodels' `multipletests(method="holm")`); NaN entries
    stay NaN and are left out of the family."""
    return np.asarray(_native.holm(_args.floats("p_values", p_values, 1)))


def detectable_difference(std: float, n: int) -> float:
    """The smallest true mean difference a paired t-test detects from `n` seeds at `std`."""
    return _native.detectable_difference(float(std), _args.count("n", n))


def seeds_needed(std: float, margin: float) -> Optional[int]:
    """The fewest seeds whose detectable difference at `std` is at most `margin` (None past
    MAX_SEEDS)."""
    return _native.seeds_needed(float(std), float(margin))


def compare(
    method: ArrayLike, reference: ArrayLike, margin: float, higher_is_better: bool
) -> dict:
    """One paired comparison of a metric over seeds (`method[i]` and `reference[i]` from seed
    i): the interval of the differences, the tests and the verdict."""
    a, b = _args.floats("method", method, 1), _args.floats("reference", reference, 1)
    with _args.renamed({"a": "method", "b": "reference"}):
        interval = paired(a, b)
    tests = paired_test(a - b, margin)
    return {
        **interval,
        **tests,
        "verdict": decide(
            interval["mean"], tests["p_difference"], tests["p_equivalence"], higher_is_better
        ),
    }


def compare_family(
    comparisons: Sequence[dict], higher_is_better: Sequence[bool]
) -> list[dict]:
    """Holm-adjusts a family of `compare` results, as a run's report does: both tests of every
    comparison (difference and equivalence) form one family; each comparison is then decided
    again from its adjusted p-values (`verdict_holm`)."""
    if len(comparisons) != len(higher_is_better):
        raise _native.UqformerError(
            f"higher_is_better: {len(higher_is_better)} flags for {len(comparisons)} comparisons"
        )
    family = [p for c in comparisons for p in (c["p_difference"], c["p_equivalence"])]
    adjusted = holm(family).reshape(-1, 2) if family else np.empty((0, 2))
    return [
        {
            **c,
            "p_difference_holm": float(pd),
            "p_equivalence_holm": float(pe),
            "verdict_holm": decide(c["mean"], pd, pe, hib),
        }
        for c, (pd, pe), hib in zip(comparisons, adjusted, higher_is_better)
    ]
