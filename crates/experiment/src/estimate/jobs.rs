//! A run's estimate: every planned job and every method's evaluation, in FLOPs, peak memory and
//! time on a named device.

use std::path::Path;

use data::train_val_split;
use serde::Serialize;

use super::devices::{DeviceSpec, Precision};
use crate::base::BaseSpec;
use crate::config::ExperimentConfig;
use crate::error::{ErrorContext, ExperimentError, Result};
use crate::plan::{PlannedJob, plan};
use crate::prep::Prep;
use crate::sets::{Loaded, load};
use crate::workload::{ModelShape, Prompts, Sizing, Training, Work};
use runtime::Job;

/// FLOPs, peak memory and time of one line of the estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    pub flops: f64,
    /// Peak bytes, f32 (the largest step of the line).
    pub memory_bytes: u64,
    pub seconds: f64,
    /// Whether the peak exceeds the device's memory.
    pub over_memory: bool,
}

/// A planned job with its cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobEstimate {
    #[serde(flatten)]
    pub job: PlannedJob,
    #[serde(flatten)]
    pub cost: Cost,
}

/// One method's evaluation over every seed, with what it builds outside the training jobs
/// (HetDPT's search and fine-tune).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalEstimate {
    pub method: String,
    /// Samples evaluated per seed: the test, OOD and shifted sets.
    pub samples: u64,
    pub seeds: usize,
    #[serde(flatten)]
    pub cost: Cost,
}

/// The estimate of a run on a device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub device: &'static DeviceSpec,
    pub precision: Precision,
    /// The base model as counted.
    pub flops_per_sample: u64,
    pub params: u64,
    pub train_samples: u64,
    pub jobs: Vec<JobEstimate>,
    pub evaluation: Vec<EvalEstimate>,
    pub total_flops: f64,
    pub total_seconds: f64,
}

/// The estimate of `config`'s run on `device` in `precision`: the data are indexed (their sizes
/// after splits and limits; text is tokenised for its mean length) and the backbone's
/// configuration read, nothing is trained.
pub fn estimate(
    config: &ExperimentConfig,
    data_root: &Path,
    device: &'static DeviceSpec,
    precision: Precision,
) -> Result<Estimate> {
    let loaded = load(config, data_root)?;
    let spec = BaseSpec::new(config, data_root, &loaded.train_full)?;
    let (base, prompts) = shape(config, &spec, &loaded)?;
    let (train_samples, eval_samples) = sizes(config, &loaded)?;
    let price = Price { device, precision };
    let sizing = |train: &train::TrainConfig| Sizing {
        base: &base,
        train_samples,
        epochs: train.epochs,
        batch_size: train.batch_size,
    };
    let mut works = Vec::with_capacity(config.methods.len());
    for method in &config.methods {
        let recipe = method.train_config(&config.train)?;
        works.push(method.method.work(&sizing(&recipe)));
    }
    let (flops, params) = (base.forward_flops(), base.params());
    let base_cost = match &prompts {
        // A zero-shot classifier is made, never trained: its class prompts through the text
        // tower.
        Some(prompts) => price.cost(&[], prompts.flops() as f64, prompts.memory_bytes(params)),
        None => {
            let act = base.train_activation_bytes();
            let training =
                (sizing(&config.train)).training("base model", flops, (params, params), act);
            price.cost(std::slice::from_ref(&training), 0.0, 0)
        }
    };
    let jobs: Vec<JobEstimate> = (plan(config).into_iter())
        .map(|job| {
            let cost = match job.job {
                Job::Base(_) => base_cost.clone(),
                Job::Method(i) => price.cost(&works[i].trainings, 0.0, 0),
            };
            JobEstimate { job, cost }
        })
        .collect();
    let evaluation = evaluation(config, &works, eval_samples, &price);
    let total_flops = (jobs.iter().map(|j| j.cost.flops))
        .chain(evaluation.iter().map(|e| e.cost.flops))
        .sum();
    Ok(Estimate {
        device,
        precision,
        flops_per_sample: flops,
        params,
        train_samples,
        jobs,
        evaluation,
        total_flops,
        total_seconds: device.seconds(total_flops, precision),
    })
}

/// Costs on a device in a precision.
struct Price {
    device: &'static DeviceSpec,
    precision: Precision,
}

