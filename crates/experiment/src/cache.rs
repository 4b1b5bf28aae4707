//! Training through the model cache: every trained model is keyed by a fingerprint of what made
//! it (recipe, data, seed, base model), checkpointed after every epoch, and read back instead of
//! retrained when the same recipe comes again.

use std::path::PathBuf;

use burn::tensor::Device;
use train::{Checkpoint, Data, Distill, FitOptions, TrainConfig, Trainable, fit_with_report};

use crate::error::{Context, Result};
use crate::results::TrainCost;

mod manage;

pub use manage::{CacheEntry, list_cache};

/// Trains models with checkpoints in the cache.
pub struct Trainer {
    pub cache_root: PathBuf,
    pub quiet: bool,
}

/// One training run: what identifies it in the cache, and how it runs.
pub struct Fit<'a> {
    /// Everything that determines the trained weights (the cache key is its fingerprint).
    pub identity: &'a serde_json::Value,
    pub config: &'a TrainConfig,
    pub seed: u64,
    /// Shown in the progress line and in errors.
    pub label: String,
    pub distill: Option<Distill>,
    /// The autodiff device the model lives on.
    pub device: &'a Device,
}

impl Trainer {
    /// Trains `model` on `data`, resuming from (or reading back) the cached checkpoint, or
    /// training afresh when it is damaged; also returns what the training cost (read from the
    /// checkpoint, so a cached model costs what training it did, resumes and recoveries
    /// included).
    pub fn fit<M: Trainable>(
        &self,
        model: M,
        data: Data<'_>,
        run: Fit<'_>,
    ) -> Result<(M, TrainCost)> {
        let fingerprint = fingerprint(run.identity);
        let checkpoint = Checkpoint::new(self.cache_root.join(&fingerprint), fingerprint);
        let options = FitOptions {
            device: run.device.clone(),
            seed: run.seed,
            label: run.label,
            checkpoint: Some(checkpoint.clone()),
            quiet: self.quiet,
            stop_after: None,
            distill: run.distill,
        };
        let trainable_params = train::trainable_params(&model) as u64;
        let (model, report) = fit_with_report(model, data, run.config, &options)?;
        let Some(state) = report.state else {
            // Nothing to train (no epochs): nothing stored either.
            return Ok((model, TrainCost::default()));
        };
        // `fit` checked (or wrote) the model file and returns its length in the state; only a
        // state without one (none is written so) needs the file itself.
        let stored_bytes = match state.model {
            Some(check) => check.bytes,
            None => {
                let path = checkpoint.model_file(&state);
                std::fs::metadata(&path).context(path.display())?.len()
            }
        };
        // From the state, not the report: a worker process may have done the training.
        let cost = TrainCost {
            wall_seconds: state.totals.wall_seconds,
            steps: state.totals.steps,
            samples: state.totals.samples,
            stored_bytes,
            trainings: 1,
            trainable_params,
            resumed: usize::from(!state.history.resumed_from.is_empty()),
            recovered: usize::from(!state.history.recovered.is_empty()),
        };
        Ok((model, cost))
    }
}

/// The cache key of an identity: FNV-1a of its JSON text.
pub fn fingerprint(identity: &serde_json::Value) -> String {
    format!("{:016x}", fnv1a(identity.to_string().as_bytes()))
}

/// FNV-1a, 64 bits: a stable fingerprint (std's hasher may change between releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}
