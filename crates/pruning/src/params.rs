//! A criterion's parameters, read from its TOML table by serde.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::PruningError;

/// A criterion's parameters read from its table by serde; the parameter struct refuses keys it
/// does not know (`#[serde(deny_unknown_fields)]`), and the error names the criterion.
pub(crate) fn read_params<T: DeserializeOwned>(
    criterion: &'static str,
    table: &toml::Table,
) -> Result<T, PruningError> {
    T::deserialize(toml::Value::Table(table.clone())).map_err(|e| PruningError::Params {
        criterion,
        source: Box::new(e),
    })
}

/// The parameters of a criterion that takes none: any key is refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}
