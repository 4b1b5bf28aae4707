//! Declared claims: what an experiment file says it sets out to show (`[[claim]]`), each
//! decided by the test that matches it (one-sided paired t for non-inferiority and
//! superiority, TOST for equivalence), Holm-adjusted over the declared claims alone. Every
//! other comparison of the run is exploratory.

use serde::{Deserialize, Serialize};
use uq_metrics::{ALPHA, ClaimKind};

use crate::compare::{aligned, metrics};
use crate::summary::{Family, MethodResult, Summary};

/// One `[[claim]]` of an experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// A `[[method]]` name (or an evaluated variant, `<method>+ts`).
    pub method: String,
    /// The method it is held against.
    pub reference: String,
    /// A compared metric: `id.accuracy`, `id.nll`, `ood.<set>.auroc`, `shift.mean.ece`, ...
    pub metric: String,
    pub kind: ClaimKind,
    /// The margin in the metric's units (0.005 = half a point of accuracy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// The margin as a share of the reference's mean gain over the run's baseline on the
    /// metric (0.2: the method may lose a fifth of what the reference gains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_share: Option<f64>,
    /// Why the claim is tested (one line: whose claim, which paper).
    pub reason: String,
}

/// Whether a declared claim was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimVerdict {
    /// Its Holm-adjusted p-value is below [`ALPHA`].
    Shown,
    /// It is not (more seeds may show it: see `seeds_needed`).
    #[serde(rename = "not shown")]
    NotShown,
    /// Fewer than two seeds, a metric the run lacks, or a share margin of a reference that
    /// gains nothing over the baseline.
    #[default]
    #[serde(rename = "n/a")]
    Undefined,
}

/// A declared claim as decided: differences are method − reference in the metric's units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimResult {
    pub claim: Claim,
    pub higher_is_better: bool,
    pub n_seeds: usize,
    /// The margin tested, in the metric's units (from `margin_share`: the share of the
    /// reference's mean gain over `baseline` on these seeds).
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub margin: f64,
    pub baseline: String,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub mean_diff: f64,
    /// The 90% interval of the difference: the claim is shown (before Holm) exactly when it
    /// clears the margin on the claim's side.
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub ci90_low: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub ci90_high: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub p: f64,
    /// Holm-adjusted over the declared claims.
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub p_holm: f64,
    pub verdict: ClaimVerdict,
    /// Seeds at which the claim's test shows it with 80% power at the observed mean and
    /// spread (`None`: over 1000, or the observed mean contradicts it).
    pub seeds_needed: Option<usize>,
    pub family: Family,
}

/// Decides `claims` on `runs`, the shares against `baseline`; Holm over the claims.
pub fn decide_claims(runs: &[MethodResult], claims: &[Claim], baseline: &str) -> Vec<ClaimResult> {
    let metrics = metrics(runs);
    let mut out: Vec<ClaimResult> = (claims.iter())
        .map(|claim| {
            let found = metrics.iter().find(|(name, ..)| *name == claim.metric);
            let higher = found.is_some_and(|(_, h, _)| *h);
            let mut result = ClaimResult {
                claim: claim.clone(),
                higher_is_better: higher,
                n_seeds: 0,
                margin: f64::NAN,
                baseline: baseline.to_string(),
                mean_diff: f64::NAN,
                ci90_low: f64::NAN,
                ci90_high: f64::NAN,
                p: f64::NAN,
                p_holm: f64::NAN,
                verdict: ClaimVerdict::Undefined,
                seeds_needed: None,
                family: Family::Declared,
            };
            if let Some((_, _, value)) = found {
                decide_one(&mut result, runs, value);
            }
            result
        })
        .collect();
    let p: Vec<f64> = out.iter().map(|c| c.p).collect();
    for (c, p_holm) in out.iter_mut().zip(uq_metrics::holm(&p)) {
        c.p_holm = p_holm;
        c.verdict = match p_holm.is_nan() {
            true => ClaimVerdict::Undefined,
            false if p_holm < ALPHA => ClaimVerdict::Shown,
            false => ClaimVerdict::NotShown,
        };
    }
    out
}

/// The test of one claim, its p-value raw (Holm comes after, over all of them).
fn decide_one(
    c: &mut ClaimResult,
    runs: &[MethodResult],
    value: &dyn Fn(&MethodResult) -> Option<f64>,
) {
    let sign = if c.higher_is_better { 1.0 } else { -1.0 };
    let (method, reference) = (c.claim.method.as_str(), c.claim.reference.as_str());
    let (gains, margin) = match (c.claim.margin, c.claim.margin_share) {
        (Some(m), _) => {
            let [a, r] = aligned(runs, [method, reference], value);
            (oriented(&a, &r, sign), m)
        }
        (None, Some(share)) => {
            // The reference's gain over the baseline on the same seeds.
            let [a, r, b] = aligned(runs, [method, reference, &c.baseline], value);
            let kept = oriented(&r, &b, sign);
            let gain = kept.iter().sum::<f64>() / kept.len() as f64;
            (oriented(&a, &r, sign), share * gain)
        }
        // Superiority with no margin: better at all.
        (None, None) => {
            let [a, r] = aligned(runs, [method, reference], value);
            (oriented(&a, &r, sign), 0.0)
        }
    };
    c.n_seeds = gains.len();
    c.margin = margin;
    let Ok(test) = uq_metrics::claim_test(&gains, c.claim.kind, margin) else {
        return; // A share margin of a reference that gains nothing: undefined.
    };
    let mean = gains.iter().sum::<f64>() / gains.len() as f64;
    // Back to the metric's units and direction.
    let (low, high) = (sign * test.ci90_low, sign * test.ci90_high);
    (c.mean_diff, c.ci90_low, c.ci90_high) = (sign * mean, low.min(high), low.max(high));
    (c.p, c.seeds_needed) = (test.p, test.seeds_needed);
}

/// Per seed `sign (a − b)`: positive where `a` is better.
fn oriented(a: &[f64], b: &[f64], sign: f64) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| sign * (x - y)).collect()
}

/// Fills `summary`'s shares of its reference's gain over its baseline ([`crate::retained()`])
/// and its declared `claims`, decided; call once the methods and roles are in.
pub fn conclude(summary: &mut Summary, claims: &[Claim]) {
    let reference = (summary.reference.as_deref()).unwrap_or(crate::DEFAULT_REFERENCE);
    summary.retained = crate::retained(&summary.methods, reference, summary.baseline());
    summary.claims = decide_claims(&summary.methods, claims, summary.baseline());
}
