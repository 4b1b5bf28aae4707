//! Fine-tunes: the MAP's short ones and the final one distilled from the unpruned model.

use backbone::VisionTransformer;
use burn::module::Module;
use burn::tensor::Device;
use data::{ImageDataset, SubsetSize, mix, stratified_subset};
use train::{Distill, FitOptions, ImageData, TrainConfig, TrainTotals, fit_with_report};

use crate::config::HetDptConfig;
use crate::error::HetDptError;
use crate::pruned::PrunedViT;

/// The chosen model fine-tuned on `train` (or its `finetune_images` subset) with distillation
/// from `base`.
pub(crate) fn final_finetune(
    base: &VisionTransformer,
    model: PrunedViT,
    train: ImageData<'_>,
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<(PrunedViT, TrainTotals), HetDptError> {
    let finetune_set = match cfg.finetune_images {
        Some(n) => Some(subset(train.set, n, mix(seed, 3))?),
        None => None,
    };
    let data = ImageData {
        set: finetune_set.as_ref().unwrap_or(train.set),
        norm: train.norm,
    };
    let distill = Distill {
        teacher: base.clone().into(),
        alpha: cfg.alpha,
        temperature: cfg.temperature,
    };
    finetune(
        model,
        data,
        &cfg.recipe(cfg.finetune_epochs),
        Some(distill),
        device,
        mix(seed, 4),
        "hetdpt fine-tune".into(),
    )
}

/// A seeded stratified subset of at most `n` images.
pub(crate) fn subset(set: &ImageDataset, n: usize, seed: u64) -> Result<ImageDataset, HetDptError> {
    let n = n.min(set.len());
    let idx = stratified_subset(&set.labels, SubsetSize::Total(n), seed)
        .map_err(|e| HetDptError::data(format!("subset of {}", set.name), e))?;
    Ok(set.subset(&idx))
}

/// Fine-tunes `model` (plain device) on `device`'s autodiff twin, with what it cost; no-op for
/// 0 epochs.
pub(crate) fn finetune(
    model: PrunedViT,
    data: ImageData<'_>,
    recipe: &TrainConfig,
    distill: Option<Distill>,
    device: &Device,
    seed: u64,
    label: String,
) -> Result<(PrunedViT, TrainTotals), HetDptError> {
    if recipe.epochs == 0 {
        return Ok((model, TrainTotals::default()));
    }
    let autodiff = device.clone().autodiff();
    let opts = FitOptions {
        device: autodiff.clone(),
        seed,
        label,
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill,
        validation: None,
    };
    // `train` re-enables gradients on parameters of a model that was put in validation mode.
    let trainable = model.fork(&autodiff).train();
    let (tuned, report) = fit_with_report(trainable, data, recipe, &opts)?;
    Ok((tuned.valid(), report.totals))
}
