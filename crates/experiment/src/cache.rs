//! Training through the model cache: every trained model is keyed by a fingerprint of what made
//! it (recipe, data, seed, base model), checkpointed after every epoch, and read back instead of
//! retrained when the same recipe comes again. The folders' locks, the in-use marks and the
//! cache's listing and cleaning are the runtime's ([`runtime::cache`]); this trains into them.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use burn::tensor::Device;
use runtime::cache::lock::{Attempt, FolderLock, LOCK_TIMES, try_lock};
use runtime::{InUse, MadeBy};
use seam::Trainable;
use train::{Checkpoint, Data, Distill, FitOptions, History, TrainConfig, fit_with_report};

use crate::error::{ErrorContext, Result, check_stop};
use report::curves::{Epoch, TrainingLog};
use report::summary::TrainCost;

/// Trains models with checkpoints in the cache, and marks the folders it uses as in use (a
/// file `in-use-<pid>.txt` in the cache, removed when the trainer is dropped) so that
/// `uqformer cache clean` leaves them alone.
pub struct Trainer {
    pub cache_root: PathBuf,
    pub quiet: bool,
    /// Refuse to train: a training the cache does not hold whole is an error (`--no-train`).
    pub no_train: bool,
    /// The experiment's name, recorded as the maker of the folders it creates.
    pub experiment: String,
    /// Train with the pool's other threads spinning between ops ([`crate::pool::hot`]): for a
    /// process that trains alone on its cores (a run without worker processes), where waking
    /// a sleeping thread for each op cost 4-20% of training's speed on two threads
    /// (docs/performance.md); beside other training processes it would take their cores.
    pub spin: bool,
    /// The fingerprints fitted or read back so far, marked in the cache while this runs.
    used: InUse,
    /// The epoch logs of those trainings, in the order first used.
    logs: Mutex<Vec<TrainingLog>>,
}

/// What a model trains on, and the held-out split measured after every epoch (its loss and
/// accuracy go into the training's log; the weights are the same with or without it).
#[derive(Debug, Clone, Copy)]
pub struct Splits<'a> {
    pub train: Data<'a>,
    pub val: Option<Data<'a>>,
}

impl<'a> Splits<'a> {
    /// `val` is left out when empty (an experiment with `data.val_fraction = 0`).
    pub fn new(train: Data<'a>, val: Data<'a>) -> Self {
        Self {
            train,
            val: (!val.is_empty()).then_some(val),
        }
    }
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
    pub fn new(cache_root: PathBuf, quiet: bool, experiment: String) -> Self {
        Self {
            used: InUse::new(cache_root.clone()),
            cache_root,
            quiet,
            no_train: false,
            experiment,
            spin: false,
            logs: Mutex::default(),
        }
    }

    /// The epoch log of every training fitted or read back so far (from the checkpoints, so a
    /// cached model or one a worker trained has its log too).
    pub fn logs(&self) -> Vec<TrainingLog> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The fingerprints of the cache folders this trainer used, in order.
    pub fn used(&self) -> Vec<String> {
        self.used.used()
    }

