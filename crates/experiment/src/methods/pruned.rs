//! `pruned`: one model pruned by a named criterion over one kind of unit, at a ratio or within
//! a budget, optionally fine-tuned; `sweep = [..]` evaluates the model pruned at each ratio
//! beside it (no fine-tune), the cost-against-uncertainty curve of that criterion and unit.

use backbone::Classifier;
use burn::module::Module;
use data::Corruption;
use pruning::{Applied, Measure, Plan, ScoreContext, Scores, Selection, UnitKind, unit_costs};
use seam::EnsembleModel;
use serde::{Deserialize, Serialize};
use train::TrainConfig;

use super::calibration::calibration;
use super::context::{Built, Context, Setting, Sweep};
use super::gated::Gated;
use super::method::{Method, Needs};
use crate::error::{ExperimentError, Result};
use crate::workload::{Sizing, Training, Work};

/// The parameters of a `[[method]]` of kind `pruned`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pruned {
    /// A criterion of `pruning::CRITERIA` that scores `unit`.
    #[serde(default = "default_criterion")]
    pub criterion: String,
    /// The criterion's own parameters.
    #[serde(default)]
    pub criterion_params: toml::Table,
    /// The kind of unit removed.
    pub unit: UnitKind,
    /// The share of the units removed, lowest scores first (or give `budget`).
    pub ratio: Option<f64>,
    /// `global` ranks the units over the whole model, `per_block` within each block.
    #[serde(default)]
    pub scope: Scope,
    /// Remove units until the model keeps at most this share of its parameters or FLOPs, or
    /// runs in at most this share of its measured time (head, neuron and block units):
    /// `{ params = 0.7 }`, `{ flops = 0.7 }` or `{ latency = 0.7 }` (instead of `ratio`).
    pub budget: Option<Budget>,
    /// Ratios at which the model is also evaluated, pruned the same way without fine-tuning.
    #[serde(default)]
    pub sweep: Vec<f64>,
    /// Fine-tune the pruned model with `[train]` and the method's `train` overrides.
    #[serde(default)]
    pub finetune: bool,
    /// Validation samples the criterion scores on.
    #[serde(default = "default_samples")]
    pub calibration_samples: usize,
    /// The corruption that makes the OOD calibration images (criteria that read OOD data).
    #[serde(default = "default_ood")]
    pub ood_calibration: Corruption,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    Global,
    PerBlock,
}

/// A budget: exactly one of the three shares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub params: Option<f64>,
    pub flops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<f64>,
}

/// What decides how many units go: a selection counted from the model, or measured time.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Counted(Selection),
    /// The share of the unpruned model's time the pruned model may take.
    Latency(f64),
}

/// Rounds of the interleaved timing behind each latency measurement.
const LATENCY_ROUNDS: usize = 5;

fn default_criterion() -> String {
    "taylor".into()
}

fn default_samples() -> usize {
    512
}

fn default_ood() -> Corruption {
    Corruption::ShotNoise
}

impl Pruned {
    /// `ratio` of the units removed, ranked as `scope` says (a sweep point, or `ratio`).
    fn at_ratio(&self, ratio: f64) -> Selection {
        match self.scope {
            Scope::Global => Selection::Global(ratio),
            Scope::PerBlock => Selection::PerBlock(ratio),
        }
    }

    /// What the parameters ask for: `ratio`, or `budget` in parameters, FLOPs or latency.
    fn target(&self) -> Result<Target> {
        let counted = |measure, keep| Ok(Target::Counted(Selection::Budget { measure, keep }));
        let budget = self.budget.map(|b| (b.params, b.flops, b.latency));
        match (self.ratio, budget) {
            (Some(r), None) => Ok(Target::Counted(self.at_ratio(r))),
            (None, Some((Some(keep), None, None))) => counted(Measure::Params, keep),
            (None, Some((None, Some(keep), None))) => counted(Measure::Flops, keep),
            (None, Some((None, None, Some(keep)))) => Ok(Target::Latency(keep)),
            (Some(_), Some(_)) => Err(ExperimentError::invalid(
                "ratio and budget are both given: give one (ratio = share removed, or budget = \
                 { params = .. } / { flops = .. } / { latency = .. })",
            )),
            (None, Some(_)) => Err(ExperimentError::invalid(
                "budget: give exactly one of `params`, `flops` and `latency` (the share of the \
                 model kept)",
            )),
            (None, None) => Err(ExperimentError::invalid(
                "give `ratio` (the share of units removed) or `budget` ({ params = .. }, \
                 { flops = .. } or { latency = .. })",
            )),
        }
    }
}

