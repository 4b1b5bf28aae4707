//! Reading a safetensors file with the `safetensors` crate ([`SafeTensors`]: the tensors by
//! name, as f32), what the BERT import reads. Every failure is an [`ImportError`] naming the file.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::ImportError;

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

impl SafeTensors {
    /// Reads and validates a file (header length, JSON header, every tensor's dtype, shape and
    /// byte range) with the `safetensors` crate.
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ImportError::caused(path, "cannot read the file", e))?;
        let (header_len, metadata) = ::safetensors::SafeTensors::read_metadata(&bytes)
            .map_err(|e| ImportError::caused(path, "not a valid safetensors file", e))?;
        // Offsets count from the end of the header, after its 8-byte length.
        let data_start = 8 + header_len;
        let tensors = (metadata.tensors().into_iter())
            .map(|(name, info)| {
                let (begin, end) = info.data_offsets;
                let info = TensorInfo {
                    dtype: info.dtype.to_string(),
                    shape: info.shape.clone(),
                    bytes: data_start + begin..data_start + end,
                };
                (name, info)
            })
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            bytes,
            tensors,
        })
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
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
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            "BF16" => raw
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
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
