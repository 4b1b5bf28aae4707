//! `hydra`: Hydra Ensembles. Head importance on the seed's base model (ViT or
//! BERT), M members that keep different heads, optional per-member fine-tuning of the whole
//! member, of all but its input embedding (`finetune = "encoder"`: the fused members then share
//! one embedding) or of its classifier only (`finetune = "head"`; `train = { epochs = 0 }` is
//! the zero-shot mode), fused into one network that runs every member in a single pass.
//!
//! With `analysis = true` it also hands back the pruning analysis as a [`Sweep`]: the base model
//! with a growing share of its heads gated off, in the strategy's order, which the evaluation
//! stage runs on the clean, shifted and OOD sets (`pruning.csv` and `pruning.md`).

use burn::module::Module;
use data::{Corruption, Dataset, corrupt};
use hydra::{Calibration, Keep, Merge, SelectConfig};
use serde::{Deserialize, Serialize};

use super::gated::Gated;
use super::{Built, Context, Method, Setting, Sweep};
use crate::error::{Context as _, ExperimentError, Result};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hydra {
    pub members: usize,
    /// A head-importance strategy (`uqformer list` shows them).
    #[serde(default = "default_importance")]
    pub importance: String,
    /// The strategy's own parameters (e.g. `{ objective = "avg" }` for `circuit`).
    #[serde(default)]
    pub importance_params: toml::Table,
    /// Heads each member keeps per block (default: half of them).
    #[serde(default)]
    pub keep: Option<usize>,
    /// Or: heads each member keeps in all, spread by score (at least one per block).
    #[serde(default)]
    pub keep_total: Option<usize>,
    /// Gumbel-top-k temperature over the scores (0 = plain top-k).
    #[serde(default)]
    pub temperature: f64,
    /// Score each member on its own bootstrap resample of the calibration data.
    #[serde(default = "yes")]
    pub bootstrap: bool,
    /// `average` (one MLP, the members' mean) or `none` (per-member MLPs).
    #[serde(default = "default_merge")]
    pub merge: String,
    /// Validation samples used to score heads.
    #[serde(default = "default_calibration")]
    pub calibration_samples: usize,
    /// The corruption (severity 5) that turns validation images into the OOD calibration data
    /// of `circuit`'s `ood`/`avg` objectives, so no test OOD set is seen while pruning (images
    /// only: text runs have no OOD calibration data).
    #[serde(default = "default_ood_calibration")]
    pub ood_calibration: String,
    /// What fine-tuning trains in each pruned member: `all` its parameters, `encoder` all but
    /// its input embedding (frozen, so the fused members store the base model's once), or
    /// `head` its classifier only (the rest frozen).
    #[serde(default)]
    pub finetune: Finetune,
    /// Also write the pruning analysis (prune ratios 0 to 0.9).
    #[serde(default)]
    pub analysis: bool,
}

fn default_importance() -> String {
    "taylor".into()
}
fn yes() -> bool {
    true
}
fn default_merge() -> String {
    "average".into()
}
fn default_calibration() -> usize {
    512
}
fn default_ood_calibration() -> String {
    "shot_noise".into()
}
/// What fine-tuning trains in each pruned member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finetune {
    #[default]
    All,
    Encoder,
    Head,
}

impl Hydra {
    fn keep(&self, heads: usize) -> Keep {
        match (self.keep, self.keep_total) {
            (_, Some(total)) => Keep::Global(total),
            (Some(k), None) => Keep::PerBlock(k),
            (None, None) => Keep::PerBlock(heads.div_ceil(2)),
        }
    }
}

