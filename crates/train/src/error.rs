//! Why training stopped.

use std::path::Path;

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
    /// A checkpoint could not be read, written or used.
    #[error("{0}")]
    Checkpoint(String),
    /// Invalid recipe or data.
    #[error("{0}")]
    Invalid(String),
    /// Images that could not be read from disk (the file named).
    #[error(transparent)]
    Data(#[from] data::DataError),
    #[error(transparent)]
    Io(std::io::Error),
}

impl TrainError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        Self::Io(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        ))
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
