//! Uncertainty metrics for classifiers and ensembles in pure Rust, checked against
//! scikit-learn, numpy and scipy.
//!
//! Inputs are validated once, when built:
//! - [`Probs`] `[N, C]` and [`MemberProbs`] `[M, N, C]`: row-major f64 (or widened f32), every
//!   value finite and in [0, 1], every row summing to 1 within [`DEFAULT_SUM_TOL`];
//! - [`Logits`] `[N, C]`: finite; labels are `&[usize]` below C;
//! - from `ndarray` arrays of any layout (`from_array`: an `ArrayView2` / `ArrayView3` of f32
//!   or f64), and back as views (`view()`, no copy), so that arrays flow in and out as they do
//!   in numpy code.
//!
//! Metrics:
//! - classification: [`accuracy`], [`nll`] (clipped at [`NLL_EPS`]), [`brier`] (multi-class),
//!   [`top_label_confidence`];
//! - calibration on the top label: [`ece`] (equal-width bins `(lo, hi]`), [`adaptive_ece`]
//!   (equal-mass bins), [`reliability_diagram`]; over every class: [`classwise_ece`];
//! - selective classification: [`aurc`] and [`augrc`] (ties resolved by expectation),
//!   [`risk_coverage`];
//! - OOD detection, OOD positive, higher score = more OOD: [`auroc`], [`aupr_out`],
//!   [`aupr_in`], [`fpr95`], or all four from one sort with [`ood_report`]; [`roc_curve`];
//!   [`auroc_bootstrap`] for the spread test-set sampling alone gives an AUROC;
//! - scores (higher = more OOD): [`score`] for any [`Score`] from a [`ScoreInput`];
//! - feature-space OOD detectors ([`Detector`]: Mahalanobis, Relative Mahalanobis, ViM, KNN):
//!   [`fit`] on the training split's [`Features`] `[N, D]` (and labels, and logits for ViM),
//!   then [`Fitted::score`] (higher = more OOD); per ensemble member with [`fit_members`];
//!   [`OodScore`] names either kind of score;
//! - ensemble diversity: [`diversity`] gives a [`Diversity`] (disagreement, mutual information,
//!   pairwise KL, and with labels the member accuracy and the gain of the ensemble over it);
//! - temperature scaling: [`fit_temperature`] (or [`fit_ensemble_temperature`], one T for every
//!   member) on held-out logits (search over
//!   [`TEMPERATURE_RANGE`]), [`scale_logits`], [`softmax_probs`], [`member_softmax`], [`scaled_members`];
//! - split conformal prediction with a [`ConformalScore`] (`thr`, `aps` or `raps` with its
//!   [`Raps`] regulariser):
//!   [`conformal_scores`], [`conformal_threshold`], [`prediction_sets`], or coverage and set
//!   size in a [`ConformalReport`] from [`conformal`];
//! - statistics over seeds: [`mean_ci`] and [`paired`] give an [`Interval`] (mean, sample std,
//!   95% Student-t interval from [`t_quantile_975`]); [`paired_test`] (paired t-test, TOST at
//!   a margin, [`detectable_difference`], [`seeds_needed`]), [`holm`] over a family of tests,
//!   and [`decide`] for a [`Verdict`] (better, worse, equivalent, inconclusive);
//! - declared claims: [`claim_test`] decides a [`ClaimKind`] (non-inferior, superior: one-sided
//!   paired t; equivalent: TOST) with its 90% interval and [`claim_seeds_needed`] (from
//!   [`claim_power`]); [`fieller`] gives a ratio of paired means (the share of a reference's gain
//!   a method keeps) with its Fieller [`RatioSet`].
//!
//! [`evaluate`] bundles the classification metrics into a serialisable [`Report`].
//! Bad input gives a [`MetricsError`], never a panic.

mod bootstrap;
mod calibration;
mod claim;
mod classification;
mod conformal;
mod decide;
mod diversity;
mod error;
mod features;
mod input;
mod nonfinite;
mod ood;
mod ratio;
mod report;
mod scores;
mod selective;
mod stats;
mod temperature;

pub use bootstrap::{AurocBootstrap, auroc_bootstrap};
pub use calibration::{
    DEFAULT_BINS, ReliabilityBin, adaptive_ece, classwise_ece, ece, reliability_diagram,
};
pub use claim::{ClaimKind, ClaimTest, claim_power, claim_seeds_needed, claim_test};
pub use classification::{NLL_EPS, accuracy, brier, nll, top_label_confidence};
pub use conformal::{
    ConformalReport, ConformalScore, Raps, conformal, conformal_scores, conformal_threshold,
    prediction_sets,
};
pub use decide::{
    ALPHA, MAX_SEEDS, POWER, PairedTest, Verdict, decide, detectable_difference, holm, paired_test,
    seeds_needed,
};
pub use diversity::{Diversity, diversity};
pub use error::{MetricsError, Result};
pub use features::{
    AUTO_SHRINK_BELOW, Detector, DetectorOptions, Fitted, FittedMembers, NORM_EPS, OodScore,
    Shrinkage, default_vim_dim, fit, fit_members,
};
pub use input::{DEFAULT_SUM_TOL, Features, Logits, MemberProbs, Probs};
pub use nonfinite::{inf_if_null, nan_if_null};
pub use ood::{OodReport, aupr_in, aupr_out, auroc, fpr95, ood_report, roc_curve};
pub use ratio::{Ratio, RatioSet, fieller};
pub use report::{Options, Report, evaluate};
pub use scores::{Score, ScoreInput, score};
pub use selective::{augrc, aurc, risk_coverage};
pub use stats::{Interval, mean_ci, paired, t_quantile_975};
pub use temperature::{
    TEMPERATURE_RANGE, fit_ensemble_temperature, fit_temperature, member_softmax, scale_logits,
    scaled_members, softmax_probs,
};
