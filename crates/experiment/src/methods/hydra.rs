//! `hydra`: Hydra Ensembles (METHODS.md §1). Head importance on the seed's base model (ViT or
//! BERT), M members that keep different heads, optional per-member fine-tuning of the whole
//! member, of all but its input embedding (`finetune = "encoder"`: the fused members then share
//! one embedding) or of its classifier only (`finetune = "head"`; `train = { epochs = 0 }` is
//! the zero-shot mode), fused into one network that runs every member in a single pass.
//!
//! With `analysis = true` it also writes the pruning analysis (METHODS.md §1.4): the base model
//! with a growing share of its heads gated off, in the strategy's order, evaluated on the clean,
//! shifted and OOD sets (`pruning.csv` and `pruning.md`).

use burn::module::Module;
use data::{Corruption, Dataset, corrupt};
use hydra::{Calibration, Keep, Merge, SelectConfig};
use serde::{Deserialize, Serialize};

use super::gated::Gated;
use super::{Built, Context, Method};
use crate::config::ExperimentConfig;
use crate::eval::{id_metrics, ood_metrics, predict, scores, shift_metrics};
use uq_metrics::Score;

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
    pub calibration: usize,
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

    fn check(&self, _config: &ExperimentConfig) -> Result<(), String> {
        if self.members == 0 {
            return Err("members must be at least 1".into());
        }
        if self.keep.is_some() && self.keep_total.is_some() {
            return Err("give `keep` (per block) or `keep_total`, not both".into());
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(format!("temperature = {} must be >= 0", self.temperature));
        }
        if self.calibration == 0 {
            return Err("calibration must be at least 1".into());
        }
        self.merge.parse::<Merge>().map_err(|e| e.to_string())?;
        self.ood_calibration
            .parse::<Corruption>()
            .map_err(|e| format!("ood_calibration: {e}"))?;
        hydra::strategy(&self.importance, &self.importance_params).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built, String> {
        let base = &ctx.base[0];
        let importance = hydra::strategy(&self.importance, &self.importance_params)
            .map_err(|e| e.to_string())?;
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
        )
        .map_err(|e| e.to_string())?;
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
            let pruned = hydra::prune(base, &plan.kept).map_err(|e| e.to_string())?;
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
        let merge: Merge = self
            .merge
            .parse()
            .map_err(|e: hydra::HydraError| e.to_string())?;
        let fused = hydra::fuse(&members, merge, ctx.text_tokens).map_err(|e| e.to_string())?;
        let mut built = Built::new(fused);
        built.extra.insert(
            "head_scores".into(),
            serde_json::to_value(plans.iter().map(|p| &p.scores).collect::<Vec<_>>())
                .map_err(|e| e.to_string())?,
        );
        built.extra.insert(
            "kept_heads".into(),
            serde_json::to_value(plans.iter().map(|p| &p.kept).collect::<Vec<_>>())
                .map_err(|e| e.to_string())?,
        );
        if self.analysis {
            let scores = importance
                .scores(
                    base,
                    &calibration,
                    &hydra::ScoreContext {
                        seed: ctx.seed_for("analysis"),
                        member: 0,
                    },
                )
                .map_err(|e| e.to_string())?;
            let (header, rows) = pruning_analysis(ctx, &scores)?;
            let csv: String = std::iter::once(&header)
                .chain(&rows)
                .map(|r| r.join(",") + "\n")
                .collect();
            let markdown: String = [
                format!("| {} |\n", header.join(" | ")),
                format!("|{}\n", "---:|".repeat(header.len())),
            ]
            .into_iter()
            .chain(rows.iter().map(|r| format!("| {} |\n", r.join(" | "))))
            .collect();
            built.files.push(("pruning.csv".into(), csv.into_bytes()));
            built
                .files
                .push(("pruning.md".into(), markdown.into_bytes()));
        }
        Ok(built)
    }
}

