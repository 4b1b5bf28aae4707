use std::fmt;

/// Why a configuration or preset name was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackboneError {
    /// A name its registry lacks (a preset's).
    #[error(transparent)]
    Unknown(#[from] registry::Unknown),
    /// A configuration field holds a value the model cannot be built with.
    #[error("{field} = {value} is invalid: expected {expected}")]
    InvalidConfig {
        /// The config type and field, e.g. `ViTConfig.patch_size`.
        field: String,
        /// The offending value, formatted.
        value: String,
        /// What was expected instead.
        expected: String,
    },
}

impl BackboneError {
    /// An invalid field: `field = value is invalid: expected <expected>`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Self::InvalidConfig {
            field: field.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

impl BackboneError {
    /// The same error with its field placed in `scope` (`member 2 ` + `norm`).
    pub fn within(self, scope: &str) -> Self {
        match self {
            Self::InvalidConfig {
                field,
                value,
                expected,
            } => Self::InvalidConfig {
                field: format!("{scope}{field}"),
                value,
                expected,
            },
            other => other,
        }
    }
}

/// Checks that a count is at least 1, naming `field` otherwise.
pub fn positive(field: impl Into<String>, value: usize) -> Result<(), BackboneError> {
    if value == 0 {
        return Err(BackboneError::invalid(field, value, "a positive integer"));
    }
    Ok(())
}

/// Checks a head count: at least 1 and a divisor of the width `d_model`.
pub(crate) fn heads_divide(
    field: impl Into<String>,
    n_heads: usize,
    d_model: usize,
) -> Result<(), BackboneError> {
    if n_heads == 0 || !d_model.is_multiple_of(n_heads) {
        return Err(BackboneError::invalid(
            field,
            n_heads,
            format!("a positive divisor of d_model = {d_model}"),
        ));
    }
    Ok(())
}

/// Checks a dropout probability: finite and in [0, 1).
pub(crate) fn probability(field: impl Into<String>, value: f64) -> Result<(), BackboneError> {
    if !value.is_finite() || !(0.0..1.0).contains(&value) {
        return Err(BackboneError::invalid(
            field,
            value,
            "a probability in [0, 1)",
        ));
    }
    Ok(())
}

/// Checks a layer-norm epsilon: finite and > 0.
pub(crate) fn epsilon(field: impl Into<String>, value: f64) -> Result<(), BackboneError> {
    if !value.is_finite() || value <= 0.0 {
        return Err(BackboneError::invalid(field, value, "a finite number > 0"));
    }
    Ok(())
}
