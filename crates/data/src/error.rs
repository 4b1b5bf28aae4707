//! The crate's error type: every failure names the file (when there is one) and what was expected.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An error from reading, validating or transforming data. Its message is the whole story in one
/// line (the file, then what went wrong, with the underlying error's text); `source()` gives the
/// underlying error (I/O, JSON) to programs that walk the chain.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
pub struct DataError {
    /// The file concerned, if the error comes from a file.
    pub path: Option<PathBuf>,
    /// What went wrong and what was expected.
    pub message: String,
    /// The error that caused this one, if any (shared, so that the error stays `Clone`).
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, DataError>;

/// Equal when the file and the message are: the source's text is already in the message, and
/// the source itself (an `io::Error`, say) has no equality.
impl PartialEq for DataError {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.message == other.message
    }
}

impl Eq for DataError {}

impl DataError {
    /// An error about the file at `path`.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: Some(path.to_path_buf()),
            message: message.into(),
            source: None,
        }
    }

    /// An error about an argument or in-memory value, not tied to a file.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            path: None,
            message: message.into(),
            source: None,
        }
    }

    /// The same error, keeping `source` as its cause (its text belongs in the message too).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }
}
