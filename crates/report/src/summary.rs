//! The results of a run, as `summary.json` holds them (written by [`crate::write_run`]).
//!
//! Non-finite metrics: `serde_json` writes NaN and ±inf as `null`; every `f64` metric here reads
//! `null` back as NaN, so a summary always re-reads (an infinity comes back as NaN: both mean "not
//! defined" to the report, which shows them as "n/a").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uq_metrics::{AurocBootstrap, ConformalReport, Diversity};

pub use crate::decision::{Decision, Family};
use crate::outputs::Extra;

/// Everything a run measured: one [`MethodResult`] per method and seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub experiment: String,
    pub seeds: Vec<u64>,
    /// Entries written before `method` and `variant` existed get them from what they record.
    #[serde(deserialize_with = "crate::legacy::methods")]
    pub methods: Vec<MethodResult>,
    /// The `[[method]]` whose cost and accuracy the report's ratios and gains are relative to,
    /// and the one every method is compared with (`[eval] baseline`, `reference`); absent in
    /// runs older than the fields, which used the defaults (`DEFAULT_BASELINE`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The OOD scores listed, the headline score (each entry's `ood`) first; absent in runs
    /// older than the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ood_scores: Vec<String>,
    /// Every method against the reference method, paired by seed ([`crate::compare()`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Comparison>,
    /// The share of the reference's gain over the baseline each other method keeps, per
    /// metric ([`crate::retained()`]); absent in runs older than the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retained: Vec<crate::RetainedShare>,
    /// The experiment's declared claims (`[[claim]]`), decided ([`crate::decide_claims`]);
    /// absent when it declares none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<crate::ClaimResult>,
    /// Where the run came from (absent from runs made before it, and from joins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::Provenance>,
}

/// One method against the reference on one metric: the mean per-seed difference
/// (method − reference) and its paired 95% Student-t interval (NaN with one seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub method: String,
    pub reference: String,
    /// `id.accuracy`, `ood.<set>.auroc`, `shift.mean.nll`, ...
    pub metric: String,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub mean_diff: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub ci_high: f64,
    pub n_seeds: usize,
    /// Whether a higher value of the metric is better.
    pub higher_is_better: bool,
    /// The tests at the metric's equivalence margin and their verdicts (absent in runs older
    /// than the field: undefined).
    #[serde(default)]
    pub decision: Decision,
    /// `exploratory`: every comparison is, its Holm adjustment over them all; a declared
    /// claim is decided apart, in [`Summary::claims`].
    #[serde(default)]
    pub family: Family,
}

/// One method evaluated with one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodResult {
    /// The display name: the `[[method]]` name, with `+ts` / `+bf16` for a variant
    /// ([`Variant::name`]); derived from `method` and `variant`, never parsed back.
    pub name: String,
    /// The `[[method]]` name this entry evaluates.
    #[serde(default)]
    pub method: String,
    /// Which variant of the method this entry is; absent for the method itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    /// The method kind as written in the config (`single`, `deep_ensemble`, ...).
    pub kind: String,
    pub members: usize,
    pub seed: u64,
    pub id: IdMetrics,
    /// Keyed by OOD set name: the headline OOD score's metrics (the first listed).
    pub ood: BTreeMap<String, OodMetrics>,
    /// Every listed OOD score's metrics, keyed by score, then by OOD set (the headline score's
    /// repeat `ood`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ood_scores: BTreeMap<String, BTreeMap<String, OodMetrics>>,
    /// Per listed score, each OOD group's (`near`, `far`) mean metrics over its sets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ood_groups: BTreeMap<String, BTreeMap<String, GroupMetrics>>,
    /// Keyed by `<corruption>-<severity>`.
    pub shift: BTreeMap<String, ShiftMetrics>,
    pub cost: Cost,
    /// The runner's wall times and the method's own outputs, typed ([`Extra`]).
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub extra: Extra,
    /// The fitted temperature of a calibrated entry (`<method>+ts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// How the members differ (methods with M >= 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diversity: Option<DiversityMetrics>,
    /// Split conformal prediction sets, calibrated on the validation split, on the test set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformal: Option<ConformalReport>,
    /// What it took to train everything the method stands on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train_cost: Option<TrainCost>,
}

/// The training a method stands on: the base models it uses and what it trains itself, each
/// counted in full even when read back from the cache (it is the training the result needs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainCost {
    /// Wall seconds of the training epochs, as measured when they ran.
    pub wall_seconds: f64,
    /// Optimiser steps.
    pub steps: u64,
    /// Training samples seen (with repeats over epochs).
    pub samples: u64,
    /// Bytes of the trained weights a user keeps to have the method (one checkpoint per
    /// training: base models, members, adapters).
    pub stored_bytes: u64,
    /// Trainings (models or adapter sets trained).
    pub trainings: usize,
    /// Parameters the trainings update, summed over them (a frozen backbone counts only in the
    /// training that made it).
    #[serde(default)]
    pub trainable_params: u64,
    /// Trainings that were interrupted and resumed from their last checkpoint (the epochs are
    /// in the checkpoint's `state.json`; a model read back fully trained is no resume).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resumed: usize,
    /// Trainings whose checkpoint was found damaged, set aside and trained again from scratch
    /// (the set-aside files are named in the checkpoint's `state.json`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recovered: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl std::ops::AddAssign for TrainCost {
    fn add_assign(&mut self, other: Self) {
        self.wall_seconds += other.wall_seconds;
        self.steps += other.steps;
        self.samples += other.samples;
        self.stored_bytes += other.stored_bytes;
        self.trainings += other.trainings;
        self.trainable_params += other.trainable_params;
        self.resumed += other.resumed;
        self.recovered += other.recovered;
    }
}

