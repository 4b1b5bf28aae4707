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
    /// The MAP polynomial cannot be fitted to the points (`reason`: rank-deficient, too few).
    #[error(
        "hetdpt: the MAP fit of degree {degree} ({coefficients} coefficients) on {points} points \
         failed: {reason}"
    )]
    Fit {
        degree: usize,
        coefficients: usize,
        points: usize,
        reason: String,
    },
    /// A fine-tune failed (non-finite loss, bad data).
    #[error("hetdpt fine-tune")]
    Train(#[from] TrainError),
    /// A subset or batch plan of the data (`what` names which) cannot be made.
    #[error("hetdpt: {what}")]
    Data {
        what: String,
        #[source]
        source: data::DataError,
    },
    /// Hydra's head scoring or pruning, used by HetDPT+ (`what` names the step), failed.
    #[error("{what}")]
    Hydra {
        what: String,
        #[source]
        source: hydra::HydraError,
    },
    /// A criterion of the pruning seam (`what` names where it was used) failed.
    #[error("{what}")]
    Pruning {
        what: String,
        #[source]
        source: pruning::PruningError,
    },
    /// A tensor's values (`what` names it) cannot be read back to the host.
    #[error("hetdpt: reading {what}")]
    Tensor {
        what: &'static str,
        #[source]
        source: burn::tensor::DataError,
    },
}

impl HetDptError {
    pub(crate) fn data(what: impl Into<String>, source: data::DataError) -> Self {
        Self::Data {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn hydra(what: impl Into<String>, source: hydra::HydraError) -> Self {
        Self::Hydra {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn pruning(what: impl Into<String>, source: pruning::PruningError) -> Self {
        Self::Pruning {
            what: what.into(),
            source,
        }
    }

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
