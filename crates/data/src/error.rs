//! The crate's error type: every failure names the file (when there is one) and what was expected.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The error underneath a [`DataError`] (an I/O, image-decoding, CSV or JSON error), shared so
/// that the error stays `Clone`.
pub type Cause = Arc<dyn Error + Send + Sync + 'static>;

/// An error from reading, validating or transforming data. Its message is the whole story in
/// one line (`file: what: cause`); `source()` gives the underlying error where there is one.
#[derive(Debug, Clone)]
pub struct DataError {
    /// The file concerned, if the error comes from a file.
    pub path: Option<PathBuf>,
    /// What went wrong and what was expected.
    pub message: String,
    /// The underlying error, kept as the source.
    cause: Option<Cause>,
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, DataError>;

impl DataError {
    /// An error about the file at `path`.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: Some(path.to_path_buf()),
            message: message.into(),
            cause: None,
        }
    }

    /// An error about the file at `path` caused by `cause` (kept as the source).
    pub fn caused(
        path: &Path,
        message: impl Into<String>,
        cause: impl Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            cause: Some(Arc::new(cause)),
            ..Self::file(path, message)
        }
    }

    /// An error about an argument or in-memory value, not tied to a file.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            path: None,
            message: message.into(),
            cause: None,
        }
    }
}

/// A dataset or corruption name that its registry lacks: the whole message, which names the
/// valid ones.
impl From<registry::Unknown> for DataError {
    fn from(unknown: registry::Unknown) -> Self {
        Self::invalid(unknown.to_string())
    }
}

/// Two errors are equal when they say the same thing about the same file.
impl PartialEq for DataError {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.to_string() == other.to_string()
    }
}

impl Eq for DataError {}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        f.write_str(&self.message)?;
        match &self.cause {
            Some(cause) => write!(f, ": {cause}"),
            None => Ok(()),
        }
    }
}

/// Written out rather than derived: thiserror would give the `Arc` itself as the source, which
/// hides the underlying error's type from `downcast_ref`.
impl Error for DataError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.cause.as_deref().map(|c| c as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_the_source_and_ends_the_message() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = DataError::caused(Path::new("a/b.png"), "cannot read image", io);
        assert_eq!(err.to_string(), "a/b.png: cannot read image: no such file");
        assert_eq!(err.source().unwrap().to_string(), "no such file");
        assert!(DataError::invalid("x").source().is_none());
        assert_eq!(err.clone(), err);
        assert_ne!(
            err,
            DataError::file(Path::new("a/b.png"), "cannot read image")
        );
    }
}
