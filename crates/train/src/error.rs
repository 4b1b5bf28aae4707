//! Why training stopped.

use std::fmt;
use std::path::Path;

#[derive(Debug)]
pub enum TrainError {
    /// The loss became NaN or infinite; the last checkpoint (if any) is left as it was.
    NonFiniteLoss {
        label: String,
        epoch: usize,
        step: usize,
        loss: f64,
    },
    /// A signal asked the process to stop (see [`crate::interrupt`]); the checkpoint of the
    /// last finished epoch, if any, is left as it was.
    Interrupted {
        label: String,
        signal: i32,
        /// Epochs done and kept in the checkpoint, of `epochs`.
        epochs_done: usize,
        epochs: usize,
        checkpointed: bool,
    },
    /// A checkpoint could not be read, written or used.
    Checkpoint(String),
    /// Invalid recipe or data.
    Invalid(String),
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

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NonFiniteLoss {
                label,
                epoch,
                step,
                loss,
            } => write!(
                f,
                "{label}: the training loss became {loss} at epoch {}, step {step}; training stopped \
                 (try a lower train.lr or a grad_clip); the last checkpoint is intact",
                epoch + 1
            ),
            Self::Interrupted {
                label,
                signal,
                epochs_done,
                epochs,
                checkpointed,
            } => {
                let signal = crate::interrupt::signal_name(*signal);
                write!(
                    f,
                    "{label}: stopped by {signal} in epoch {} of {epochs}",
                    epochs_done + 1
                )?;
                match (checkpointed, epochs_done) {
                    (true, 1..) => write!(
                        f,
                        "; its checkpoint of epoch {epochs_done} is intact and a rerun resumes from it"
                    ),
                    _ => f.write_str("; no epoch was finished, so nothing of it is kept"),
                }
            }
            Self::Checkpoint(m) | Self::Invalid(m) => f.write_str(m),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TrainError {}
