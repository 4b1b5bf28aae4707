//! Why HetDPT stopped.

use std::fmt;

use train::TrainError;

/// An error from configuring or running HetDPT.
#[derive(Debug)]
pub enum HetDptError {
    /// A configuration field holds a value the pipeline cannot run with.
    Config {
        /// The field, e.g. `hetdpt.degree`.
        field: String,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// The inputs do not fit together (model, data, grid), or the MAP fit is degenerate.
    Invalid(String),
    /// A fine-tune failed (non-finite loss, bad data).
    Train(TrainError),
}

impl HetDptError {
    pub(crate) fn config(
        field: &str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Self::Config {
            field: format!("hetdpt.{field}"),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

impl fmt::Display for HetDptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config {
                field,
                value,
                expected,
            } => write!(f, "{field} = {value} is invalid: expected {expected}"),
            Self::Invalid(m) => write!(f, "hetdpt: {m}"),
            Self::Train(e) => write!(f, "hetdpt fine-tune: {e}"),
        }
    }
}

impl std::error::Error for HetDptError {}

impl From<TrainError> for HetDptError {
    fn from(e: TrainError) -> Self {
        Self::Train(e)
    }
}
