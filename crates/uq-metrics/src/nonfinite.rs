//! serde_json writes NaN and infinities as `null`; these read `null` back, so a report holding
//! "undefined" (NaN) or "full sets" (+inf) survives a JSON round trip.

use serde::{Deserialize, Deserializer};

/// A number, or `null` read as NaN (for `#[serde(deserialize_with = ...)]`).
pub fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A number, or `null` read as +inf.
pub fn inf_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}
