//! Text classification sets from a table: CSV (header row, RFC 4180 quoting, so fields may hold
//! commas, quotes and line breaks), TSV (tab-separated, no quoting, as GLUE's files are) or JSON
//! lines (one object per line). The caller names the text and label columns.
//!
//! Labels are integers (each the class index; classes `0..=max`) or names (classes the sorted
//! distinct names, the label a position). A set whose labels mix the two is refused at the
//! first label that does not fit, since either reading would silently relabel examples.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dataset::{TextDataset, WithClasses};
use crate::error::{DataError, Result};
use crate::file::read_bytes;

const BOM: &[u8] = &[0xef, 0xbb, 0xbf];

/// The columns (CSV, TSV) or fields (JSON lines) holding each example's text and label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextColumns {
    /// The column or field holding the text.
    pub text: String,
    /// The column or field holding the label (an integer or a class name).
    pub label: String,
}

/// One row's label as written, and where it was (for errors).
struct RawLabel {
    value: String,
    /// Whether it was written as a JSON number (it must then be an integer).
    number: bool,
    place: String,
}

/// Reads a text classification set from `path`: `.csv`, `.tsv`, `.jsonl` or `.ndjson`, raw or
/// gzip (a trailing `.gz` is looked through). Errors name the file, the row or line, and the
/// column or field.
pub fn load_text_table(
    path: &Path,
    columns: &TextColumns,
    name: &str,
) -> Result<WithClasses<TextDataset>> {
    let mut stem = path.to_path_buf();
    if stem
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
    {
        stem.set_extension("");
    }
    let ext = (stem.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let bytes = read_bytes(path)?;
    let body = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    let rows = match ext.as_str() {
        "csv" => read_delimited(path, body, columns, b',')?,
        "tsv" => read_delimited(path, body, columns, b'\t')?,
        "jsonl" | "ndjson" => read_json_lines(path, body, columns)?,
        _ => {
            return Err(DataError::file(
                path,
                "unknown text table format: expected a .csv, .tsv, .jsonl or .ndjson file",
            ));
        }
    };
    let (texts, raw): (Vec<String>, Vec<RawLabel>) = rows.into_iter().unzip();
    let (labels, classes) = resolve_labels(path, &columns.label, &raw)?;
    let num_classes = classes.len();
    Ok(WithClasses {
        set: TextDataset {
            name: name.to_string(),
            texts,
            labels,
            num_classes,
        },
        classes,
    })
}

fn read_delimited(
    path: &Path,
    body: &[u8],
    columns: &TextColumns,
    delimiter: u8,
) -> Result<Vec<(String, RawLabel)>> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .quoting(delimiter == b',')
        .from_reader(body);
    let header = (reader.headers())
        .map_err(|e| DataError::caused(path, "cannot read the header row", e))?
        .clone();
    let find = |column: &str| {
        header
            .iter()
            .position(|h| h.trim() == column)
            .ok_or_else(|| {
                let found: Vec<&str> = header.iter().collect();
                DataError::file(
                    path,
                    format!("no column {column:?} in the header row; its columns: {found:?}"),
                )
            })
    };
    let (text_at, label_at) = (find(&columns.text)?, find(&columns.label)?);
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let row = i + 1;
        let record = record.map_err(|e| DataError::caused(path, format!("row {row}"), e))?;
        let line = record.position().map_or(0, |p| p.line());
        let place = |column: &str| format!("row {row} (line {line}), column {column:?}");
        // The header has both columns and every record as many fields (checked by `csv`).
        let text = record.get(text_at).unwrap_or_default().to_string();
        let label = RawLabel {
            value: record.get(label_at).unwrap_or_default().trim().to_string(),
            number: false,
            place: place(&columns.label),
        };
        rows.push((text, label));
    }
    Ok(rows)
}

fn read_json_lines(
    path: &Path,
    body: &[u8],
    columns: &TextColumns,
) -> Result<Vec<(String, RawLabel)>> {
    let mut rows = Vec::new();
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let object: Value = serde_json::from_slice(raw)
            .map_err(|e| DataError::caused(path, format!("line {line}: invalid JSON"), e))?;
        let get = |field: &str| {
            object
                .get(field)
                .ok_or_else(|| DataError::file(path, format!("line {line}: no field {field:?}")))
        };
        let place = |field: &str| format!("line {line}, field {field:?}");
        let text = match get(&columns.text)? {
            Value::String(s) => s.clone(),
            other => return Err(wrong(path, &place(&columns.text), other, "a string")),
        };
        let label = match get(&columns.label)? {
            Value::String(s) => (s.trim().to_string(), false),
            Value::Number(n) => (n.to_string(), true),
            other => {
                let expected = "a non-negative integer or a class name";
                return Err(wrong(path, &place(&columns.label), other, expected));
            }
        };
        rows.push((
            text,
            RawLabel {
                value: label.0,
                number: label.1,
                place: place(&columns.label),
            },
        ));
    }
    Ok(rows)
}

fn wrong(path: &Path, place: &str, found: &Value, expected: &str) -> DataError {
    DataError::file(path, format!("{place}: expected {expected}, found {found}"))
}

/// Integer labels if any label is written as an integer, else sorted class names.
fn resolve_labels(path: &Path, column: &str, raw: &[RawLabel]) -> Result<(Vec<u32>, Vec<String>)> {
    if let Some(empty) = raw.iter().find(|l| l.value.is_empty()) {
        return Err(DataError::file(
            path,
            format!("{}: empty label", empty.place),
        ));
    }
    let integer = |l: &RawLabel| l.value.parse::<i64>().is_ok();
    let Some(first_int) = raw.iter().find(|l| integer(l) || l.number) else {
        let mut names: BTreeMap<&str, u32> = raw.iter().map(|l| (l.value.as_str(), 0)).collect();
        for (position, index) in names.values_mut().enumerate() {
            *index = position as u32;
        }
        let labels = raw.iter().map(|l| names[l.value.as_str()]).collect();
        return Ok((labels, names.keys().map(|s| s.to_string()).collect()));
    };
    let mut labels = Vec::with_capacity(raw.len());
    for label in raw {
        let index = label.value.parse::<u32>().map_err(|_| {
            DataError::file(
                path,
                format!(
                    "{}: label {:?} is not a non-negative integer, but {column:?} holds \
                     integer labels ({} is {:?})",
                    label.place, label.value, first_int.place, first_int.value
                ),
            )
        })?;
        labels.push(index);
    }
    let count = labels.iter().max().map_or(0, |&m| m as usize + 1);
    Ok((labels, (0..count).map(|i| i.to_string()).collect()))
}
