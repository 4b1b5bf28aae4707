//! Reading CLIP's vocabulary: `vocab.json` (token -> id) and `merges.txt` (a `#version` line,
//! then one `left right` merge a line in rank order) as Hugging Face CLIP checkpoints hold them,
//! or the `tokenizer.json` that transformers 5's `save_pretrained` writes; and the special
//! tokens' names from `tokenizer_config.json` and `special_tokens_map.json`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{DataError, Result};

/// A merge as read, and where it was: a line of merges.txt or an index into tokenizer.json's.
pub(super) struct Merge {
    pub(super) left: String,
    pub(super) right: String,
    pub(super) at: String,
}

/// A vocabulary and its merges, with the files they came from (named by errors).
pub(super) struct Source {
    pub(super) vocab: HashMap<String, u32>,
    pub(super) vocab_path: PathBuf,
    pub(super) merges: Vec<Merge>,
    pub(super) merges_path: PathBuf,
}

/// The roles of the special tokens, with their keys in transformers' config files.
pub(super) const ROLES: [&str; 4] = ["bos_token", "eos_token", "unk_token", "pad_token"];

fn read_text(path: &Path, what: &str) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| DataError::caused(path, format!("cannot read {what}"), e))
}

fn parse_json(path: &Path, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| DataError::caused(path, "not valid JSON", e))
}

/// `vocab.json` and `merges.txt`. tokenizers' rules for merges.txt: lines starting `#version`
/// are skipped; every other line is exactly two pieces split by one space.
pub(super) fn read_vocab_merges(vocab_path: &Path, merges_path: &Path) -> Result<Source> {
    let text = read_text(vocab_path, "the vocabulary")?;
    let vocab = serde_json::from_str(&text)
        .map_err(|e| DataError::caused(vocab_path, "expected a JSON object of token -> id", e))?;
    let text = read_text(merges_path, "the merges")?;
    let mut merges = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with("#version") {
            continue;
        }
        let at = format!("line {}", index + 1);
        let merge = split_merge(line, at.clone()).ok_or_else(|| {
            let message = format!(
                "{at}: {line:?} is not a merge; expected two pieces separated by one space"
            );
            DataError::file(merges_path, message)
        })?;
        merges.push(merge);
    }
    Ok(Source {
        vocab,
        vocab_path: vocab_path.to_path_buf(),
        merges,
        merges_path: merges_path.to_path_buf(),
    })
}

/// `left right` as a merge, if it is two non-empty pieces split by one space.
fn split_merge(line: &str, at: String) -> Option<Merge> {
    let (left, right) = line.split_once(' ')?;
    let whole = |piece: &str| !piece.is_empty() && !piece.contains(' ');
    (whole(left) && whole(right)).then(|| Merge {
        left: left.to_string(),
        right: right.to_string(),
        at,
    })
}

/// The BPE model of a `tokenizer.json`: `model.vocab`, and `model.merges` as `"left right"`
/// strings (tokenizers before 0.20) or `["left", "right"]` pairs. The model must be CLIP's:
/// a BPE with the `</w>` end-of-word suffix.
pub(super) fn read_tokenizer_json(path: &Path) -> Result<Source> {
    let json = parse_json(path, &read_text(path, "the tokenizer")?)?;
    let model = &json["model"];
    let expect = |key: &str, want: &str| {
        if model[key] == want {
            return Ok(());
        }
        let message = format!(
            "model.{key} is {}; expected {want:?} (CLIP's BPE)",
            model[key]
        );
        Err(DataError::file(path, message))
    };
    expect("type", "BPE")?;
    expect("end_of_word_suffix", "</w>")?;
    let vocab = serde_json::from_value(model["vocab"].clone()).map_err(|e| {
        DataError::caused(path, "model.vocab: expected an object of token -> id", e)
    })?;
    let listed = model["merges"]
        .as_array()
        .ok_or_else(|| DataError::file(path, "model.merges: expected a list of merges"))?;
    let mut merges = Vec::with_capacity(listed.len());
    for (index, merge) in listed.iter().enumerate() {
        let at = format!("model.merges[{index}]");
        let parsed = match merge {
            Value::String(line) => split_merge(line, at.clone()),
            Value::Array(pair) => match pair.as_slice() {
                [Value::String(left), Value::String(right)] => Some(Merge {
                    left: left.clone(),
                    right: right.clone(),
                    at: at.clone(),
                }),
                _ => None,
            },
            _ => None,
        };
        merges.push(parsed.ok_or_else(|| {
            let message = format!("{at}: {merge} is not a merge; expected [\"left\", \"right\"]");
            DataError::file(path, message)
        })?);
    }
    Ok(Source {
        vocab,
        vocab_path: path.to_path_buf(),
        merges,
        merges_path: path.to_path_buf(),
    })
}

/// The special tokens that `tokenizer_config.json`, then `special_tokens_map.json` (which wins,
/// as in transformers) name in `dir`, each as (role, name, file); a file that is absent names
/// none. A name is a string or an object with a `content` string; `null` leaves the default.
pub(super) fn read_special_names(dir: &Path) -> Result<Vec<(&'static str, String, PathBuf)>> {
    let mut names = Vec::new();
    for file in ["tokenizer_config.json", "special_tokens_map.json"] {
        let path = dir.join(file);
        if !path.is_file() {
            continue;
        }
        let json = parse_json(&path, &read_text(&path, "the special tokens")?)?;
        for role in ROLES {
            let name = match &json[role] {
                Value::Null => continue,
                Value::String(name) => name,
                Value::Object(token) => match token.get("content") {
                    Some(Value::String(name)) => name,
                    _ => return Err(not_a_name(&path, role)),
                },
                _ => return Err(not_a_name(&path, role)),
            };
            names.push((role, name.clone(), path.clone()));
        }
    }
    Ok(names)
}

fn not_a_name(path: &Path, role: &str) -> DataError {
    let message = format!("{role}: expected a token (a string, or an object with \"content\")");
    DataError::file(path, message)
}
