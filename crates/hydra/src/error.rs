use std::fmt;

/// Why a Hydra configuration, strategy or model was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HydraError {
    /// A field or argument holds a value that cannot be used.
    #[error("{field} = {value} is invalid: expected {expected}")]
    Invalid {
        /// What was wrong, e.g. `SelectConfig.keep` or `circuit.objective`.
        field: String,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// Scoring, selecting or pruning heads failed (the seam's error, whole).
    #[error(transparent)]
    Pruning(#[from] pruning::PruningError),
    /// A member or the model it came from does not make a valid backbone (the field is named).
    #[error(transparent)]
    Backbone(#[from] backbone::BackboneError),
}

impl HydraError {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn a_backbone_error_is_passed_through_whole() {
        // Transparent: the message and the sources are the backbone error's, so walking the
        // chain prints it once.
        let inner = backbone::BackboneError::invalid("ViTConfig.n_heads", 0, "at least 1");
        let err = HydraError::from(inner.clone());
        assert_eq!(err.to_string(), inner.to_string());
        assert!(err.source().is_none());
        assert!(matches!(&err, HydraError::Backbone(b) if *b == inner));
        assert!(HydraError::invalid("k", 1, "2").source().is_none());
    }
}
