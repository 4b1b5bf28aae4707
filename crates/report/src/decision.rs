//! How a paired comparison was decided, and which family of tests it belongs to.

use serde::{Deserialize, Serialize};
use uq_metrics::Verdict;

/// A comparison decided at its margin ([`crate::compare()`]): the raw tests and verdict, the same
/// after Holm's adjustment over every test of the summary, and what the seeds can detect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The equivalence margin (in the metric's own units, e.g. 0.005 = half a point of
    /// accuracy): differences within ± it are too small to matter.
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub margin: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub p_difference: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub p_equivalence: f64,
    /// The 90% interval of the difference, the one the TOST verdict agrees with (absent in
    /// runs older than the field: NaN).
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub ci90_low: f64,
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub ci90_high: f64,
    pub verdict: Verdict,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub p_difference_holm: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub p_equivalence_holm: f64,
    pub verdict_holm: Verdict,
    /// The smallest true difference these seeds detect with 80% power.
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub detectable: f64,
    /// Seeds needed to detect a difference of one margin at this spread (`None`: over 1000).
    pub seeds_needed: Option<usize>,
}

impl Default for Decision {
    fn default() -> Self {
        Self {
            margin: f64::NAN,
            p_difference: f64::NAN,
            p_equivalence: f64::NAN,
            ci90_low: f64::NAN,
            ci90_high: f64::NAN,
            verdict: Verdict::Undefined,
            p_difference_holm: f64::NAN,
            p_equivalence_holm: f64::NAN,
            verdict_holm: Verdict::Undefined,
            detectable: f64::NAN,
            seeds_needed: None,
        }
    }
}

/// The family of tests a decision belongs to: the experiment's declared claims (Holm over them
/// alone), or the exploratory comparisons (Holm over every comparison of the summary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Declared,
    #[default]
    Exploratory,
}

fn nan() -> f64 {
    f64::NAN
}
