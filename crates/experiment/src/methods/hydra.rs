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
use hydra::{Finetune, HydraConfig, Keep, Merge};
use pruning::{Calibration, Criterion, ScoreContext, Scores, UnitKind, score};
use report::outputs::{HydraOutputs, MethodOutputs};
use serde::{Deserialize, Serialize};
use train::TrainConfig;

use super::calibration::calibration;
use super::context::{Built, Context, Setting, Sweep};
use super::gated::Gated;
use super::method::{Method, Needs};
use crate::error::Result;
use crate::workload::{Sizing, Training, Work};

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

    /// Head scores on the calibration samples (a forward and backward of the base model per
    /// sample: each member's bootstrap, then the recorded rankings), M members keeping `keep`
    /// heads a block fine-tuned one after another (none when `train = { epochs = 0 }`), and
    /// one fused pass of the M pruned members (padded to the widest member per block, as
    /// `hydra::fuse` runs them; with `merge = "average"` the MLPs are stored once).
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        let base = sizing.base;
        let m = self.0.members as u64;
        let heads = match self.0.keep(base.heads()) {
            Keep::PerBlock(k) => k,
            // Spread evenly; the fused block is as wide as its widest member's.
            Keep::Global(total) => total.div_ceil(base.layers()),
        }
        .min(base.heads());
        let (flops, params) = (base.flops_keeping(heads), base.params_keeping(heads));
        // Circuit discovery's greedy search is counted as one scoring pass: a lower bound.
        let varies = self.0.criterion().is_ok_and(|s| s.varies_by_member());
        let passes = m + 1 + if varies { m } else { 1 };
        let scoring = Training {
            what: format!("head scores ({})", self.0.importance),
            forward_flops: base.forward_flops(),
            samples: passes * self.0.calibration_samples as u64,
            params: base.params(),
            trainable: 0,
            batch_size: sizing.batch_size,
            activation_bytes: base.train_activation_bytes(),
        };
        let trainable = match self.0.finetune {
            Finetune::Head => base.head_params(),
            _ => params,
        };
        let mut trainings = vec![scoring];
        if sizing.epochs > 0 {
            let act = base.train_activation_bytes();
            let member = sizing.training("member fine-tune", flops, (params, trainable), act);
            trainings.extend(std::iter::repeat_n(member, m as usize));
        }
        let mlp = match self.0.merge {
            Merge::Average => base.mlp_params(),
            Merge::None => 0,
        };
        // Members that do not train their embedding keep the base model's, stored once.
        let embedding = match (sizing.epochs, self.0.finetune) {
            (0, _) | (_, Finetune::Encoder | Finetune::Head) => base.embedding_params(),
            _ => 0,
        };
        let shared = (m - 1) * (mlp + embedding);
        Work {
            trainings,
            eval_flops: m * flops,
            eval_params: m * params - shared,
            eval_activation_bytes: m * base.eval_activation_bytes(),
        }
    }

    fn builds_on_models(&self, _setting: &Setting) -> std::result::Result<(), String> {
        Ok(())
    }

    /// Its zero-shot mode: members pruned from the classifier and fused, not fine-tuned.
    fn on_zero_shot(&self, recipe: &TrainConfig) -> std::result::Result<(), String> {
        match recipe.epochs {
            0 => Ok(()),
            n => Err(format!(
                "its members would be fine-tuned for {n} epochs; on a zero-shot classifier \
                 Hydra runs in its zero-shot mode, members pruned and fused without training: \
                 set train = {{ epochs = 0 }}"
            )),
        }
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let base = &ctx.base[0];
        let importance = self.0.criterion()?;
        let calibration = calibration(ctx, self.0.calibration_samples, self.0.ood_calibration)?;
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
            let pruned = pruning::prune_heads(base, &plan.kept.0)?;
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
            let analysis = ScoreContext {
                seed: ctx.seed_for("analysis"),
                member: 0,
            };
            let scores = score(
                importance.as_ref(),
                base,
                UnitKind::Head,
                &calibration,
                &analysis,
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
        importance: &dyn Criterion,
        calibration: &Calibration,
        plans: &[hydra::MemberPlan],
    ) -> Result<HydraOutputs> {
        let base = &ctx.base[0];
        let seed = ctx.seed_for("select");
        let head = UnitKind::Head;
        let taylor = pruning::criterion("taylor", &toml::Table::new())?;
        let taylor = score(
            taylor.as_ref(),
            base,
            head,
            calibration,
            &ScoreContext { seed, member: 0 },
        )?;
        let mut whole: Vec<f64> = Vec::with_capacity(plans.len());
        let mut against_taylor: Vec<f64> = Vec::with_capacity(plans.len());
        let mut shared: Option<Scores> = None;
        for (member, plan) in plans.iter().enumerate() {
            // A criterion that differs by member (circuit objectives, random draws) ranks for
            // each member; any other ranks once.
            let scores = match (&shared, importance.varies_by_member()) {
                (Some(s), false) => s.clone(),
                _ => score(
                    importance,
                    base,
                    head,
                    calibration,
                    &ScoreContext { seed, member },
                )?,
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
fn pruning_sweep(ctx: &Context<'_>, head_scores: &Scores) -> Result<Sweep> {
    let mut points = Vec::with_capacity(10);
    for step in 0..10 {
        let ratio = step as f64 / 10.0;
        let kept = hydra::prune_ratio(head_scores, ratio)?;
        let mask = kept.mask(heads(&ctx.base[0]), ctx.device)?;
        let base = ctx.base[0].clone();
        let params = base.num_params();
        let model = Gated::new(base, UnitKind::Head.gates(mask), ctx.base_flops(), params);
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

#[cfg(test)]
mod tests {
    use backbone::{Classifier, ViTConfig};
    use burn::tensor::Device;

    use super::*;
    use crate::workload::ModelShape;

    /// The estimate counts what `hydra::fuse` builds: M pruned members' FLOPs, and their
    /// parameters with the averaged MLPs and the untrained embedding stored once.
    #[test]
    fn the_estimate_counts_the_fused_model_of_pruned_members() {
        let vit = (ViTConfig::new().with_d_model(16).with_d_mlp(32))
            .with_n_layers(2)
            .with_n_heads(4);
        let base = Classifier::from(vit.init(&Device::flex()).unwrap());
        let kept = [[[0, 1], [2, 3]], [[1, 2], [0, 3]], [[0, 3], [1, 2]]];
        let members: Vec<Classifier> = (kept.iter())
            .map(|k| pruning::prune_heads(&base, &k.iter().map(|b| b.to_vec()).collect::<Vec<_>>()))
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        let fused = hydra::fuse(&members, Merge::Average, 0).unwrap();
        let method: Hydra = toml::from_str("members = 3\nkeep = 2").unwrap();
        let shape = ModelShape::Vit(vit);
        let sizing = |epochs| Sizing {
            base: &shape,
            train_samples: 10,
            epochs,
            batch_size: 4,
        };
        let zero_shot = method.work(&sizing(0));
        let each: Vec<u64> = members.iter().map(|m| m.flops(0)).collect();
        assert_eq!(zero_shot.eval_flops, each.iter().sum::<u64>());
        assert_eq!(zero_shot.eval_flops, fused.flops);
        assert_eq!(zero_shot.eval_params, fused.params as u64);
        assert_eq!(zero_shot.trainings.len(), 1, "scoring only");
        // One fine-tune of each pruned member, one after another.
        let tuned = method.work(&sizing(2));
        let fine_tunes: Vec<&Training> = tuned.trainings[1..].iter().collect();
        assert_eq!(fine_tunes.len(), 3);
        assert!(
            fine_tunes
                .iter()
                .all(|t| t.forward_flops == each[0] && t.samples == 20)
        );
        assert_eq!(fine_tunes[0].params, members[0].num_params() as u64);
    }
}