impl Hydra {
    /// The first `calibration` validation samples in batches, plus (images) their corrupted
    /// copies as OOD calibration data.
    fn calibration_data(&self, ctx: &Context<'_>) -> Result<Calibration, String> {
        let val = ctx.val;
        if val.is_empty() {
            return Err(
                "hydra scores heads on the validation split: set data.val_fraction > 0".into(),
            );
        }
        let n = self.calibration.min(val.len());
        let indices: Vec<usize> = (0..n).collect();
        let shifted = match val {
            train::Data::Images(images) => {
                let corruption: Corruption = self
                    .ood_calibration
                    .parse()
                    .map_err(|e: data::DataError| e.to_string())?;
                let set = corrupt(
                    &images.set.subset(&indices),
                    corruption,
                    5,
                    ctx.seed_for("ood-calibration"),
                )
                .map_err(|e| e.to_string())?;
                Some(Dataset::Images(set))
            }
            train::Data::Text(_) => None,
        };
        let batch = ctx.config.data.eval_batch_size.min(128);
        let mut calibration = Calibration {
            batches: Vec::new(),
            ood: Vec::new(),
        };
        for chunk in indices.chunks(batch) {
            let input = val
                .batch(chunk, None, ctx.device)
                .map_err(|e| e.to_string())?;
            calibration
                .batches
                .push((input, val.labels(chunk, ctx.device)));
            if let Some(shifted) = &shifted {
                let ood = (ctx.prep.data(shifted))
                    .batch(chunk, None, ctx.device)
                    .map_err(|e| e.to_string())?;
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

/// Prune ratios 0, 0.1, ..., 0.9 of all heads, lowest scores first, gated off in the base model
/// (no fine-tuning): accuracy, NLL and ECE on the test set, NLL and ECE on each shifted set, and
/// on each OOD set the AUROC and the mean confidence (max softmax probability; OOD has no labels,
/// so no loss). A header and one row per ratio, written as CSV (plot data) and as a Markdown
/// table.
fn pruning_analysis(
    ctx: &Context<'_>,
    head_scores: &hydra::HeadScores,
) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let sets = ctx.sets;
    let batch = ctx.config.data.eval_batch_size;
    let score: Score = ctx
        .config
        .data
        .ood_score
        .parse()
        .map_err(|e: uq_metrics::MetricsError| e.to_string())?;
    let mut header = vec![
        "ratio".to_string(),
        "heads_kept".into(),
        "clean_acc".into(),
        "clean_nll".into(),
        "clean_ece".into(),
    ];
    for (name, _) in &sets.shift {
        header.extend([format!("{name}_nll"), format!("{name}_ece")]);
    }
    for set in &sets.ood {
        header.extend([
            format!("{}_auroc", set.name()),
            format!("{}_confidence", set.name()),
        ]);
    }
    let mut rows = Vec::new();
    for step in 0..10 {
        let ratio = step as f64 / 10.0;
        let kept = hydra::prune_ratio(head_scores, ratio).map_err(|e| e.to_string())?;
        let mask = kept
            .mask(heads(&ctx.base[0]), ctx.device)
            .map_err(|e| e.to_string())?;
        let model = Gated::heads(ctx.base[0].clone(), mask, ctx.base_flops());
        let clean = predict(&model, ctx.prep.data(&sets.test), batch, ctx.device)?;
        let id = id_metrics(&clean)?;
        let mut row = vec![
            format!("{ratio:.1}"),
            kept.0.iter().map(Vec::len).sum::<usize>().to_string(),
            format!("{:.6}", id.accuracy),
            format!("{:.6}", id.nll),
            format!("{:.6}", id.ece),
        ];
        for (_, set) in &sets.shift {
            let m = shift_metrics(&predict(&model, ctx.prep.data(set), batch, ctx.device)?)?;
            row.extend([format!("{:.6}", m.nll), format!("{:.6}", m.ece)]);
        }
        for set in &sets.ood {
            let ood = predict(&model, ctx.prep.data(set), batch, ctx.device)?;
            let m = ood_metrics(&clean, &ood, score)?;
            // Mean max-softmax probability: how confidently the pruned model answers on OOD.
            let msp = scores(&ood, Score::Msp)?;
            let confidence = 1.0 - msp.iter().sum::<f64>() / msp.len().max(1) as f64;
            row.extend([format!("{:.6}", m.auroc), format!("{confidence:.6}")]);
        }
        rows.push(row);
    }
    Ok((header, rows))
}
