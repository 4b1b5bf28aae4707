//! A checkpoint's `config.json` read into a typed struct (the BERT and ViT-family imports), an
//! error naming the file and the field.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::ImportError;

/// Reads and deserialises `path`; an error names the file and the field (a missing or mistyped
/// value).
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ImportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ImportError::file(path, format!("cannot read the file: {e}")))?;
    let json = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(json).map_err(|e| {
        let message = match e.path().to_string() {
            // The whole file: not an object, or a required field missing (named by serde).
            root if root == "." => e.inner().to_string(),
            field => format!("{field}: {}", e.inner()),
        };
        ImportError::file(path, message)
    })
}

/// Refuses a string field of `path` whose value (when given) is not one of `supported`.
pub(crate) fn check_supported(
    path: &Path,
    field: &str,
    value: Option<&str>,
    supported: &[&str],
) -> Result<(), ImportError> {
    let Some(value) = value.filter(|v| !supported.contains(v)) else {
        return Ok(());
    };
    let quoted: Vec<String> = supported.iter().map(|v| format!("{v:?}")).collect();
    Err(ImportError::file(
        path,
        format!(
            "{field}: = {value:?}: only {} is supported",
            quoted.join(" or ")
        ),
    ))
}
