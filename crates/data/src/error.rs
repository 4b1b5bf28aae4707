//! The crate's error type: every failure names the file (when there is one) and what was expected.

use std::path::{Path, PathBuf};

/// An error from reading, validating or transforming data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
pub struct DataError {
    /// The file concerned, if the error comes from a file.
    pub path: Option<PathBuf>,
    /// What went wrong and what was expected.
    pub message: String,
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, DataError>;

impl DataError {
    /// An error about the file at `path`.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: Some(path.to_path_buf()),
            message: message.into(),
        }
    }

    /// An error about an argument or in-memory value, not tied to a file.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            path: None,
            message: message.into(),
        }
    }
}