/// An entry evaluated beside its method: the method with post-hoc temperature scaling, or the
/// method in bf16.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Ts,
    Bf16,
}

impl Variant {
    /// `ts`, `bf16`: what follows the `+` of a display name.
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Ts => "ts",
            Variant::Bf16 => "bf16",
        }
    }

    /// The display name of `method`'s entry: `method` itself, or `<method>+ts` / `+bf16`.
    pub fn name(variant: Option<Variant>, method: &str) -> String {
        match variant {
            None => method.to_string(),
            Some(v) => format!("{method}+{}", v.suffix()),
        }
    }
}

impl MethodResult {
    /// Gives the entry its method and the display name that follows from its variant.
    pub fn name_for(&mut self, method: &str) {
        self.method = method.to_string();
        self.name = Variant::name(self.variant, method);
    }

    /// The mean of a shift metric over all shifted sets; `None` without shifted sets.
    pub fn mean_shift(&self, f: fn(&ShiftMetrics) -> f64) -> Option<f64> {
        (!self.shift.is_empty())
            .then(|| self.shift.values().map(f).sum::<f64>() / self.shift.len() as f64)
    }
}

/// Diversity on the test set (with the ensemble gain), and per OOD set (no labels there, so
/// gain and member accuracy are NaN).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiversityMetrics {
    #[serde(flatten)]
    pub id: Diversity,
    /// Keyed by OOD set name.
    #[serde(default)]
    pub ood: BTreeMap<String, Diversity>,
}

/// In-distribution test metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdMetrics {
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub accuracy: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub nll: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub brier: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub ece: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub aece: f64,
    /// Class-wise ECE (absent from runs made before it: NaN).
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub classwise_ece: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub aurc: f64,
    /// AUGRC, with the MSP ranking of AURC (absent from runs made before it: NaN).
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub augrc: f64,
}

/// Separating the in-distribution test set (positive) from one OOD set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OodMetrics {
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub auroc: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub aupr_in: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub aupr_out: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub fpr95: f64,
    /// The headline score's AUROC over bootstrap resamples of this seed's test and OOD sets:
    /// the spread test-set sampling alone gives (absent for the other scores and older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auroc_bootstrap: Option<AurocBootstrap>,
}

/// An OOD group's metrics: the means over its sets, as OpenOOD reports near and far OOD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupMetrics {
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub auroc: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub fpr95: f64,
    /// The OOD sets averaged.
    pub sets: Vec<String>,
}

impl GroupMetrics {
    /// The means of `metrics`, the metrics of the sets `names`.
    pub fn mean(names: &[String], metrics: &[&OodMetrics]) -> Self {
        let mean = |f: fn(&OodMetrics) -> f64| {
            metrics.iter().map(|m| f(m)).sum::<f64>() / metrics.len().max(1) as f64
        };
        Self {
            auroc: mean(|m| m.auroc),
            fpr95: mean(|m| m.fpr95),
            sets: names.to_vec(),
        }
    }
}

/// Metrics on one corrupted copy of the test set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShiftMetrics {
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub accuracy: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub nll: f64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub ece: f64,
}

/// What the method costs at inference, for the whole method (all members).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub params: u64,
    /// Per sample.
    pub flops: u64,
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub latency_ms_b1: f64,
    /// At the evaluation batch size, per batch.
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub latency_ms: f64,
    /// Quartiles of the timed calls (methods timed round-robin by the runner's evaluation).
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub latency_ms_b1_q1: f64,
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub latency_ms_b1_q3: f64,
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub latency_ms_q1: f64,
    #[serde(default = "nan", deserialize_with = "uq_metrics::nan_if_null")]
    pub latency_ms_q3: f64,
    /// `None` (`null`) where the backend cannot measure it.
    pub peak_mem_bytes: Option<u64>,
    /// Latency at the evaluation batch and at batch 1 as a ratio to the seed's baseline model
    /// (named for the default baseline, `single`), paired: the median over the timed rounds of
    /// this model's time divided by the baseline's in the same round, so that a slow spell of
    /// the machine cancels. Absent without a baseline (and in runs older than the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_x_single: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_b1_x_single: Option<f64>,
}

fn nan() -> f64 {
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_from_method_and_variant() {
        let mut entry: MethodResult =
            serde_json::from_value(crate::legacy::old_entry("x", None, None)).unwrap();
        entry.variant = Some(Variant::Bf16);
        entry.name_for("single@run");
        assert_eq!(
            (entry.name.as_str(), entry.method.as_str()),
            ("single@run+bf16", "single@run")
        );
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(
            (json["method"].as_str(), json["variant"].as_str()),
            (Some("single@run"), Some("bf16"))
        );
    }
}
