use std::fmt;

/// Why a Hydra configuration, strategy or model was rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum HydraError {
    /// A field or argument holds a value that cannot be used.
    Invalid {
        /// What was wrong, e.g. `SelectConfig.keep` or `circuit.objective`.
        field: String,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// No head-importance strategy has this name.
    UnknownStrategy {
        name: String,
        /// The registered names.
        valid: Vec<&'static str>,
    },
    /// A strategy's parameter table holds a key the strategy does not read.
    UnknownParam {
        strategy: &'static str,
        param: String,
        /// The keys the strategy accepts.
        valid: &'static [&'static str],
    },
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

/// A backbone's invalid field keeps its field, value and expectation; anything else its text.
impl From<backbone::BackboneError> for HydraError {
    fn from(e: backbone::BackboneError) -> Self {
        match e {
            backbone::BackboneError::InvalidConfig {
                field,
                value,
                expected,
            } => Self::Invalid {
                field,
                value,
                expected,
            },
            other => Self::invalid("backbone", other, "a valid backbone"),
        }
    }
}

impl fmt::Display for HydraError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid {
                field,
                value,
                expected,
            } => write!(f, "{field} = {value} is invalid: expected {expected}"),
            Self::UnknownStrategy { name, valid } => write!(
                f,
                "unknown head-importance strategy {name:?}; valid strategies: {}",
                valid.join(", ")
            ),
            Self::UnknownParam {
                strategy,
                param,
                valid,
            } => {
                let valid = if valid.is_empty() {
                    "none (it takes no parameters)".to_string()
                } else {
                    valid.join(", ")
                };
                write!(
                    f,
                    "strategy {strategy:?} has no parameter {param:?}; valid parameters: {valid}"
                )
            }
        }
    }
}

impl std::error::Error for HydraError {}
