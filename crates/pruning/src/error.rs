use std::fmt;

use crate::units::UnitKind;

/// Why a criterion, a selection, a plan or the data they read was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PruningError {
    /// A field or argument holds a value that cannot be used.
    #[error("{field} = {value} is invalid: expected {expected}")]
    Invalid {
        /// What was wrong, e.g. `keep` or `circuit.objective`.
        field: String,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// No criterion or unit kind has this name.
    #[error(transparent)]
    Unknown(#[from] registry::Unknown),
    /// A criterion cannot score this kind of unit.
    #[error("criterion {criterion:?} does not score {kind} units: it scores {supported}")]
    Unsupported {
        criterion: &'static str,
        kind: UnitKind,
        /// The kinds it does score, listed.
        supported: String,
    },
    /// A criterion's parameter table does not parse: a key it does not read, or a value of
    /// the wrong kind (the source, serde's error, names the key and what was expected).
    #[error("criterion {criterion:?}, its parameters")]
    Params {
        criterion: &'static str,
        // Boxed: toml's error is large, and every result of the crate carries this type.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A metric a criterion scores by cannot be computed (`what` names it).
    #[error("{what}")]
    Metric {
        what: &'static str,
        #[source]
        source: uq_metrics::MetricsError,
    },
    /// The model, or a model a plan makes, is not a valid backbone (the field is named).
    #[error(transparent)]
    Backbone(#[from] backbone::BackboneError),
}

impl PruningError {
    pub(crate) fn invalid(
        field: impl Into<String>,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            field: field.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}
