//! Why HetDPT stopped.

use std::fmt;

use train::TrainError;

/// An error from configuring or running HetDPT.
#[derive(Debug, thiserror::Error)]
pub enum HetDptError {
    /// A configuration field holds a value the pipeline cannot run with.
    #[error("{field} = {value} is invalid: expected {expected}")]
    Config {
        /// The field, e.g. `hetdpt.degree`.
        field: String,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// The inputs do not fit together (model, data, grid), or the MAP fit is degenerate.
    #[error("hetdpt: {0}")]
    Invalid(String),
    /// A fine-tune failed (non-finite loss, bad data).
    #[error("hetdpt fine-tune: {0}")]
    Train(#[from] TrainError),
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
