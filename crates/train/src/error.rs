//! Why training stopped.

use std::path::{Path, PathBuf};

/// Why training stopped; each says which training (`label`) and what is left of it.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// The loss became NaN or infinite; the last checkpoint (if any) is left as it was.
    #[error(
        "{label}: the training loss became {loss} at epoch {}, step {step}; training stopped \
         (try a lower train.lr or a grad_clip); the last checkpoint is intact",
        epoch + 1
    )]
    NonFiniteLoss {
        label: String,
        epoch: usize,
        step: usize,
        loss: f64,
    },
    /// A signal asked the process to stop (see [`crate::interrupt`]); the checkpoint of the
    /// last finished epoch, if any, is left as it was.
    #[error("{label}: {}", interrupted(*signal, *epochs_done, *epochs, *checkpointed))]
    Interrupted {
        label: String,
        signal: i32,
        /// Epochs done and kept in the checkpoint, of `epochs`.
        epochs_done: usize,
        epochs: usize,
        checkpointed: bool,
    },
    /// A checkpoint file or folder that cannot be read, written or used (`what` says how);
    /// the error underneath, if any, is the source.
    #[error("{}: {what}", path.display())]
    Checkpoint {
        path: PathBuf,
        what: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// Invalid recipe.
    #[error("{0}")]
    Invalid(String),
    /// A batch of the data set `set` cannot be made (the data error is the source).
    #[error("data set {set}")]
    Data {
        set: String,
        #[source]
        source: data::DataError,
    },
    /// A file operation; the I/O error names the path (as [`data::with_path`] and
    /// [`data::atomic_write`] give it).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl TrainError {
    /// An I/O error on `path`: the message names the path once, the I/O error is the source.
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        Self::Io(data::with_path(path, e))
    }

    /// A checkpoint file or folder that cannot be used, for a reason of its own (no source).
    pub(crate) fn checkpoint(path: &Path, what: impl Into<String>) -> Self {
        Self::Checkpoint {
            path: path.to_path_buf(),
            what: what.into(),
            source: None,
        }
    }

    /// A batch of the data set `set` that cannot be made.
    pub(crate) fn data(set: &str, source: data::DataError) -> Self {
        Self::Data {
            set: set.to_string(),
            source,
        }
    }
}

/// `: stopped by SIGTERM in epoch 3 of 8; its checkpoint of epoch 2 is intact ...`.
fn interrupted(signal: i32, epochs_done: usize, epochs: usize, checkpointed: bool) -> String {
    let signal = crate::interrupt::signal_name(signal);
    let kept = match (checkpointed, epochs_done) {
        (true, 1..) => {
            format!("its checkpoint of epoch {epochs_done} is intact and a rerun resumes from it")
        }
        _ => "no epoch was finished, so nothing of it is kept".to_string(),
    };
    format!(
        "stopped by {signal} in epoch {} of {epochs}; {kept}",
        epochs_done + 1
    )
}
