//! One-call summary of the classification and calibration metrics.

use serde::{Deserialize, Serialize};

use crate::calibration::{DEFAULT_BINS, adaptive_ece, classwise_ece, ece};
use crate::classification::{accuracy, brier, check_labels, confidences, nll};
use crate::error::Result;
use crate::input::Probs;
use crate::selective::{augrc, aurc};

/// Bin counts for [`evaluate`]; both default to [`DEFAULT_BINS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Equal-width bins of ECE.
    pub bins: usize,
    /// Equal-mass bins of adaptive ECE.
    pub adaptive_bins: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bins: DEFAULT_BINS,
            adaptive_bins: DEFAULT_BINS,
        }
    }
}

/// Classification, calibration and selective-classification metrics of one prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub n: usize,
    pub accuracy: f64,
    pub nll: f64,
    pub brier: f64,
    pub ece: f64,
    pub aece: f64,
    /// Class-wise ECE with `bins` equal-width bins.
    pub classwise_ece: f64,
    /// AURC ranking samples by the MSP score `1 - max_c p[c]`.
    pub aurc: f64,
    /// AUGRC, with the same ranking.
    pub augrc: f64,
}

/// All [`Report`] metrics of `probs` against `labels`.
pub fn evaluate(probs: &Probs, labels: &[usize], opts: &Options) -> Result<Report> {
    check_labels(probs, labels)?;
    let (uncertainty, correct): (Vec<f64>, Vec<bool>) = confidences(probs, labels)
        .into_iter()
        .map(|(conf, ok)| (1.0 - conf, ok))
        .unzip();
    Ok(Report {
        n: probs.n(),
        accuracy: accuracy(probs, labels)?,
        nll: nll(probs, labels)?,
        brier: brier(probs, labels)?,
        ece: ece(probs, labels, opts.bins)?,
        aece: adaptive_ece(probs, labels, opts.adaptive_bins)?,
        classwise_ece: classwise_ece(probs, labels, opts.bins)?,
        aurc: aurc(&uncertainty, &correct)?,
        augrc: augrc(&uncertainty, &correct)?,
    })
}