impl Method for Hydra {
    fn members(&self) -> usize {
        self.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn supports_text(&self) -> bool {
        true
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        if self.members == 0 {
            return Err(ExperimentError::invalid("members must be at least 1"));
        }
        if self.keep.is_some() && self.keep_total.is_some() {
            return Err(ExperimentError::invalid(
                "give `keep` (per block) or `keep_total`, not both",
            ));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(ExperimentError::invalid(format!(
                "temperature = {} must be >= 0",
                self.temperature
            )));
        }
        if self.calibration_samples == 0 {
            return Err(ExperimentError::invalid(
                "calibration_samples must be at least 1",
            ));
        }
        self.merge.parse::<Merge>()?;
        (self.ood_calibration.parse::<Corruption>()).context("ood_calibration")?;
        hydra::strategy(&self.importance, &self.importance_params)?;
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let base = &ctx.base[0];
        let importance = hydra::strategy(&self.importance, &self.importance_params)?;
        let calibration = self.calibration_data(ctx)?;
        let select = SelectConfig {
            members: self.members,
            keep: self.keep(heads(base)),
            temperature: self.temperature,
            bootstrap: self.bootstrap,
        };
        let plans = hydra::plan_members(
            base,
            importance.as_ref(),
            &calibration,
            &select,
            ctx.seed_for("select"),
        )?;
        ctx.say(&format!(
            "{} members from `{}` head scores; heads kept per block: {:?}",
            plans.len(),
            self.importance,
            plans
                .iter()
                .map(|p| p.kept.0.iter().map(Vec::len).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        ));
        let train = ctx.train_config()?;
        let mut members = Vec::with_capacity(plans.len());
        for (m, plan) in plans.iter().enumerate() {
            let pruned = hydra::prune(base, &plan.kept)?;
            let member = if train.epochs == 0 {
                pruned
            } else {
                let tag = format!("member-{m}");
                let trainable = pruned.fork(&ctx.autodiff()).train();
                let trainable = match self.finetune {
                    Finetune::All => trainable,
                    Finetune::Encoder => trainable.freeze_embeddings(),
                    Finetune::Head => trainable.freeze_all_but_head(),
                };
                ctx.fit(trainable, ctx.train, &train, &tag, ctx.seed_for(&tag), None)?
                    .valid()
            };
            members.push(member);
        }
        let merge: Merge = self.merge.parse()?;
        let fused = hydra::fuse(&members, merge, ctx.text_tokens)?;
        let mut built = Built::new(fused);
        built.extra.insert(
            "head_scores".into(),
            serde_json::to_value(plans.iter().map(|p| &p.scores).collect::<Vec<_>>())?,
        );
        // How closely members follow their scores: 1 is each block's top-k, k/H random choice.
        built
            .extra
            .insert("topk_share".into(), hydra::mean_topk_share(&plans)?.into());
        built.extra.insert(
            "kept_heads".into(),
            serde_json::to_value(plans.iter().map(|p| &p.kept).collect::<Vec<_>>())?,
        );
        if self.analysis {
            let scores = importance.scores(
                base,
                &calibration,
                &hydra::ScoreContext {
                    seed: ctx.seed_for("analysis"),
                    member: 0,
                },
            )?;
            built.sweeps.push(pruning_sweep(ctx, &scores)?);
        }
        Ok(built)
    }
}

impl Hydra {
    /// The first `calibration_samples` validation samples in batches, plus (images) their corrupted
    /// copies as OOD calibration data.
    fn calibration_data(&self, ctx: &Context<'_>) -> Result<Calibration> {
        let val = ctx.val;
        if val.is_empty() {
            return Err(ExperimentError::invalid(
                "hydra scores heads on the validation split: set data.val_fraction > 0",
            ));
        }
        let n = self.calibration_samples.min(val.len());
        let indices: Vec<usize> = (0..n).collect();
        let shifted = match val {
            train::Data::Images(images) => {
                let corruption: Corruption = self.ood_calibration.parse()?;
                let set = corrupt(
                    &images.set.subset(&indices),
                    corruption,
                    5,
                    ctx.seed_for("ood-calibration"),
                )?;
                Some(Dataset::Images(set))
            }
            train::Data::Text(_) => None,
        };
        let batch = ctx.eval_batch.min(128);
        let mut calibration = Calibration {
            batches: Vec::new(),
            ood: Vec::new(),
        };
        for chunk in indices.chunks(batch) {
            let input = val.batch(chunk, None, ctx.device)?;
            calibration
                .batches
                .push((input, val.labels(chunk, ctx.device)));
            if let Some(shifted) = &shifted {
                let ood = (ctx.prep.data(shifted)).batch(chunk, None, ctx.device)?;
                calibration.ood.push(ood);
            }
        }
        Ok(calibration)
    }
}

/// Heads per block of the base model.
fn heads(model: &backbone::Classifier) -> usize {
    model
        .encoder()
        .layer
        .first()
        .map_or(0, |b| b.attention.n_heads)
}

/// The pruning analysis: prune ratios 0, 0.1, ..., 0.9 of all heads, lowest scores first, gated
/// off in the base model (no fine-tuning), each point evaluated on the clean, shifted and OOD sets
/// by the evaluation stage (`pruning.csv`, `pruning.md`).
fn pruning_sweep(ctx: &Context<'_>, head_scores: &hydra::HeadScores) -> Result<Sweep> {
    let mut points = Vec::with_capacity(10);
    for step in 0..10 {
        let ratio = step as f64 / 10.0;
        let kept = hydra::prune_ratio(head_scores, ratio)?;
        let mask = kept.mask(heads(&ctx.base[0]), ctx.device)?;
        let model = Gated::heads(ctx.base[0].clone(), mask, ctx.base_flops());
        let heads_kept = kept.0.iter().map(Vec::len).sum::<usize>();
        points.push((
            vec![ratio, heads_kept as f64],
            Box::new(model) as Box<dyn ensembles::EnsembleModel>,
        ));
    }
    Ok(Sweep {
        name: "pruning".into(),
        columns: vec!["ratio".into(), "heads_kept".into()],
        points,
    })
}