impl Method for Pruned {
    fn members(&self) -> usize {
        1
    }

    fn trains(&self) -> bool {
        self.finetune
    }

    fn needs(&self) -> Needs {
        Needs::AnyClassifier
    }

    fn measures_latency(&self) -> bool {
        matches!(self.target(), Ok(Target::Latency(_)))
    }

    fn offers_model(&self) -> std::result::Result<(), String> {
        match self.unit {
            unit if unit.physical() => Ok(()),
            unit => Err(format!(
                "its {unit} units are removed through gates, so there is no smaller classifier \
                 to build on; prune head, neuron or block units"
            )),
        }
    }

    fn builds_on_models(&self, _setting: &Setting) -> std::result::Result<(), String> {
        Ok(())
    }

    fn on_zero_shot(&self, _recipe: &TrainConfig) -> std::result::Result<(), String> {
        match self.finetune {
            false => Ok(()),
            true => Err("it would fine-tune the pruned model: set finetune = false".into()),
        }
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        pruning::criterion_for(&self.criterion, &self.criterion_params, self.unit)?;
        if let Target::Latency(keep) = self.target()? {
            pruning::check_latency_budget(self.unit, keep)?;
        }
        for &r in &self.sweep {
            if !(0.0..=1.0).contains(&r) {
                return Err(ExperimentError::invalid(format!(
                    "sweep: {r} is not a share of the units in [0, 1]"
                )));
            }
        }
        if self.calibration_samples == 0 {
            return Err(ExperimentError::invalid(
                "calibration_samples = 0: at least 1",
            ));
        }
        Ok(())
    }

    /// One scoring pass (a forward and backward of the base model per calibration sample),
    /// the fine-tune when asked, and the base model's cost at evaluation (an upper bound: the
    /// share a plan keeps is known only once the units are scored).
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        let base = sizing.base;
        let mut work = Work::passes(base, 1, 1);
        work.trainings.push(Training {
            what: format!("{} scores ({} units)", self.criterion, self.unit),
            forward_flops: base.forward_flops(),
            samples: self.calibration_samples as u64,
            params: base.params(),
            trainable: 0,
            batch_size: sizing.batch_size,
            activation_bytes: base.train_activation_bytes(),
        });
        if self.finetune && sizing.epochs > 0 {
            let params = (base.params(), base.params());
            let act = base.train_activation_bytes();
            work.trainings
                .push(sizing.training("fine-tune", base.forward_flops(), params, act));
        }
        work
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let base = &ctx.base[0];
        let criterion = pruning::criterion_for(&self.criterion, &self.criterion_params, self.unit)?;
        let data = calibration(ctx, self.calibration_samples, self.ood_calibration)?;
        let score_ctx = ScoreContext {
            seed: ctx.seed_for("scores"),
            member: 0,
        };
        let scores = pruning::score(criterion.as_ref(), base, self.unit, &data, &score_ctx)?;
        let (plan, latency_share) = match self.target()? {
            Target::Counted(selection) => {
                (self.plan(base, &scores, selection, ctx.text_tokens)?, None)
            }
            Target::Latency(keep) => {
                let sample = (data.batches[0].0.clone()).resized(ctx.eval_batch);
                let (plan, share) = pruning::select_by_latency(
                    base,
                    self.unit,
                    &scores,
                    keep,
                    &sample,
                    LATENCY_ROUNDS,
                )?;
                (plan, Some(share))
            }
        };
        ctx.say(&format!(
            "`{}` {} units kept per block: {:?}",
            self.criterion,
            self.unit,
            plan.kept.iter().map(Vec::len).collect::<Vec<_>>()
        ));
        let (model, classifier) = self.model(ctx, &plan, self.finetune)?;
        let mut built = Built {
            model,
            outputs: None,
            files: Vec::new(),
            sweeps: Vec::new(),
            predictor: None,
            base: classifier,
        };
        let plan_file = serde_json::json!({
            "criterion": self.criterion,
            "unit": self.unit,
            "kept": plan.kept,
            "scores": scores.0,
            "latency_share": latency_share,
        });
        let bytes = serde_json::to_vec_pretty(&plan_file)?;
        built.files.push(("plan.json".into(), bytes));
        if !self.sweep.is_empty() {
            let mut points = Vec::with_capacity(self.sweep.len());
            for &ratio in &self.sweep {
                let plan = self.plan(base, &scores, self.at_ratio(ratio), ctx.text_tokens)?;
                let (params, flops) = kept_shares(base, &plan, ctx.text_tokens);
                points.push((vec![params, flops, ratio], self.model(ctx, &plan, false)?.0));
            }
            built.sweeps.push(Sweep {
                name: "pruned".into(),
                columns: ["params_kept", "flops_kept", "ratio"]
                    .map(String::from)
                    .to_vec(),
                points,
            });
        }
        Ok(built)
    }
}

