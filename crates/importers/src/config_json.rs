//! A checkpoint's `config.json` read into a typed struct (the BERT and ViT-family imports), an
//! error naming the file and the field; where a checkpoint's files are ([`locate`]) and its
//! `model_type` ([`model_type`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::ImportError;

/// Reads and deserialises `path`; an error names the file and the field (a missing or mistyped
/// value).
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ImportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ImportError::caused(path, "cannot read the file", e))?;
    let json = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(json).map_err(|e| {
        let message = match e.path().to_string() {
            // The whole file: not an object, or a required field missing (named by serde).
            root if root == "." => "not the expected configuration".to_string(),
            field => field,
        };
        ImportError::caused(path, message, e.into_inner())
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

/// `(config.json, weights)` of a checkpoint folder or of a `.safetensors` file.
pub(crate) fn locate(path: &Path) -> Result<(PathBuf, PathBuf), ImportError> {
    let (dir, weights) = if path.is_dir() {
        (path.to_path_buf(), path.join("model.safetensors"))
    } else {
        let dir = path.parent().unwrap_or(Path::new("."));
        (dir.to_path_buf(), path.to_path_buf())
    };
    let config = dir.join("config.json");
    for (file, what) in [(&weights, "the weights"), (&config, "the configuration")] {
        if !file.is_file() {
            return Err(ImportError::file(
                file,
                format!(
                    "no such file ({what}); expected a folder with config.json and \
                     model.safetensors, or a .safetensors file with config.json beside it"
                ),
            ));
        }
    }
    Ok((config, weights))
}

/// The `model_type` of a checkpoint's `config.json` (a folder with `config.json` and
/// `model.safetensors`, or a `.safetensors` file with `config.json` beside it): `transformers`
/// writes it ("vit", "deit", "bert", "roberta", ...), timm does not. What tells a checkpoint's
/// family before it is imported (`uqformer predict`).
pub fn model_type(checkpoint: &Path) -> Result<Option<String>, ImportError> {
    #[derive(Deserialize)]
    struct ModelType {
        model_type: Option<String>,
    }
    let (config, _) = locate(checkpoint)?;
    Ok(read_json::<ModelType>(&config)?.model_type)
}
