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
use data::{Dataset, corrupt};
use hydra::{Calibration, Finetune, HydraConfig};
use report::outputs::{HydraOutputs, MethodOutputs};
use serde::{Deserialize, Serialize};

use super::context::{Built, Context, Setting, Sweep};
use super::gated::Gated;
use super::method::{Method, Needs};
use crate::error::{ExperimentError, Result};

/// Every key of `hydra::HydraConfig` (`members` required, the rest with its defaults).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Hydra(pub HydraConfig);

impl Method for Hydra {
    fn members(&self) -> usize {
        self.0.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn needs(&self) -> Needs {
        Needs::AnyClassifier
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        Ok(self.0.check()?)
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let base = &ctx.base[0];
        let importance = hydra::strategy(&self.0.importance, &self.0.importance_params)?;
        let calibration = self.calibration_data(ctx)?;
        let select = self.0.select(heads(base));
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
            self.0.importance,
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
                let trainable = match self.0.finetune {
                    Finetune::All => trainable,
                    Finetune::Encoder => trainable.freeze_embeddings(),
                    Finetune::Head => trainable.freeze_all_but_head(),
                };
                ctx.fit(trainable, ctx.train, &train, &tag, ctx.seed_for(&tag), None)?
                    .valid()
            };
            members.push(member);
        }
        let fused = hydra::fuse(&members, self.0.merge, ctx.text_tokens)?;
        let mut built = Built::new(fused);
        let outputs = self.outputs(ctx, importance.as_ref(), &calibration, &plans)?;
        built.outputs = Some(MethodOutputs::Hydra(outputs));
        if self.0.analysis {
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
    /// Each member's head scores and kept heads, and how closely members follow their scores
    /// (`topk_share`: 1 is each block's top-k, k/H random choice); then what the selection kept,
    /// against rankings computed on the whole calibration set (which
    /// bootstrapped or random members never saw): each member's share of the top heads by this
    /// criterion (`topk_share_whole`) and by Taylor importance (`topk_share_taylor`, the yardstick
    /// shared by every criterion and by random heads, where k/H is expected), and the members'
    /// pairwise Jaccard overlap (`head_jaccard`, pairs a < b; `head_jaccard_mean`).
    fn outputs(
        &self,
        ctx: &Context<'_>,
        importance: &dyn hydra::HeadImportance,
        calibration: &Calibration,
        plans: &[hydra::MemberPlan],
    ) -> Result<HydraOutputs> {
        let base = &ctx.base[0];
        let seed = ctx.seed_for("select");
        let taylor = hydra::strategy("taylor", &toml::Table::new())?;
        let taylor = taylor.scores(base, calibration, &hydra::ScoreContext { seed, member: 0 })?;
        let mut whole: Vec<f64> = Vec::with_capacity(plans.len());
        let mut against_taylor: Vec<f64> = Vec::with_capacity(plans.len());
        let mut shared: Option<hydra::HeadScores> = None;
        for (member, plan) in plans.iter().enumerate() {
            // A criterion that differs by member (circuit objectives, random draws) ranks for
            // each member; any other ranks once.
            let scores = match (&shared, importance.varies_by_member()) {
                (Some(s), false) => s.clone(),
                _ => importance.scores(base, calibration, &hydra::ScoreContext { seed, member })?,
            };
            whole.push(hydra::share_in_top(&plan.kept, &scores)?);
            against_taylor.push(hydra::share_in_top(&plan.kept, &taylor)?);
            shared.get_or_insert(scores);
        }
        let kept: Vec<hydra::HeadSet> = plans.iter().map(|p| p.kept.clone()).collect();
        let jaccard = hydra::head_jaccard(&kept);
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        Ok(HydraOutputs {
            head_scores: plans.iter().map(|p| p.scores.0.clone()).collect(),
            kept_heads: kept.into_iter().map(|k| k.0).collect(),
            topk_share: Some(hydra::mean_topk_share(plans)?),
            topk_share_whole: Some(whole),
            topk_share_taylor: Some(against_taylor),
            head_jaccard_mean: mean(&jaccard),
            head_jaccard: Some(jaccard),
        })
    }

    /// The first `calibration_samples` validation samples in batches, plus (images) their corrupted
    /// copies as OOD calibration data.
    fn calibration_data(&self, ctx: &Context<'_>) -> Result<Calibration> {
        let val = ctx.val;
        if val.is_empty() {
            return Err(ExperimentError::invalid(
                "hydra scores heads on the validation split: set data.val_fraction > 0",
            ));
        }
        let n = self.0.calibration_samples.min(val.len());
        let indices: Vec<usize> = (0..n).collect();
        let shifted = match val {
            train::Data::Images(images) => {
                let set = corrupt(
                    &images.set.subset(&indices),
                    self.0.ood_calibration,
                    5,
                    ctx.seed_for("ood-calibration"),
                )?;
                Some(Dataset::Images(set))
            }
            train::Data::Disk(d) => {
                return Err(ExperimentError::invalid(format!(
                    "hydra corrupts its calibration images in memory, but {} is on disk",
                    d.set.name
                )));
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
            Box::new(model) as Box<dyn seam::EnsembleModel>,
        ));
    }
    Ok(Sweep {
        name: "pruning".into(),
        columns: vec!["ratio".into(), "heads_kept".into()],
        points,
    })
}
