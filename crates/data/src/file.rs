//! Whole-file reading and writing with transparent gzip, detected by content rather than name.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use crate::error::{DataError, Result};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a file, gunzipping it when it starts with the gzip magic bytes.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let raw = fs::read(path).map_err(|e| DataError::caused(path, "cannot read", e))?;
    if !raw.starts_with(&GZIP_MAGIC) {
        return Ok(raw);
    }
    let mut out = Vec::new();
    MultiGzDecoder::new(raw.as_slice())
        .read_to_end(&mut out)
        .map_err(|e| DataError::caused(path, "invalid gzip data", e))?;
    Ok(out)
}

/// Writes `bytes` to `path`, gzip-compressed if `gzip` (the gzip header carries mtime 0, so the
/// output is byte-reproducible).
pub(crate) fn write_bytes(path: &Path, bytes: &[u8], gzip: bool) -> Result<()> {
    let io_err = |e: std::io::Error| DataError::caused(path, "cannot write", e);
    if !gzip {
        return fs::write(path, bytes).map_err(io_err);
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).map_err(io_err)?;
    let compressed = encoder.finish().map_err(io_err)?;
    fs::write(path, compressed).map_err(io_err)
}
