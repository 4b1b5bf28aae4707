//! Reading Hugging Face checkpoints: a small reader of the safetensors format ([`SafeTensors`])
//! and, in [`bert`], the BERT-family import built on it. Every failure is an [`ImportError`]
//! naming the file.
//!
//! The format: an 8-byte little-endian header length N, N bytes of JSON
//! `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {..}}`, then the
//! raw little-endian tensor bytes, offsets relative to the end of the header.

mod bert;

pub use bert::load_hf_bert;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::BackboneError;

/// Why a checkpoint could not be imported.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportError {
    /// The file cannot be read or is not valid: truncated, bad header, bad config field.
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The tensors in the file do not fit the model; every offending name is listed.
    Tensors {
        /// The file.
        path: PathBuf,
        /// Names the model needs that the file lacks.
        missing: Vec<String>,
        /// Names in the file the model has no place for.
        unexpected: Vec<String>,
        /// `name: expected .., found ..` for tensors of the wrong shape or dtype.
        mismatched: Vec<String>,
    },
    /// The configuration read from the file cannot build a model.
    Config {
        /// The file.
        path: PathBuf,
        /// The rejected field.
        error: BackboneError,
    },
}

impl ImportError {
    pub(crate) fn file(path: &Path, message: impl Into<String>) -> Self {
        Self::File {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File { path, message } => write!(f, "{}: {message}", path.display()),
            Self::Tensors {
                path,
                missing,
                unexpected,
                mismatched,
            } => {
                write!(f, "{}: the tensors do not fit the model", path.display())?;
                for (label, names) in [
                    ("missing", missing),
                    ("unexpected", unexpected),
                    ("wrong shape or dtype", mismatched),
                ] {
                    if !names.is_empty() {
                        write!(f, "; {label} ({}): {}", names.len(), names.join(", "))?;
                    }
                }
                Ok(())
            }
            Self::Config { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for ImportError {}

/// The dtype and shape of one tensor in a [`SafeTensors`] file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// The safetensors dtype name (`F32`, `F16`, `BF16`, `I64`, ...).
    pub dtype: String,
    /// The shape, outermost dimension first.
    pub shape: Vec<usize>,
    /// Byte range in the file.
    bytes: Range<usize>,
}

/// A safetensors file read into memory, its header validated.
#[derive(Debug, Clone)]
pub struct SafeTensors {
    path: PathBuf,
    bytes: Vec<u8>,
    tensors: BTreeMap<String, TensorInfo>,
}

#[derive(Deserialize)]
struct HeaderEntry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// Bytes per element of every dtype the format defines.
fn dtype_size(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" => 1,
        "U16" | "I16" | "F16" | "BF16" => 2,
        "U32" | "I32" | "F32" => 4,
        "U64" | "I64" | "F64" => 8,
        _ => return None,
    })
}

impl SafeTensors {
    /// Reads and validates a file: header length, JSON header, every tensor's dtype and byte
    /// range against its shape.
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ImportError::file(path, format!("cannot read the file: {e}")))?;
        Self::parse(path, bytes)
    }

    fn parse(path: &Path, bytes: Vec<u8>) -> Result<Self, ImportError> {
        let fail = |message: String| ImportError::file(path, message);
        let Some(&len) = bytes.first_chunk::<8>() else {
            return Err(fail(format!(
                "truncated: {} bytes, expected at least the 8-byte header length",
                bytes.len()
            )));
        };
        let header_len = u64::from_le_bytes(len);
        let data_start = usize::try_from(header_len)
            .ok()
            .and_then(|n| n.checked_add(8))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                fail(format!(
                    "truncated: the header length says {header_len} bytes but only {} follow",
                    bytes.len() - 8
                ))
            })?;
        let header: BTreeMap<String, serde_json::Value> =
            serde_json::from_slice(&bytes[8..data_start])
                .map_err(|e| fail(format!("bad header: expected a JSON object: {e}")))?;
        let data_len = bytes.len() - data_start;
        let mut tensors = BTreeMap::new();
        for (name, value) in header {
            if name == "__metadata__" {
                continue;
            }
            let entry = HeaderEntry::deserialize(value).map_err(|e| {
                fail(format!(
                    "bad header entry {name:?}: {e}; expected dtype, shape, data_offsets"
                ))
            })?;
            let size = dtype_size(&entry.dtype)
                .ok_or_else(|| fail(format!("tensor {name:?}: unknown dtype {:?}", entry.dtype)))?;
            let expected = entry
                .shape
                .iter()
                .try_fold(size, |n, &d| n.checked_mul(d))
                .ok_or_else(|| {
                    fail(format!(
                        "tensor {name:?}: shape {:?} overflows",
                        entry.shape
                    ))
                })?;
            let [begin, end] = entry.data_offsets;
            if begin > end || end > data_len {
                return Err(fail(format!(
                    "tensor {name:?}: data_offsets [{begin}, {end}] outside the {data_len} data \
                     bytes (truncated file?)"
                )));
            }
            if end - begin != expected {
                return Err(fail(format!(
                    "tensor {name:?}: data_offsets span {} bytes, expected {expected} for {} {:?}",
                    end - begin,
                    entry.dtype,
                    entry.shape
                )));
            }
            let info = TensorInfo {
                dtype: entry.dtype,
                shape: entry.shape,
                bytes: data_start + begin..data_start + end,
            };
            tensors.insert(name, info);
        }
        Ok(Self {
            path: path.to_path_buf(),
            bytes,
            tensors,
        })
    }

    /// Every tensor, by name (sorted).
    pub fn tensors(&self) -> impl Iterator<Item = (&str, &TensorInfo)> {
        self.tensors
            .iter()
            .map(|(name, info)| (name.as_str(), info))
    }

    /// One tensor's dtype and shape.
    pub fn info(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.get(name)
    }

    /// A float tensor's values as f32, row-major (F32 as is; F16, BF16 and F64 converted).
    pub fn to_f32(&self, name: &str) -> Result<Vec<f32>, ImportError> {
        let info = self
            .info(name)
            .ok_or_else(|| ImportError::file(&self.path, format!("no tensor {name:?}")))?;
        let raw = &self.bytes[info.bytes.clone()];
        let values = match info.dtype.as_str() {
            "F32" => raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            "F64" => raw
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(std::array::from_fn(|i| b[i])) as f32)
                .collect(),
            "F16" => raw
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            // bf16 is the upper half of an f32.
            "BF16" => raw
                .chunks_exact(2)
                .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
                .collect(),
            other => {
                return Err(ImportError::file(
                    &self.path,
                    format!("tensor {name:?} has dtype {other}; expected F32, F16, BF16 or F64"),
                ));
            }
        };
        Ok(values)
    }
}

/// IEEE 754 half (1 sign, 5 exponent, 10 mantissa bits) to f32, exactly.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((h >> 10) & 0x1f);
    let mantissa = f32::from(h & 0x3ff);
    sign * match exponent {
        0 => mantissa * 2f32.powi(-24),
        0x1f if mantissa == 0.0 => f32::INFINITY,
        0x1f => f32::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f32.powi(e - 15),
    }
}
