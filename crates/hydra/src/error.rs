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
    /// No head-importance strategy has this name.
    #[error(transparent)]
    Unknown(#[from] registry::Unknown),
    /// A strategy's parameter table does not parse: a key it does not read, or a value of
    /// the wrong kind (serde's message names the key and what was expected).
    #[error("strategy {strategy:?}, importance_params: {reason}")]
    Params {
        strategy: &'static str,
        reason: String,
    },
    /// A member or the model it came from does not make a valid backbone (the field is named).
    #[error("{0}")]
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
    fn a_backbone_error_stays_the_source_and_the_message() {
        let inner = backbone::BackboneError::invalid("ViTConfig.n_heads", 0, "at least 1");
        let err = HydraError::from(inner.clone());
        assert_eq!(err.to_string(), inner.to_string());
        let source = err.source().expect("the backbone error is the source");
        assert_eq!(
            source.downcast_ref::<backbone::BackboneError>(),
            Some(&inner)
        );
        assert!(HydraError::invalid("k", 1, "2").source().is_none());
    }
}
