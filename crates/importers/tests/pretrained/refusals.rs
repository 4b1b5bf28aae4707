//! What the family tests share to check refusals: a fixture copied and edited (its tensors, its
//! config.json), and tables of config edits each refused naming config.json.

use std::path::{Path, PathBuf};

use importers::SafeTensors;
use serde_json::Value;

use crate::format::{Stored, encode, f32_tensor};
use crate::json;

/// A copy of the checkpoint folder `source` in the scratch folder `group/case`, its tensors
/// (as f32) passed through `edit` and its config.json through `config`.
pub fn edited_copy(
    source: &Path,
    group: &str,
    case: &str,
    edit: impl FnOnce(&mut Vec<Stored>),
    config: impl FnOnce(&mut Value),
) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(case);
    std::fs::create_dir_all(&dir).unwrap();
    let file = SafeTensors::read(&source.join("model.safetensors")).unwrap();
    let mut tensors: Vec<Stored> = (file.tensors())
        .map(|(key, info)| f32_tensor(key, &info.shape, &file.to_f32(key).unwrap()))
        .collect();
    edit(&mut tensors);
    std::fs::write(dir.join("model.safetensors"), encode(&tensors)).unwrap();
    let mut json = json(&source.join("config.json"));
    config(&mut json);
    std::fs::write(dir.join("config.json"), json.to_string()).unwrap();
    dir
}

/// The tensors without `key`.
pub fn remove(key: &str) -> impl FnOnce(&mut Vec<Stored>) + '_ {
    move |tensors| tensors.retain(|t| t.name != key)
}

/// No edit of config.json.
pub fn keep(_: &mut Value) {}

/// No edit of the tensors.
pub fn unchanged(_: &mut Vec<Stored>) {}

/// An edit of a config.json.
pub type Edit = fn(&mut Value);

/// Each case's fixture, its config.json passed through the edit, is refused with a message
/// naming config.json and holding the case's text; `refused(name, case, edit)` imports it.
pub fn assert_settings_refused(
    cases: &[(&str, Edit, &str)],
    refused: impl Fn(&str, &str, Edit) -> String,
) {
    for (i, &(name, edit, expected)) in cases.iter().enumerate() {
        let message = refused(name, &format!("setting{i}"), edit);
        assert!(message.contains(expected), "{message}");
        assert!(message.contains("config.json"), "{message}");
    }
}