impl Price {
    /// The cost of `trainings` one after another, plus `extra_flops` and a step that holds
    /// `extra_memory` bytes.
    fn cost(&self, trainings: &[Training], extra_flops: f64, extra_memory: u64) -> Cost {
        let flops = extra_flops + trainings.iter().map(Training::flops).sum::<f64>();
        let memory_bytes =
            (trainings.iter().map(Training::memory_bytes)).fold(extra_memory, u64::max);
        Cost {
            flops,
            memory_bytes,
            seconds: self.device.seconds(flops, self.precision),
            over_memory: self.device.over_memory(memory_bytes),
        }
    }
}

/// Each method's evaluation of `eval_samples` samples a seed, over every seed, with the
/// trainings of a method that trains while it is built (no job of its own).
fn evaluation(
    config: &ExperimentConfig,
    works: &[Work],
    eval_samples: u64,
    price: &Price,
) -> Vec<EvalEstimate> {
    let seeds = config.experiment.seeds.len();
    (config.methods.iter().zip(works))
        .map(|(method, work)| {
            let built: &[Training] = match method.method.trains() {
                true => &[],
                false => &work.trainings,
            };
            let per_seed = price.cost(
                built,
                work.eval_flops as f64 * eval_samples as f64,
                work.eval_memory_bytes(config.data.eval_batch_size),
            );
            let flops = per_seed.flops * seeds as f64;
            EvalEstimate {
                method: method.name.clone(),
                samples: eval_samples,
                seeds,
                cost: Cost {
                    flops,
                    seconds: price.device.seconds(flops, price.precision),
                    ..per_seed
                },
            }
        })
        .collect()
}

/// The base model's shape: the ViT configuration the run builds, the BERT checkpoint's
/// configuration at the test set's mean tokenised length, or CLIP's vision tower with the
/// prompts that make its zero-shot classifier.
fn shape(
    config: &ExperimentConfig,
    spec: &BaseSpec,
    loaded: &Loaded,
) -> Result<(ModelShape, Option<Prompts>)> {
    if let Some((clip, [classes, templates])) = spec.clip() {
        // The projection to the joint width E counted as the vision tower's head.
        let vision = clip.vision.clone().with_num_classes(clip.projection_dim);
        let prompts = Prompts {
            clip,
            classes,
            templates,
        };
        return Ok((ModelShape::Clip { vision, classes }, Some(prompts)));
    }
    if let Some(vit) = spec.vit() {
        return Ok((ModelShape::Vit(vit.clone()), None));
    }
    let (Some(bert), Some(tokenizer)) = (spec.bert(), spec.tokenizer()) else {
        return Err(ExperimentError::invalid(
            "backbone: no FLOP count for this backbone (a ViT, a BERT or CLIP's zero-shot \
             classifier is counted)",
        ));
    };
    let max_tokens = config.data.max_tokens;
    let prep = Prep::Tokens {
        tokenizer,
        max_tokens,
    };
    let bert = ModelShape::Bert {
        config: bert,
        classes: loaded.train_full.num_classes(),
        tokens: prep.mean_tokens(&loaded.test)?,
        max_tokens,
    };
    Ok((bert, None))
}

/// Samples of the first seed's training split and of its evaluation sets, as the data stage
/// splits and limits them (every seed's are the same size).
fn sizes(config: &ExperimentConfig, loaded: &Loaded) -> Result<(u64, u64)> {
    let data = &config.data;
    let seed = config.experiment.seeds.first().copied().unwrap_or(0);
    let full = &loaded.train_full;
    let (train, _) = train_val_split(full.labels(), data.val_fraction, seed, true)
        .context("data.val_fraction")?;
    let limited = |n: usize, limit: Option<usize>| limit.map_or(n, |l| n.min(l)) as u64;
    let test = limited(loaded.test.len(), data.test_limit);
    let ood: u64 = (loaded.ood.iter())
        .map(|set| limited(set.len(), data.test_limit))
        .sum();
    // A test set on disk counts from its index: nothing is decoded for the estimate.
    let shifted: u64 = match loaded.test.image_dims() {
        Some(_) => data.shift.iter().map(|s| s.severities.len() as u64).sum(),
        None => 0,
    };
    Ok((
        limited(train.len(), data.train_limit),
        test + ood + shifted * test,
    ))
}
