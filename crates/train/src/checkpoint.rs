//! Training checkpoints: model and optimiser as Burn records, plus a small state file.
//!
//! Each save writes `model-<epoch>.bpk` and `optim-<epoch>.bpk`, then replaces `state.json`
//! atomically; only then are older files removed. A crash at any point leaves `state.json`
//! naming a complete pair, so the last checkpoint stays intact. `state.json` also records each
//! file's length and CRC-32, so a file damaged afterwards (truncated, overwritten) is noticed on
//! load: the folder is then set aside and [`Checkpoint::load`] says so, and training starts again
//! (only the last checkpoint is kept, so from scratch is the one honest fallback).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::history::{History, TRAINING_CSV};
use data::atomic_write;

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
    /// The model file's length and checksum. Absent in checkpoints written before checksums
    /// existed; [`Checkpoint::load`] then fills it in from the file it read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<FileCheck>,
    /// The optimiser file's length and checksum, as for `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optim: Option<FileCheck>,
    /// Resumes and recoveries on the way to this checkpoint. Kept in the state, like `totals`,
    /// because a worker process trains with its output discarded and the main process only
    /// reads the finished checkpoint back.
    #[serde(default)]
    pub history: History,
}

/// The cost of training so far: wall seconds of the epochs, optimiser steps, samples seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainTotals {
    pub wall_seconds: f64,
    pub steps: u64,
    pub samples: u64,
}

/// A file's length and CRC-32 (damage, not tampering, is what it guards against).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheck {
    pub bytes: u64,
    pub crc32: u32,
}

impl FileCheck {
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            bytes: bytes.len() as u64,
            crc32: crc32fast::hash(bytes),
        }
    }

    /// Why `bytes` are not the file this check was taken of, if they are not.
    fn mismatch(&self, bytes: &[u8]) -> Option<String> {
        let found = Self::of(bytes);
        let what = if found.bytes < self.bytes {
            "truncated"
        } else {
            "wrong length"
        };
        if found.bytes != self.bytes {
            Some(format!(
                "{what}: {} bytes, state.json recorded {}",
                found.bytes, self.bytes
            ))
        } else if found.crc32 != self.crc32 {
            Some(format!(
                "checksum mismatch: CRC-32 {:08x}, state.json recorded {:08x}",
                found.crc32, self.crc32
            ))
        } else {
            None
        }
    }
}

/// What [`Checkpoint::load`] found.
pub enum Loaded<M> {
    /// No checkpoint yet.
    Nothing,
    /// A sound checkpoint, now in the model and optimiser.
    Checkpoint {
        model: M,
        optim: ModuleOptimizer,
        state: CheckpointState,
    },
    /// A damaged checkpoint, now set aside: train from scratch.
    Damaged(Damage),
}

/// A damaged checkpoint file, and where its folder was moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Damage {
    /// The damaged file where it was found.
    pub file: PathBuf,
    /// What is wrong with it.
    pub why: String,
    /// The folder the checkpoint (this file included) was renamed to, for inspection.
    pub set_aside: PathBuf,
}

impl Damage {
    /// The damaged file in its new place.
    pub fn set_aside_file(&self) -> PathBuf {
        match self.file.file_name() {
            Some(name) => self.set_aside.join(name),
            None => self.set_aside.clone(),
        }
    }
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "damaged checkpoint {} ({}); set aside as {}",
            self.file.display(),
            self.why,
            self.set_aside.display()
        )
    }
}

/// A file that cannot be used, why, and the error underneath if there is one.
struct Bad(
    PathBuf,
    String,
    Option<Box<dyn std::error::Error + Send + Sync>>,
);

impl Bad {
    fn caused(
        path: &Path,
        why: &str,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self(path.to_path_buf(), why.to_string(), Some(Box::new(cause)))
    }

