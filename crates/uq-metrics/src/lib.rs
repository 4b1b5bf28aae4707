//! Uncertainty metrics in pure Rust (METHODS.md §5), checked against scikit-learn to 1e-9.
//!
//! Inputs are validated once, when built:
//! - [`Probs`] `[N, C]` and [`MemberProbs`] `[M, N, C]`: row-major f64 (or widened f32), every
//!   value finite and in [0, 1], every row summing to 1 within [`DEFAULT_SUM_TOL`];
//! - [`Logits`] `[N, C]`: finite; labels are `&[usize]` below C.
//!
//! Metrics:
//! - classification: [`accuracy`], [`nll`] (clipped at [`NLL_EPS`]), [`brier`] (multi-class);
//! - calibration on the top label: [`ece`] (equal-width bins `(lo, hi]`), [`adaptive_ece`]
//!   (equal-mass bins), [`reliability_diagram`];
//! - selective classification: [`aurc`] (ties resolved by expectation);
//! - OOD detection, OOD positive, higher score = more OOD: [`auroc`], [`aupr_out`],
//!   [`aupr_in`], [`fpr95`], or all four from one sort with [`ood_report`];
//! - scores (higher = more OOD): [`score`] for any [`Score`] from a [`ScoreInput`].
//!
//! [`evaluate`] bundles the classification metrics into a serialisable [`Report`].
//! Bad input gives a [`MetricsError`], never a panic.

mod calibration;
mod classification;
mod error;
mod input;
mod ood;
mod report;
mod scores;
mod selective;

pub use calibration::{DEFAULT_BINS, ReliabilityBin, adaptive_ece, ece, reliability_diagram};
pub use classification::{NLL_EPS, accuracy, brier, nll};
pub use error::{MetricsError, Result};
pub use input::{DEFAULT_SUM_TOL, Logits, MemberProbs, Probs};
pub use ood::{OodReport, aupr_in, aupr_out, auroc, fpr95, ood_report};
pub use report::{Options, Report, evaluate};
pub use scores::{Score, ScoreInput, score};
pub use selective::aurc;