    /// Trains `model` on `data.train`, validated on `data.val` after every epoch, resuming from (or reading back) the cached checkpoint, or
    /// training afresh when it is damaged; also returns what the training cost (read from the
    /// checkpoint, so a cached model costs what training it did, resumes and recoveries
    /// included).
    pub fn fit<M: Trainable>(
        &self,
        model: M,
        data: Splits<'_>,
        run: Fit<'_>,
    ) -> Result<(M, TrainCost)> {
        let fingerprint = fingerprint(run.identity);
        self.used.mark(&fingerprint);
        let folder = self.cache_root.join(&fingerprint);
        let _lock = self.lock(&folder, &run.label)?;
        let checkpoint = Checkpoint::new(folder, fingerprint);
        let label = run.label.clone();
        self.refuse_to_train(&checkpoint, &label, run.config.epochs)?;
        let made_by = MadeBy {
            experiment: self.experiment.clone(),
            training: label.clone(),
        };
        // Before training, so that a folder of an interrupted training says whose it is; and
        // after, for a folder that replaced one set aside as damaged.
        record(&made_by, checkpoint.dir());
        let options = FitOptions {
            device: run.device.clone(),
            seed: run.seed,
            label: run.label,
            checkpoint: Some(checkpoint.clone()),
            quiet: self.quiet,
            stop_after: None,
            distill: run.distill,
            validation: data.val,
        };
        let trainable_params = train::trainable_params(&model) as u64;
        let train = || fit_with_report(model, data.train, run.config, &options);
        let (model, report) = if self.spin {
            runtime::pool::hot(train)
        } else {
            train()
        }?;
        record(&made_by, checkpoint.dir());
        let Some(state) = report.state else {
            // Nothing to train (no epochs): nothing stored either.
            return Ok((model, TrainCost::default()));
        };
        // A cache hit writes nothing: its time on `state.json` says when the folder was last
        // used (`cache list`, `cache clean --older-than`). Best effort, as for the in-use file.
        if let Ok(file) = fs::File::options()
            .write(true)
            .open(checkpoint.dir().join("state.json"))
        {
            let _ = file.set_modified(SystemTime::now());
        }
        // `fit` checked (or wrote) the model file and returns its length in the state; only a
        // state without one (none is written so) needs the file itself.
        let stored_bytes = match state.model {
            Some(check) => check.bytes,
            None => {
                let path = checkpoint.model_file(&state);
                fs::metadata(&path).context(path.display())?.len()
            }
        };
        self.record_log(label, &state.history);
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

impl Trainer {
    /// With `no_train`, an error unless the checkpoint holds all `epochs`.
    fn refuse_to_train(&self, checkpoint: &Checkpoint, label: &str, epochs: usize) -> Result<()> {
        let done = epochs_done(checkpoint);
        if !self.no_train || done >= epochs {
            return Ok(());
        }
        Err(crate::error::ExperimentError::invalid(format!(
            "{label}: the cache holds {done} of its {epochs} epochs ({}) and --no-train refuses \
             to train it",
            checkpoint.dir().display()
        )))
    }

    /// Keeps the epoch log of training `label` (once, however often it is read back).
    fn record_log(&self, label: String, history: &History) {
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        if !logs.iter().any(|l| l.label == label) {
            logs.push(TrainingLog {
                label,
                epochs: (history.epochs.iter())
                    .map(|e| Epoch {
                        epoch: e.epoch,
                        loss: e.loss,
                        accuracy: e.accuracy,
                        seconds: e.seconds,
                        val_loss: e.val_loss,
                        val_accuracy: e.val_accuracy,
                    })
                    .collect(),
            });
        }
    }

    /// The lock of the cache folder `folder`, waiting while another process (here or on a
    /// machine sharing the cache) trains into it; a signal stops the wait.
    fn lock(&self, folder: &Path, label: &str) -> Result<FolderLock> {
        let mut told = false;
        loop {
            match try_lock(folder, LOCK_TIMES).context(folder.display())? {
                Attempt::Held(lock) => return Ok(lock),
                Attempt::Busy(holder) => {
                    if !told {
                        eprintln!(
                            "{label}: waiting for {holder}, which is training {}",
                            folder.display()
                        );
                        told = true;
                    }
                    check_stop(label)?;
                    std::thread::sleep(LOCK_TIMES.poll);
                }
            }
        }
    }
}

/// Writes `made_by` into `dir` unless a record is there ([`MadeBy::FILE`]). Best effort: a
/// folder that cannot take it fails the training itself, with a better message, a moment later.
fn record(made_by: &MadeBy, dir: &Path) {
    let file = dir.join(MadeBy::FILE);
    if file.exists() {
        return;
    }
    if let Ok(text) = serde_json::to_vec_pretty(made_by) {
        let _ = fs::create_dir_all(dir).and_then(|()| data::atomic_write(&file, &text));
    }
}

/// The epochs a checkpoint holds (0 without a readable one).
pub fn epochs_done(checkpoint: &Checkpoint) -> usize {
    checkpoint
        .state()
        .ok()
        .flatten()
        .map_or(0, |s| s.epochs_done)
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