    /// A [`Damage`] notice: a recovered condition reported in words, not an error that goes
    /// on, so the cause's message joins the reason here.
    fn into_damage(self, set_aside: PathBuf) -> Damage {
        let Bad(file, why, cause) = self;
        let why = match cause {
            Some(cause) => format!("{why}: {cause}"),
            None => why,
        };
        Damage {
            file,
            why,
            set_aside,
        }
    }
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
        self.read_state()?
            .map(|s| {
                s.map_err(|Bad(path, what, source)| TrainError::Checkpoint { path, what, source })
            })
            .transpose()
    }

    /// `Ok(None)` without a state file, `Some(Err)` for an unparsable one; an error for another
    /// run's checkpoint, or a state file that exists but cannot be read at all.
    fn read_state(&self) -> Result<Option<Result<CheckpointState, Bad>>, TrainError> {
        let path = self.dir.join("state.json");
        let text = match fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(TrainError::io(&path, e)),
        };
        let state: CheckpointState = match serde_json::from_slice(&text) {
            Ok(state) => state,
            Err(e) => return Ok(Some(Err(Bad::caused(&path, "not a checkpoint state", e)))),
        };
        if state.fingerprint != self.fingerprint {
            return Err(TrainError::checkpoint(
                &self.dir,
                format!(
                    "the checkpoint belongs to another run (fingerprint {} instead of {}); remove the folder to start afresh",
                    state.fingerprint, self.fingerprint
                ),
            ));
        }
        Ok(Some(Ok(state)))
    }

    /// The model file of the checkpoint whose state is `state`.
    pub fn model_file(&self, state: &CheckpointState) -> PathBuf {
        self.model_path(state.epochs_done)
    }

    /// Saves model and optimiser after `epochs_done` epochs, which cost `totals`, and returns
    /// the state written.
    pub fn save<M: Module + Clone>(
        &self,
        model: &M,
        optim: &ModuleOptimizer,
        epochs_done: usize,
        totals: TrainTotals,
        history: &History,
    ) -> Result<CheckpointState, TrainError> {
        fs::create_dir_all(&self.dir).map_err(|e| TrainError::io(&self.dir, e))?;
        let record = |path: &Path, r: Result<Bytes, burn::store::RecordError>| {
            r.map_err(|e| TrainError::Checkpoint {
                path: path.to_path_buf(),
                what: "cannot be encoded".into(),
                source: Some(Box::new(e)),
            })
        };
        let model_path = self.model_path(epochs_done);
        let optim_path = self.optim_path(epochs_done);
        // atomic_write's error names the file already.
        let model_bytes = record(&model_path, model.clone().into_record().into_bytes())?;
        atomic_write(&model_path, &model_bytes)?;
        let optim_bytes = record(&optim_path, optim.into_bytes())?;
        atomic_write(&optim_path, &optim_bytes)?;
        let state = CheckpointState {
            epochs_done,
            fingerprint: self.fingerprint.clone(),
            totals,
            model: Some(FileCheck::of(&model_bytes)),
            optim: Some(FileCheck::of(&optim_bytes)),
            history: history.clone(),
        };
        let csv_path = self.dir.join(TRAINING_CSV);
        atomic_write(&csv_path, history.training_csv().as_bytes())?;
        // Written last: it vouches for the files above.
        let state_path = self.dir.join("state.json");
        let json = serde_json::to_vec_pretty(&state).expect("state serialises");
        atomic_write(&state_path, &json)?;
        self.remove_older_than(epochs_done);
        Ok(state)
    }

    /// Loads the checkpoint into `model` and `optim`. A missing, truncated, altered or
    /// undecodable file (`state.json` included) is no error: the folder is renamed to
    /// `<folder>.damaged` (`.damaged-2`, ... if taken) and [`Loaded::Damaged`] says which file.
    /// Errors: another run's checkpoint, or a folder that cannot be read or moved.
    pub fn load<M: Module>(
        &self,
        model: M,
        optim: ModuleOptimizer,
    ) -> Result<Loaded<M>, TrainError> {
        let Some(state) = self.read_state()? else {
            return Ok(Loaded::Nothing);
        };
        match state.and_then(|state| self.read_files(model, optim, state)) {
            Ok((model, optim, state)) => Ok(Loaded::Checkpoint {
                model,
                optim,
                state,
            }),
            Err(bad) => Ok(Loaded::Damaged(bad.into_damage(self.set_aside()?))),
        }
    }

    /// Model and optimiser from the files `state` names, each checked against the state
    /// before it is decoded.
    fn read_files<M: Module>(
        &self,
        model: M,
        optim: ModuleOptimizer,
        mut state: CheckpointState,
    ) -> Result<(M, ModuleOptimizer, CheckpointState), Bad> {
        let model_path = self.model_path(state.epochs_done);
        let bytes = read_checked(&model_path, state.model.as_ref())?;
        state.model.get_or_insert_with(|| FileCheck::of(&bytes));
        let undecodable = |path: &Path, e| Bad::caused(path, "cannot be decoded", e);
        let model = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))
            .and_then(|record| model.try_load_record(record))
            .map_err(|e| undecodable(&model_path, e))?;
        let optim_path = self.optim_path(state.epochs_done);
        let bytes = read_checked(&optim_path, state.optim.as_ref())?;
        state.optim.get_or_insert_with(|| FileCheck::of(&bytes));
        let optim = optim
            .from_bytes(Bytes::from_bytes_vec(bytes))
            .map_err(|e| undecodable(&optim_path, e))?;
        Ok((model, optim, state))
    }

    /// Renames the folder aside (never deleted: it is evidence) and returns its new path.
    fn set_aside(&self) -> Result<PathBuf, TrainError> {
        let Some(name) = self.dir.file_name() else {
            return Err(TrainError::checkpoint(
                &self.dir,
                "expected a checkpoint folder with a name, to set it aside",
            ));
        };
        let name = name.to_string_lossy();
        let free = (1..)
            .map(|n| match n {
                1 => self.dir.with_file_name(format!("{name}.damaged")),
                n => self.dir.with_file_name(format!("{name}.damaged-{n}")),
            })
            .find(|p| fs::symlink_metadata(p).is_err())
            .expect("some name is free");
        fs::rename(&self.dir, &free).map_err(|e| TrainError::Checkpoint {
            path: self.dir.clone(),
            what: format!(
                "the checkpoint is damaged and could not be set aside as {}",
                free.display()
            ),
            source: Some(Box::new(e)),
        })?;
        Ok(free)
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

/// The file's bytes, if it can be read and matches `check` (when the state has one).
fn read_checked(path: &Path, check: Option<&FileCheck>) -> Result<Vec<u8>, Bad> {
    let bytes = fs::read(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => Bad(path.to_path_buf(), "missing".into(), None),
        _ => Bad::caused(path, "unreadable", e),
    })?;
    match check.and_then(|c| c.mismatch(&bytes)) {
        Some(why) => Err(Bad(path.to_path_buf(), why, None)),
        None => Ok(bytes),
    }
}