impl Pruned {
    fn plan(
        &self,
        base: &Classifier,
        scores: &Scores,
        selection: Selection,
        text_tokens: usize,
    ) -> Result<Plan> {
        Ok(pruning::select(
            base,
            self.unit,
            scores,
            selection,
            text_tokens,
        )?)
    }

    /// The base model with `plan` applied, fine-tuned when asked, as the model evaluated (a
    /// gated plan reports the parameters and FLOPs its physical form would have), and the
    /// classifier other methods may build on (a physical plan's).
    fn model(
        &self,
        ctx: &Context<'_>,
        plan: &Plan,
        finetune: bool,
    ) -> Result<(Box<dyn EnsembleModel>, Option<Classifier>)> {
        let base = &ctx.base[0];
        match plan.apply(base, ctx.device)? {
            Applied::Physical(pruned) if finetune => {
                let config = ctx.train_config()?;
                let trainable = pruned.fork(&ctx.autodiff()).train();
                let tag = "pruned";
                let tuned = ctx.fit(trainable, ctx.train, &config, tag, ctx.seed_for(tag), None)?;
                Ok(single(tuned.valid(), ctx.text_tokens))
            }
            Applied::Physical(pruned) => Ok(single(pruned, ctx.text_tokens)),
            Applied::Gated(..) if finetune => Err(ExperimentError::invalid(format!(
                "finetune = true: {} units are removed through gates here, and a gated model is \
                 not fine-tuned; prune head, neuron or block units, or set finetune = false",
                self.unit
            ))),
            Applied::Gated(model, gates) => {
                let removed = |measure| removed_cost(base, plan, measure, ctx.text_tokens);
                let params = (model.num_params() as i64 - removed(Measure::Params)).max(0);
                let flops = (ctx.base_flops() as i64 - removed(Measure::Flops)).max(0);
                let gated = Gated::new(model, *gates, flops as u64, params as usize);
                Ok((Box::new(gated), None))
            }
        }
    }
}

/// A physically pruned model to evaluate, and to build on.
fn single(model: Classifier, text_tokens: usize) -> (Box<dyn EnsembleModel>, Option<Classifier>) {
    let flops = model.flops(text_tokens);
    (
        Box::new(ensembles::Single::new(model.clone(), flops)),
        Some(model),
    )
}

/// What the units `plan` removes from `base` account for, by `measure`.
fn removed_cost(base: &Classifier, plan: &Plan, measure: Measure, text_tokens: usize) -> i64 {
    let costs = unit_costs(base, plan.kind, measure, text_tokens);
    (costs.iter().zip(&plan.kept))
        .map(|(row, kept)| {
            // `kept` is sorted ascending.
            let removed = (0..row.len()).filter(|u| kept.binary_search(u).is_err());
            removed.map(|u| row[u]).sum::<i64>()
        })
        .sum()
}

/// The shares of `base`'s parameters and FLOPs the model `plan` makes keeps.
fn kept_shares(base: &Classifier, plan: &Plan, text_tokens: usize) -> (f64, f64) {
    let params = base.num_params() as f64;
    let flops = base.flops(text_tokens) as f64;
    let removed = |measure| removed_cost(base, plan, measure, text_tokens) as f64;
    (
        1.0 - removed(Measure::Params) / params,
        1.0 - removed(Measure::Flops) / flops,
    )
}
