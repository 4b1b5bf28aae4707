//! Configuration checks shared by the efficient ensembles; errors name the field.

use backbone::BackboneError;

pub(crate) fn invalid(
    field: &str,
    value: impl std::fmt::Display,
    expected: impl Into<String>,
) -> BackboneError {
    BackboneError::InvalidConfig {
        field: field.to_string(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

pub(crate) fn positive(field: &str, value: usize) -> Result<(), BackboneError> {
    if value == 0 {
        return Err(invalid(field, value, "a positive integer"));
    }
    Ok(())
}
