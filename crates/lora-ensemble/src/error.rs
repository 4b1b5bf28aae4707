use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why an ensemble could not be built, or its adapters not saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoraError {
    /// A [`LoraConfig`](crate::LoraConfig) field holds a value the ensemble cannot be built with.
    #[error("{field} = {value} is invalid: expected {expected}")]
    InvalidConfig {
        /// The field, e.g. `LoraConfig.rank`.
        field: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// An adapter file could not be encoded, read, or does not fit this ensemble.
    #[error("adapter file {}: {reason}", path.display())]
    AdapterFile {
        /// The file concerned.
        path: PathBuf,
        /// What went wrong.
        reason: &'static str,
        /// The error underneath (Burn's record error).
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// The adapter file could not be written (the I/O error names it).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl LoraError {
    pub(crate) fn invalid(
        field: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Self::InvalidConfig {
            field,
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    pub(crate) fn file(
        path: &Path,
        reason: &'static str,
        source: impl Error + Send + Sync + 'static,
    ) -> Self {
        Self::AdapterFile {
            path: path.to_path_buf(),
            reason,
            source: Box::new(source),
        }
    }
}
