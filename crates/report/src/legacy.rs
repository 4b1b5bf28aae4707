//! Reading summaries written by older builds: entries from before `method` and `variant`
//! existed say which variant they are by `calibration` (`"temperature"`: `+ts`) or `precision`
//! (`"bf16"`: `+bf16`), two strings that newer entries no longer write.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// `methods` of a summary (`T`: a method entry): each entry read as written, older ones given
/// their method and variant (errors name the entry).
pub(crate) fn methods<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let entries = Vec::<Value>::deserialize(d)?;
    (entries.into_iter().enumerate())
        .map(|(i, mut entry)| {
            upgrade(&mut entry);
            serde_json::from_value(entry)
                .map_err(|e| D::Error::custom(format!("methods[{i}]: {e}")))
        })
        .collect()
}

/// Drops `calibration` and `precision`; where the entry has no `method`, sets it and
/// `variant` from them (a `+` in a method's own name is not a variant: only what the entry
/// records is).
fn upgrade(entry: &mut Value) {
    let Some(fields) = entry.as_object_mut() else {
        return;
    };
    let calibration = fields.remove("calibration").filter(|v| !v.is_null());
    let precision = fields.remove("precision");
    let method = fields.get("method").and_then(Value::as_str);
    if method.is_some_and(|m| !m.is_empty()) {
        return;
    }
    // The stored names of `Variant::Ts` and `Variant::Bf16`, also the display names' suffixes.
    let variant = match (calibration, precision.as_ref().and_then(Value::as_str)) {
        (Some(_), _) => Some("ts"),
        (None, Some("bf16")) => Some("bf16"),
        _ => None,
    };
    let name = fields.get("name").and_then(Value::as_str).unwrap_or("");
    let method = (variant.map(|v| format!("+{v}")))
        .and_then(|suffix| name.strip_suffix(&suffix).map(str::to_string))
        .unwrap_or_else(|| name.to_string());
    fields.insert("method".into(), method.into());
    if let Some(v) = variant {
        fields.insert("variant".into(), v.into());
    }
}

/// An entry as a summary written before `method` and `variant` existed holds it.
#[cfg(test)]
pub(crate) fn old_entry(name: &str, calibration: Option<&str>, precision: Option<&str>) -> Value {
    serde_json::json!({
        "name": name, "kind": "single", "members": 1, "seed": 0,
        "id": {"accuracy": 0.8, "nll": 0.5, "brier": 0.3, "ece": 0.05, "aece": 0.06,
               "aurc": 0.1},
        "ood": {}, "shift": {},
        "cost": {"params": 10, "flops": 100, "latency_ms_b1": 1.0, "latency_ms": 2.0,
                 "peak_mem_bytes": null},
        "calibration": calibration, "precision": precision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{Summary, Variant};

    #[test]
    fn an_old_entry_gets_its_method_and_variant_from_what_it_records() {
        let cases = [
            (
                old_entry("hydra+ts", Some("temperature"), None),
                "hydra",
                Some(Variant::Ts),
            ),
            (
                old_entry("hydra+bf16", None, Some("bf16")),
                "hydra",
                Some(Variant::Bf16),
            ),
            (old_entry("a+b", None, None), "a+b", None),
        ];
        let summary: Summary = serde_json::from_value(serde_json::json!({
            "experiment": "x", "seeds": [0],
            "methods": cases.iter().map(|c| c.0.clone()).collect::<Vec<_>>(),
        }))
        .unwrap();
        for (entry, (_, method, variant)) in summary.methods.iter().zip(&cases) {
            assert_eq!((entry.method.as_str(), entry.variant), (*method, *variant));
            // The display name derived from them is the one stored.
            assert_eq!(Variant::name(entry.variant, &entry.method), entry.name);
        }
        // Written again, the old strings are gone: `variant` alone says it.
        let json = serde_json::to_value(&summary).unwrap();
        let first = &json["methods"][0];
        assert!(first.get("calibration").is_none() && first.get("precision").is_none());
        assert_eq!(first["variant"], "ts");
    }

    #[test]
    fn an_entry_with_method_and_the_old_strings_keeps_its_variant() {
        // Runs written between `variant` and now hold both.
        let mut entry = old_entry("m+ts", Some("temperature"), None);
        entry["method"] = "m".into();
        entry["variant"] = "ts".into();
        upgrade(&mut entry);
        assert_eq!(
            (entry["method"].as_str(), entry["variant"].as_str()),
            (Some("m"), Some("ts"))
        );
        assert!(entry.get("calibration").is_none());
    }

    #[test]
    fn a_bad_entry_is_named_by_its_place() {
        let err = serde_json::from_value::<Summary>(serde_json::json!({
            "experiment": "x", "seeds": [0], "methods": [old_entry("a", None, None), {"name": "b"}],
        }))
        .unwrap_err();
        assert!(
            err.to_string().starts_with("methods[1]: missing field"),
            "{err}"
        );
    }
}
