//! Training checkpoints: model and optimiser as Burn records, plus a small state file.
//!
//! Each save writes `model-<epoch>.bpk` and `optim-<epoch>.bpk`, then replaces `state.json`
//! atomically; only then are older files removed. A crash at any point leaves `state.json`
//! naming a complete pair, so the last checkpoint stays intact.

use std::fs;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::store::ModuleRecord;
use serde::{Deserialize, Serialize};

use crate::atomic::atomic_write;
use crate::error::TrainError;

/// What `state.json` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Epochs completed when the checkpoint was taken.
    pub epochs_done: usize,
    /// Identifies the run (recipe, data, seed): a checkpoint of another run is never resumed.
    pub fingerprint: String,
    /// What the epochs done cost, summed over every session that trained them.
    #[serde(default)]
    pub totals: TrainTotals,
}

/// The cost of training so far: wall seconds of the epochs, optimiser steps, samples seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainTotals {
    pub wall_seconds: f64,
    pub steps: u64,
    pub samples: u64,
}

/// A checkpoint folder.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    dir: PathBuf,
    fingerprint: String,
}

impl Checkpoint {
    pub fn new(dir: impl Into<PathBuf>, fingerprint: impl Into<String>) -> Self {
        Self {
            dir: dir.into(),
            fingerprint: fingerprint.into(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The saved state, if a checkpoint exists; an error if it belongs to another run or is unreadable.
    pub fn state(&self) -> Result<Option<CheckpointState>, TrainError> {
        let path = self.dir.join("state.json");
        if !path.exists() {
            return Ok(None);
        }
        let text = fs::read_to_string(&path).map_err(|e| TrainError::io(&path, e))?;
        let state: CheckpointState = serde_json::from_str(&text)
            .map_err(|e| TrainError::Checkpoint(format!("{}: {e}", path.display())))?;
        if state.fingerprint != self.fingerprint {
            return Err(TrainError::Checkpoint(format!(
                "{}: the checkpoint belongs to another run (fingerprint {} instead of {}); remove the folder to start afresh",
                self.dir.display(),
                state.fingerprint,
                self.fingerprint
            )));
        }
        Ok(Some(state))
    }

    /// The model file of the checkpoint whose state is `state`.
    pub fn model_file(&self, state: &CheckpointState) -> PathBuf {
        self.model_path(state.epochs_done)
    }

    /// Saves model and optimiser after `epochs_done` epochs, which cost `totals`.
    pub fn save<M: Module + Clone>(
        &self,
        model: &M,
        optim: &ModuleOptimizer,
        epochs_done: usize,
        totals: TrainTotals,
    ) -> Result<(), TrainError> {
        fs::create_dir_all(&self.dir).map_err(|e| TrainError::io(&self.dir, e))?;
        let record = |r: Result<burn::tensor::Bytes, burn::store::RecordError>| {
            r.map_err(|e| TrainError::Checkpoint(format!("{}: {e}", self.dir.display())))
        };
        let model_path = self.model_path(epochs_done);
        let optim_path = self.optim_path(epochs_done);
        let model_bytes = record(model.clone().into_record().into_bytes())?;
        atomic_write(&model_path, &model_bytes).map_err(|e| TrainError::io(&model_path, e))?;
        let optim_bytes = record(optim.into_bytes())?;
        atomic_write(&optim_path, &optim_bytes).map_err(|e| TrainError::io(&optim_path, e))?;
        let state = CheckpointState {
            epochs_done,
            fingerprint: self.fingerprint.clone(),
            totals,
        };
        let state_path = self.dir.join("state.json");
        let json = serde_json::to_vec_pretty(&state).expect("state serialises");
        atomic_write(&state_path, &json).map_err(|e| TrainError::io(&state_path, e))?;
        self.remove_older_than(epochs_done);
        Ok(())
    }

    /// Loads the checkpoint into `model` and `optim`, returning them with its state.
    pub fn load<M: Module>(
        &self,
        model: M,
        optim: ModuleOptimizer,
    ) -> Result<Option<(M, ModuleOptimizer, CheckpointState)>, TrainError> {
        let Some(state) = self.state()? else {
            return Ok(None);
        };
        let bad = |path: &Path, e: burn::store::RecordError| {
            TrainError::Checkpoint(format!("{}: {e}", path.display()))
        };
        let model_path = self.model_path(state.epochs_done);
        let record = ModuleRecord::load(&model_path).map_err(|e| bad(&model_path, e))?;
        let model = model
            .try_load_record(record)
            .map_err(|e| bad(&model_path, e))?;
        let optim_path = self.optim_path(state.epochs_done);
        let optim = optim.load(&optim_path).map_err(|e| bad(&optim_path, e))?;
        Ok(Some((model, optim, state)))
    }

    fn model_path(&self, epoch: usize) -> PathBuf {
        self.dir.join(format!("model-{epoch}.bpk"))
    }

    fn optim_path(&self, epoch: usize) -> PathBuf {
        self.dir.join(format!("optim-{epoch}.bpk"))
    }

    /// Best effort: a file left behind costs disk space, never correctness.
    fn remove_older_than(&self, epoch: usize) {
        for older in 0..epoch {
            let _ = fs::remove_file(self.model_path(older));
            let _ = fs::remove_file(self.optim_path(older));
        }
    }
}
