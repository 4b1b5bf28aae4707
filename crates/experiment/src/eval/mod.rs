//! The evaluation stage: every built model predicts once per set (test, OOD, shifted,
//! validation); the metrics of the output contract (ID, OOD, shift, diversity, conformal sets)
//! and a temperature-scaled entry (`<method>+ts`) come from those predictions, and so do the
//! tables of a method's [`Sweep`](crate::methods::Sweep)s. Cost is measured afterwards, every
//! model of the seed timed round-robin, once no worker process shares the CPU.

mod cost;
mod curves;
mod metrics;
mod predict;
mod saved;
mod scoring;
mod sweep;

pub use cost::costs;
pub use curves::MAX_POINTS;
pub use metrics::{id_metrics, ood_metrics, scores, shift_metrics};
pub use predict::{Predictions, predict};
pub use saved::npy;
pub use seam::timing::quartiles;

use std::collections::BTreeMap;

use burn::tensor::Device;
use data::Dataset;
use data::mix;
use seam::EnsembleModel;
use train::Data;
use uq_metrics::{ConformalScore, OodScore, Score};

use crate::config::OodGroups;
use crate::error::{ErrorContext, ExperimentError, Result};
use crate::eval_set::EvalSet;
use crate::sets::{EvalSets, Prep};
use metrics::{conformal_metrics, diversity_metrics};
use report::Measured;
use report::curves::MethodCurves;
use report::summary::{Cost, GroupMetrics, OodMetrics, Variant};
use scoring::set_scores;

/// The seed stream of the AUROC bootstrap.
const BOOTSTRAP_STREAM: u64 = 0xB0075;

/// How a seed's models are evaluated: on which sets, in which batches, with which scores.
pub struct Evaluator<'a> {
    pub sets: &'a EvalSets,
    /// The seed's validation split: temperatures and conformal thresholds are fitted on it.
    pub val: &'a Dataset,
    /// The seed's training split: the feature-space detectors are fitted on it, never on the
    /// validation, test or OOD sets.
    pub train: &'a Dataset,
    pub prep: &'a Prep,
    pub batch: usize,
    /// The OOD scores, the headline score first (it fills `ood` and the curves).
    pub scores: Vec<OodScore>,
    pub groups: &'a OodGroups,
    pub conformal: (ConformalScore, f64),
    /// Round-robin timing rounds per model (see [`costs`]).
    pub timing_rounds: usize,
    /// Whether [`Evaluator::evaluate`] also returns the raw predictions as `.npy` files.
    pub save_predictions: bool,
    pub seed: u64,
    pub device: &'a Device,
}

/// What [`Evaluator::evaluate`] gives: the entries' metrics and curves, the method's first,
/// and its saved prediction files (none unless asked for).
pub struct Evaluated {
    pub entries: Vec<Entry>,
    pub files: Vec<(String, Vec<u8>)>,
}

/// One entry evaluated: which variant of the method it is, its metrics and its curves (the
/// runner names the curves with the entry).
pub struct Entry {
    pub variant: Option<Variant>,
    pub measured: Measured,
    pub curves: MethodCurves,
}

/// A model's predictions on every set of the seed.
struct SetPredictions {
    test: Predictions,
    ood: Vec<Predictions>,
    shift: Vec<Predictions>,
    val: Option<Predictions>,
    /// The training split's, with features, when a feature-space detector is listed.
    train: Option<Predictions>,
}

impl SetPredictions {
    fn scaled(&self, t: f64) -> Result<Self> {
        let all = |ps: &[Predictions]| ps.iter().map(|p| p.scaled(t)).collect::<Result<_>>();
        let one = |p: &Option<Predictions>| p.as_ref().map(|p| p.scaled(t)).transpose();
        Ok(Self {
            test: self.test.scaled(t)?,
            ood: all(&self.ood)?,
            shift: all(&self.shift)?,
            val: one(&self.val)?,
            train: one(&self.train)?,
        })
    }
}

/// The device-RNG salt of each set's predictions (MC Dropout draws its masks from it).
const VAL_SALT: u64 = 3000;
const TRAIN_SALT: u64 = 4000;

