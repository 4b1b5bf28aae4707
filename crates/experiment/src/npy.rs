//! Minimal NumPy `.npy` reader and writer (format versions 1.0 to 3.0, C order).
//!
//! Reading accepts float (`f4`, `f8`) and integer (`i1`..`i8`, `u1`..`u8`, `b1`) arrays in either
//! byte order; floats come back as f64 and integers as i64, so callers check the kind they need.

use std::fmt;
use std::path::Path;

/// An array read from a `.npy` file.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub data: NpyData,
}

/// Element values, widened to 64 bits.
#[derive(Debug, Clone, PartialEq)]
pub enum NpyData {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

/// A `.npy` file that could not be read, with the path and what was wrong.
#[derive(Debug)]
pub struct NpyError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for NpyError {}

const MAGIC: &[u8] = b"\x93NUMPY";

/// Reads a whole `.npy` file.
pub fn read(path: &Path) -> Result<NpyArray, NpyError> {
    let err = |message: String| NpyError {
        path: path.display().to_string(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read file: {e}")))?;
    parse(&bytes).map_err(err)
}

fn parse(bytes: &[u8]) -> Result<NpyArray, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (missing the \\x93NUMPY magic string)".into());
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            let b = bytes.get(8..12).ok_or("truncated header")?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or("truncated header")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let descr = dict_value(header, "descr").ok_or("header has no 'descr'")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    if dict_value(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err(
            "Fortran-order arrays are not supported (save with np.ascontiguousarray)".into(),
        );
    }
    let shape = parse_shape(header)?;
    let count: usize = shape.iter().product();
    let body = &bytes[start + header_len..];
    let (order, kind, width) = parse_descr(descr)?;
    let expected = count * width;
    if body.len() != expected {
        return Err(format!(
            "data has {} bytes, expected {expected} for shape {shape:?} and dtype {descr} (truncated file?)",
            body.len()
        ));
    }
    let big = order == '>';
    let word = |chunk: &[u8]| {
        let mut b = [0u8; 8];
        if big {
            b[8 - width..].copy_from_slice(chunk);
            u64::from_be_bytes(b)
        } else {
            b[..width].copy_from_slice(chunk);
            u64::from_le_bytes(b)
        }
    };
    let words = body.chunks_exact(width).map(word);
    let data = match (kind, width) {
        ('f', 4) => NpyData::Float(words.map(|w| f32::from_bits(w as u32) as f64).collect()),
        ('f', 8) => NpyData::Float(words.map(f64::from_bits).collect()),
        ('u' | 'b', _) => NpyData::Int(words.map(|w| w as i64).collect()),
        ('i', _) => {
            let shift = 64 - 8 * width as u32;
            NpyData::Int(words.map(|w| ((w << shift) as i64) >> shift).collect())
        }
        _ => return Err(format!("unsupported dtype {descr}")),
    };
    Ok(NpyArray { shape, data })
}

/// Splits a descr such as `<f4` into (byte order, kind, width in bytes).
fn parse_descr(descr: &str) -> Result<(char, char, usize), String> {
    let mut chars = descr.chars();
    let order = chars.next().ok_or("empty dtype")?;
    let kind = chars.next().ok_or("dtype without a kind")?;
    let width: usize = chars
        .as_str()
        .parse()
        .map_err(|_| format!("unsupported dtype {descr}"))?;
    let ok = match kind {
        'f' => width == 4 || width == 8,
        'i' | 'u' => matches!(width, 1 | 2 | 4 | 8),
        'b' => width == 1,
        _ => false,
    };
    if !ok || !matches!(order, '<' | '>' | '|' | '=') {
        return Err(format!(
            "unsupported dtype {descr} (expected float32/64 or an integer type)"
        ));
    }
    Ok((if order == '>' { '>' } else { '<' }, kind, width))
}

/// The text after `'key':` in the header dictionary, up to the end of the dictionary.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let quoted = [format!("'{key}'"), format!("\"{key}\"")];
    let at = quoted
        .iter()
        .find_map(|k| header.find(k.as_str()).map(|i| i + k.len()))?;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    // A tuple value contains commas: hand back everything up to its closing parenthesis.
    Some(if rest.starts_with('(') {
        &rest[..=rest.find(')')?]
    } else {
        &rest[..end]
    })
}

fn parse_shape(header: &str) -> Result<Vec<usize>, String> {
    let tuple = dict_value(header, "shape").ok_or("header has no 'shape'")?;
    let inner = tuple.trim_start_matches('(').trim_end_matches(')');
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad shape {tuple}")))
        .collect()
}

/// Serialises an f32 array in `.npy` format version 1.0, little-endian, C order.
pub fn encode_f32(shape: &[usize], data: &[f32]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}");
    // Pad so that the data starts on a 64-byte boundary, header ending in a newline.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + 4 * data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    data.iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_header(descr: &str, shape: &str, body: &[u8]) -> Vec<u8> {
        with_order(descr, "False", shape, body)
    }

    fn with_order(descr: &str, fortran: &str, shape: &str, body: &[u8]) -> Vec<u8> {
        let header =
            format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}\n");
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn round_trips_f32() {
        let values = [0.25f32, -1.5, 3.0, 1e-7, 0.0, 42.0];
        let parsed = parse(&encode_f32(&[2, 3], &values)).unwrap();
        assert_eq!(parsed.shape, vec![2, 3]);
        let expected: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        assert_eq!(parsed.data, NpyData::Float(expected));
        assert_eq!(
            parse(&encode_f32(&[4], &values[..4])).unwrap().shape,
            vec![4]
        );
    }

    #[test]
    fn reads_integers_of_every_width_and_order() {
        let body: Vec<u8> = [-2i16, 7].iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = parse(&with_header("<i2", "(2,)", &body)).unwrap();
        assert_eq!(a.data, NpyData::Int(vec![-2, 7]));
        let body: Vec<u8> = [-3i64, 9].iter().flat_map(|v| v.to_be_bytes()).collect();
        let a = parse(&with_header(">i8", "(2,)", &body)).unwrap();
        assert_eq!(a.data, NpyData::Int(vec![-3, 9]));
        let a = parse(&with_header("|u1", "(3,)", &[0, 200, 9])).unwrap();
        assert_eq!(a.data, NpyData::Int(vec![0, 200, 9]));
        let body: Vec<u8> = [0.5f64].iter().flat_map(|v| v.to_be_bytes()).collect();
        let a = parse(&with_header(">f8", "(1, 1)", &body)).unwrap();
        assert_eq!((a.shape, a.data), (vec![1, 1], NpyData::Float(vec![0.5])));
    }

    #[test]
    fn rejects_bad_files_with_a_reason() {
        let truncated = with_header("<f4", "(2, 2)", &[0; 12]);
        assert!(parse(&truncated).unwrap_err().contains("expected 16"));
        assert!(
            parse(b"PK\x03\x04 not numpy")
                .unwrap_err()
                .contains("magic")
        );
        assert!(
            parse(&with_header("<c16", "(1,)", &[0; 16]))
                .unwrap_err()
                .contains("dtype")
        );
        let fortran = with_order("<f4", "True", "(1,)", &[0; 4]);
        assert!(parse(&fortran).unwrap_err().contains("Fortran"));
    }
}
