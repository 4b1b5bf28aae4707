//! Decoding a PNG or JPEG file into 8-bit RGB, as Pillow's `convert("RGB")` gives it: grey is
//! replicated, alpha dropped, palettes expanded, 16-bit samples cut to their high byte.
//!
//! The format is told from the file's first bytes, not its name. The decoders are `png` and
//! `zune-jpeg` directly rather than through the `image` crate, whose colour-management
//! dependencies (`moxcms`, `pxfm`) tripled the data crate's clean build for nothing used here.

use std::io::Cursor;
use std::path::Path;

use png::{ColorType, Transformations};
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

use crate::error::{DataError, Result};
use crate::resample::Bytes;

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
const JPEG_MAGIC: &[u8] = &[0xff, 0xd8, 0xff];

/// Reads and decodes the image at `path` into interleaved RGB bytes `[H, W, 3]`.
pub(crate) fn read_rgb(path: &Path) -> Result<Bytes> {
    let bytes = std::fs::read(path).map_err(|e| DataError::caused(path, "cannot read", e))?;
    if bytes.starts_with(PNG_MAGIC) {
        decode_png(path, bytes)
    } else if bytes.starts_with(JPEG_MAGIC) {
        decode_jpeg(path, bytes)
    } else {
        Err(DataError::file(
            path,
            "not a PNG or JPEG image (its first bytes are neither signature)",
        ))
    }
}

fn decode_png(path: &Path, bytes: Vec<u8>) -> Result<Bytes> {
    let fail = |e: png::DecodingError| DataError::caused(path, "cannot decode the PNG image", e);
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(fail)?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| DataError::file(path, "PNG image too large to decode in memory"))?;
    let mut buffer = vec![0; size];
    let info = reader.next_frame(&mut buffer).map_err(fail)?;
    buffer.truncate(info.buffer_size());
    let (width, height) = (info.width as usize, info.height as usize);
    // After the transformations every sample is one byte; keep the colour, drop alpha.
    let (channels, colour) = match info.color_type {
        ColorType::Grayscale => (1, 1),
        ColorType::GrayscaleAlpha => (2, 1),
        ColorType::Rgb => (3, 3),
        ColorType::Rgba => (4, 3),
        ColorType::Indexed => {
            return Err(DataError::file(path, "PNG palette was not expanded"));
        }
    };
    let mut data = Vec::with_capacity(width * height * 3);
    for pixel in buffer.chunks_exact(channels) {
        if colour == 1 {
            data.extend_from_slice(&[pixel[0]; 3]);
        } else {
            data.extend_from_slice(&pixel[..3]);
        }
    }
    Ok(Bytes {
        height,
        width,
        channels: 3,
        data,
    })
}

fn decode_jpeg(path: &Path, bytes: Vec<u8>) -> Result<Bytes> {
    let options = DecoderOptions::default().jpeg_set_out_colorspace(ColorSpace::RGB);
    let mut decoder = JpegDecoder::new_with_options(Cursor::new(bytes), options);
    let data = (decoder.decode())
        .map_err(|e| DataError::caused(path, "cannot decode the JPEG image", e))?;
    let info = decoder
        .info()
        .ok_or_else(|| DataError::file(path, "JPEG headers not decoded"))?;
    let (width, height) = (usize::from(info.width), usize::from(info.height));
    if data.len() != width * height * 3 {
        return Err(DataError::file(
            path,
            format!(
                "JPEG decoded to {} bytes; expected {width}x{height}x3",
                data.len()
            ),
        ));
    }
    Ok(Bytes {
        height,
        width,
        channels: 3,
        data,
    })
}
