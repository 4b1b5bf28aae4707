//! IDX files (the MNIST family format): unsigned-byte images `[N, H, W]` and labels `[N]`,
//! raw or gzip-compressed (detected by content).
//!
//! Header: two zero bytes, a type byte (0x08 = unsigned byte), a rank byte, then one big-endian
//! u32 per dimension; the data follows, and must fill the file exactly.

use std::path::Path;

use crate::dataset::{ImageDataset, Pixels};
use crate::error::{DataError, Result};
use crate::file::{read_bytes, write_bytes};

const IMAGES_MAGIC: u32 = 0x0000_0803;
const LABELS_MAGIC: u32 = 0x0000_0801;

/// Reads an IDX image file; returns the bytes and the shape `[N, H, W]`.
pub fn read_idx_images(path: &Path) -> Result<(Vec<u8>, [usize; 3])> {
    let bytes = read_bytes(path)?;
    let (dims, data) = parse(path, &bytes, IMAGES_MAGIC, "images")?;
    Ok((data.to_vec(), [dims[0], dims[1], dims[2]]))
}

/// Reads an IDX label file.
pub fn read_idx_labels(path: &Path) -> Result<Vec<u8>> {
    let bytes = read_bytes(path)?;
    let (_, data) = parse(path, &bytes, LABELS_MAGIC, "labels")?;
    Ok(data.to_vec())
}

/// Writes images `[N, H, W]` as an IDX file, gzip-compressed if `gzip`.
pub fn write_idx_images(path: &Path, pixels: &[u8], dims: [usize; 3], gzip: bool) -> Result<()> {
    write(path, IMAGES_MAGIC, &dims, pixels, gzip)
}

/// Writes labels as an IDX file, gzip-compressed if `gzip`.
pub fn write_idx_labels(path: &Path, labels: &[u8], gzip: bool) -> Result<()> {
    write(path, LABELS_MAGIC, &[labels.len()], labels, gzip)
}

/// Loads an image file and its label file as a one-channel dataset, checking that the counts
/// agree and every label is below `num_classes`.
pub fn load_idx_pair(
    images: &Path,
    labels: &Path,
    name: &str,
    num_classes: usize,
) -> Result<ImageDataset> {
    let (pixels, [n, h, w]) = read_idx_images(images)?;
    let raw_labels = read_idx_labels(labels)?;
    if raw_labels.len() != n {
        return Err(DataError::file(
            labels,
            format!(
                "has {} labels but {} has {n} images",
                raw_labels.len(),
                images.display()
            ),
        ));
    }
    if let Some((i, &label)) = raw_labels
        .iter()
        .enumerate()
        .find(|&(_, &l)| usize::from(l) >= num_classes)
    {
        return Err(DataError::file(
            labels,
            format!("label {label} at index {i} is not below the {num_classes} classes"),
        ));
    }
    Ok(ImageDataset {
        name: name.to_string(),
        pixels: Pixels::U8(pixels),
        labels: raw_labels.into_iter().map(u32::from).collect(),
        dims: [1, h, w],
        num_classes,
    })
}

/// Validates the header against `magic` and returns the dimensions and the data bytes.
fn parse<'a>(
    path: &Path,
    bytes: &'a [u8],
    magic: u32,
    what: &str,
) -> Result<(Vec<usize>, &'a [u8])> {
    let rank = (magic & 0xff) as usize;
    let header_len = 4 + 4 * rank;
    let found = bytes
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if found != Some(magic) {
        let found = found.map_or("a file shorter than 4 bytes".to_string(), |m| {
            format!("0x{m:08x}")
        });
        return Err(DataError::file(
            path,
            format!("bad magic: expected IDX {what} magic 0x{magic:08x}, found {found}"),
        ));
    }
    if bytes.len() < header_len {
        return Err(DataError::file(
            path,
            format!(
                "truncated header: {} bytes, the {rank}-d header needs {header_len}",
                bytes.len()
            ),
        ));
    }
    let dims: Vec<usize> = bytes[4..header_len]
        .chunks_exact(4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let expected = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            DataError::file(
                path,
                format!("wrong dims {dims:?}: their product overflows"),
            )
        })?;
    if dims.iter().skip(1).any(|&d| d == 0) {
        return Err(DataError::file(
            path,
            format!("wrong dims {dims:?}: every dimension after the count must be positive"),
        ));
    }
    let data = &bytes[header_len..];
    if data.len() < expected {
        return Err(DataError::file(
            path,
            format!(
                "truncated data: dims {dims:?} need {expected} bytes after the header, found {}",
                data.len()
            ),
        ));
    }
    if data.len() > expected {
        return Err(DataError::file(
            path,
            format!(
                "wrong dims {dims:?}: they account for {expected} data bytes but the file has {}",
                data.len()
            ),
        ));
    }
    Ok((dims, data))
}

fn write(path: &Path, magic: u32, dims: &[usize], data: &[u8], gzip: bool) -> Result<()> {
    let expected: usize = dims.iter().product();
    if data.len() != expected {
        return Err(DataError::file(
            path,
            format!(
                "cannot write {} bytes with dims {dims:?} ({expected} bytes)",
                data.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(4 + 4 * dims.len() + data.len());
    bytes.extend_from_slice(&magic.to_be_bytes());
    for &d in dims {
        let d = u32::try_from(d)
            .map_err(|_| DataError::file(path, format!("dimension {d} does not fit IDX's u32")))?;
        bytes.extend_from_slice(&d.to_be_bytes());
    }
    bytes.extend_from_slice(data);
    write_bytes(path, &bytes, gzip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout_matches_the_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.idx");
        write_idx_labels(&path, &[7, 3], false).unwrap();
        // Magic 0x00000801, count 2 big-endian, then the labels.
        assert_eq!(
            std::fs::read(&path).unwrap(),
            vec![0, 0, 8, 1, 0, 0, 0, 2, 7, 3]
        );
    }

    #[test]
    fn images_parse_from_hand_written_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.idx");
        let mut bytes = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3];
        bytes.extend([1, 2, 3, 4, 5, 6]);
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(
            read_idx_images(&path).unwrap(),
            (vec![1, 2, 3, 4, 5, 6], [2, 1, 3])
        );
    }

    #[test]
    fn zero_image_dims_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.idx");
        std::fs::write(&path, [0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3]).unwrap();
        let err = read_idx_images(&path).unwrap_err();
        assert!(err.message.contains("wrong dims"), "{err}");
    }
}
