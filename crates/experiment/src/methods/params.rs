//! Method parameters read straight into a library's Burn config, so that every default lives
//! once, in the library: the table's keys go over the config's defaults.
//!
//! Burn's `Config` derive deserialises only complete configs and ignores unknown keys, so the
//! defaults come from a default instance and the valid keys from the config's own field list.

use std::sync::Arc;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use super::method::Method;
use crate::error::ConfigError;

/// A method kind whose parameters are one library config.
pub(super) trait LibraryParams: Method + Sized + 'static {
    type Config: Serialize + DeserializeOwned;
    /// The library's defaults (with placeholders for the [`Self::REQUIRED`] keys).
    fn defaults() -> Self::Config;
    fn new(config: Self::Config) -> Self;
    /// Keys of the method's own beside the config's fields, handed to [`Self::with_own`].
    const OWN: &'static [&'static str] = &[];
    /// The method from its config and the [`Self::OWN`] keys the table gave.
    fn with_own(config: Self::Config, own: toml::Table) -> Result<Self, ConfigError> {
        debug_assert!(own.is_empty(), "a kind without own keys got {own:?}");
        Ok(Self::new(config))
    }
    /// Keys the method table must give.
    const REQUIRED: &'static [&'static str] = &["members"];
    /// Fields the runner sets from the experiment, not from the method table.
    const INTERNAL: &'static [&'static str] = &[];
}

/// Parses a kind's table into its library config and returns the resolved parameters
/// (defaults filled in, runner-set fields left out).
pub(super) fn parse<T: LibraryParams>(
    mut table: toml::Table,
) -> Result<(Arc<dyn Method>, toml::Table), ConfigError> {
    let fields = field_names::<T::Config>();
    let valid: Vec<&str> = (fields.iter().copied())
        .filter(|f| !T::INTERNAL.contains(f))
        .chain(T::OWN.iter().copied())
        .collect();
    if let Some(key) = table.keys().find(|k| !valid.contains(&k.as_str())) {
        let valid = valid.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>();
        return Err(ConfigError::msg(format!(
            "unknown field `{key}`, expected one of {}",
            valid.join(", ")
        )));
    }
    if let Some(key) = T::REQUIRED.iter().find(|k| !table.contains_key(**k)) {
        return Err(ConfigError::msg(format!("missing field `{key}`")));
    }
    let own: toml::Table = T::OWN
        .iter()
        .filter_map(|k| table.remove_entry(*k))
        .collect();
    let mut merged =
        toml::Table::try_from(T::defaults()).map_err(|e| ConfigError::caused("defaults", e))?;
    merged.extend(table);
    let config = T::Config::deserialize(toml::Value::Table(merged))
        .map_err(|e| ConfigError::caused("parameters", e))?;
    let mut resolved =
        toml::Table::try_from(&config).map_err(|e| ConfigError::caused("parameters", e))?;
    resolved.retain(|k, _| !T::INTERNAL.contains(&k));
    // What the table gave of the method's own keys stays as given (an absent one keeps its
    // default, which may depend on the experiment).
    resolved.extend(own.clone());
    Ok((Arc::new(T::with_own(config, own)?), resolved))
}

/// The field names a struct's `Deserialize` asks for (optional ones included, which a
/// serialised default instance would leave out).
fn field_names<C: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields = None;
    let _ = C::deserialize(FieldNames(&mut fields));
    fields.unwrap_or(&[])
}

/// A deserializer that records the fields of the struct asked for, and fails.
struct FieldNames<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ensembles::PackedConfig;
    use lora_ensemble::LoraConfig;

    #[test]
    fn field_names_come_from_the_configs_deserialize() {
        assert_eq!(field_names::<PackedConfig>(), ["members", "alpha", "gamma"]);
        let lora = field_names::<LoraConfig>();
        assert!(
            lora.contains(&"rank") && lora.contains(&"text_tokens"),
            "{lora:?}"
        );
    }
}