impl Evaluator<'_> {
    /// Predictions of `model` on `data` (with the members' features when `features` is set);
    /// stochastic methods (MC Dropout) draw their masks from the device RNG, seeded per set by
    /// `salt`.
    fn run(
        &self,
        model: &dyn EnsembleModel,
        data: Data<'_>,
        salt: u64,
        features: bool,
    ) -> Result<Predictions> {
        self.device.seed(mix(self.seed, salt));
        predict(model, data, self.batch, self.device, features)
    }

    /// Whether a feature-space detector is listed.
    fn needs_features(&self) -> bool {
        self.scores
            .iter()
            .any(|s| matches!(s, OodScore::Feature(_)))
    }

    /// The score a sweep's points are judged by: the first output score listed (sweeps have no
    /// training-split features), MSP when only detectors are.
    fn sweep_score(&self) -> Score {
        (self.scores.iter())
            .find_map(|s| match s {
                OodScore::Output(s) => Some(*s),
                OodScore::Feature(_) => None,
            })
            .unwrap_or(Score::Msp)
    }

    /// The metrics and curves of `model`, the entry `variant` of its method (`None`: the method
    /// itself), and, with `calibrate`, those of its temperature-scaled copy (one T for every
    /// member, fitted on the validation split by minimising the NLL of the ensemble's mean
    /// prediction); with `save_predictions`, the raw predictions as files too.
    pub fn evaluate(
        &self,
        model: &dyn EnsembleModel,
        variant: Option<Variant>,
        calibrate: bool,
    ) -> Result<Evaluated> {
        let sets = self.sets;
        let features = self.needs_features();
        // Training and validation first: the device RNG then ends where it did before they
        // were predicted, so what a later method draws from it is unchanged.
        let train = match features {
            true => Some(self.run(model, self.prep.data(self.train), TRAIN_SALT, true)?),
            false => None,
        };
        let val = match self.val.is_empty() {
            true => None,
            false => Some(self.run(model, self.prep.data(self.val), VAL_SALT, false)?),
        };
        let prep = self.prep;
        let predictions = SetPredictions {
            test: self.run(model, prep.set_data(&sets.test), 0, features)?,
            ood: (sets.ood.iter().enumerate())
                .map(|(i, set)| self.run(model, prep.set_data(set), 1 + i as u64, features))
                .collect::<Result<_>>()?,
            shift: (sets.shift.iter().enumerate())
                .map(|(i, (_, set))| self.run(model, prep.data(set), 1000 + i as u64, false))
                .collect::<Result<_>>()?,
            val,
            train,
        };
        let (measured, curves) = self.result(&predictions)?;
        let mut entries = vec![Entry {
            variant,
            measured,
            curves,
        }];
        let files = match self.save_predictions {
            true => saved::prediction_files(&self.named_sets(&predictions)),
            false => Vec::new(),
        };
        if calibrate {
            let val = predictions.val.as_ref().ok_or_else(|| {
                ExperimentError::invalid(
                    "calibration = \"temperature\" is fitted on the validation split: set \
                     data.val_fraction > 0",
                )
            })?;
            let t = uq_metrics::fit_ensemble_temperature(&val.member_logits, &val.labels)
                .context("temperature scaling")?;
            let (mut measured, curves) = self.result(&predictions.scaled(t)?)?;
            measured.temperature = Some(t);
            entries.push(Entry {
                variant: Some(Variant::Ts),
                measured,
                curves,
            });
        }
        Ok(Evaluated { entries, files })
    }

    /// The sets that have predictions, by the names their saved files take: `train` (only
    /// where the detectors needed its features), `val`, `test`, `ood-<set>`, `shift-<set>`.
    fn named_sets<'p>(&self, p: &'p SetPredictions) -> Vec<(String, &'p Predictions)> {
        let sets = self.sets;
        let mut named: Vec<(String, &Predictions)> = Vec::new();
        named.extend(p.train.as_ref().map(|t| ("train".to_string(), t)));
        named.extend(p.val.as_ref().map(|v| ("val".to_string(), v)));
        named.push(("test".into(), &p.test));
        named.extend((sets.ood.iter().zip(&p.ood)).map(|(d, p)| (format!("ood-{}", d.name()), p)));
        named.extend(
            (sets.shift.iter().zip(&p.shift)).map(|((name, _), p)| (format!("shift-{name}"), p)),
        );
        named
    }

    /// Every metric of one entry's predictions, and its curves.
    fn result(&self, p: &SetPredictions) -> Result<(Measured, MethodCurves)> {
        let sets = self.sets;
        let (per_score, headline) = self.ood_results(p)?;
        let (id_scores, ood_scores) = (headline.id, headline.ood);
        let ood = (self.scores.first())
            .and_then(|s| per_score.get(s.name()))
            .cloned()
            .unwrap_or_default();
        let mut shift = BTreeMap::new();
        for ((name, _), pred) in sets.shift.iter().zip(&p.shift) {
            shift.insert(name.clone(), shift_metrics(pred)?);
        }
        let named: Vec<(&str, &Predictions)> =
            (sets.ood.iter().map(EvalSet::name)).zip(&p.ood).collect();
        let (score, alpha) = self.conformal;
        let conformal = (p.val.as_ref())
            .map(|val| conformal_metrics(val, &p.test, score, alpha))
            .transpose()
            .context("conformal sets")?;
        let scored: Vec<(&str, &[f64])> = (sets.ood.iter().map(EvalSet::name))
            .zip(ood_scores.iter().map(Vec::as_slice))
            .collect();
        let mut curves = curves::method_curves(&p.test, &id_scores, &scored)?;
        curves.seed = self.seed;
        let measured = Measured {
            id: id_metrics(&p.test)?,
            ood,
            ood_groups: group_metrics(&per_score, self.groups),
            ood_scores: match sets.ood.is_empty() {
                true => BTreeMap::new(),
                false => per_score,
            },
            shift,
            temperature: None,
            diversity: diversity_metrics(&p.test, &named)?,
            conformal,
        };
        Ok((measured, curves))
    }

    /// Each listed score's OOD metrics, by score then set, and the headline score's per-sample
    /// scores (the curves read them): every set scored once per listed score.
    fn ood_results(&self, p: &SetPredictions) -> Result<(PerScore, scoring::SetScores)> {
        let mut per_score = BTreeMap::new();
        let mut headline = None;
        for &score in &self.scores {
            let s = set_scores(score, p.train.as_ref(), &p.test, &p.ood)?;
            // The headline score alone is bootstrapped; every method and set draws the same
            // resamples of the seed (common random numbers).
            let bootstrap = headline
                .is_none()
                .then(|| data::mix(self.seed, BOOTSTRAP_STREAM));
            let mut per_set = BTreeMap::new();
            for (set, set_scores) in self.sets.ood.iter().zip(&s.ood) {
                let m = ood_metrics(&s.id, set_scores, bootstrap)?;
                per_set.insert(set.name().to_string(), m);
            }
            per_score.insert(score.name().to_string(), per_set);
            headline.get_or_insert(s);
        }
        let headline = headline.ok_or_else(|| ExperimentError::invalid("no OOD score listed"))?;
        Ok((per_score, headline))
    }

    /// Latency and peak memory of each model on the first evaluation batch of the test set,
    /// all models timed in the same round-robin rounds; latency ratios paired with
    /// `models[baseline]` when given.
    pub fn costs(
        &self,
        models: &[&dyn EnsembleModel],
        baseline: Option<usize>,
    ) -> Result<Vec<Cost>> {
        let probe: Vec<usize> = (0..self.sets.test.len().min(self.batch)).collect();
        let sample = (self.prep.set_data(&self.sets.test)).batch(&probe, None, self.device)?;
        Ok(costs(
            models,
            &sample,
            self.batch,
            self.timing_rounds,
            baseline,
        ))
    }
}

/// OOD metrics by score name, then by OOD set.
type PerScore = BTreeMap<String, BTreeMap<String, OodMetrics>>;

/// Per score, each OOD group's mean AUROC and FPR95 over its sets (groups whose sets the run
/// has, in full).
fn group_metrics(
    per_score: &PerScore,
    groups: &OodGroups,
) -> BTreeMap<String, BTreeMap<String, GroupMetrics>> {
    let mut out = BTreeMap::new();
    for (score, per_set) in per_score {
        let mut by_group = BTreeMap::new();
        for (group, names) in groups.groups() {
            let metrics: Option<Vec<&OodMetrics>> = names.iter().map(|n| per_set.get(n)).collect();
            if let Some(metrics) = metrics {
                by_group.insert(group.to_string(), GroupMetrics::mean(names, &metrics));
            }
        }
        if !by_group.is_empty() {
            out.insert(score.clone(), by_group);
        }
    }
    out
}
