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
            Self::Checkpoint(m) | Self::Invalid(m) => f.write_str(m),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TrainError {}
