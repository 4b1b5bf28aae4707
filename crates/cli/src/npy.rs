//! `.npy` files: float arrays (float32 or float64, either byte order, C or Fortran order) as f64
//! arrays and integer arrays of any width as i128 arrays, with errors that name the file and say
//! what was expected.
//!
//! Read here rather than through `ndarray-npy`, whose Python-literal parser (pest) was 18 of the
//! ~740 CPU seconds of a fresh release build (docs/performance.md, "First build"); the format is a
//! magic string, a dict literal with three keys and the raw data. The tests write their files
//! with `ndarray-npy`, so reader and writer come from apart.

use std::path::Path;

use crate::error::CliError;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};

/// The magic string every `.npy` file starts with.
const MAGIC: &[u8] = b"\x93NUMPY";

/// A parsed file: its element type, layout and the raw bytes of its data.
struct Npy<'a> {
    /// numpy's type string, e.g. `<f8`, `|u1`.
    descr: &'a str,
    fortran_order: bool,
    shape: Vec<usize>,
    data: &'a [u8],
}

/// Splits the file into its header's fields and its data; the error says what is malformed.
fn parse(bytes: &[u8]) -> Result<Npy<'_>, String> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("it does not start with numpy's magic string")?;
    let (len, start) = match rest.first() {
        Some(1) if rest.len() >= 4 => (u16::from_le_bytes([rest[2], rest[3]]) as usize, 4),
        Some(2 | 3) if rest.len() >= 6 => {
            let len = u32::from_le_bytes([rest[2], rest[3], rest[4], rest[5]]);
            (len as usize, 6)
        }
        Some(v) if (1..=3).contains(v) => return Err("the header is cut short".into()),
        Some(v) => return Err(format!("format version {v}, expected 1, 2 or 3")),
        None => return Err("the header is cut short".into()),
    };
    let header = rest
        .get(start..start + len)
        .ok_or("the header is cut short")?;
    let header = std::str::from_utf8(header).map_err(|_| "the header is not text")?;
    let descr = field(header, "descr")?;
    let descr = unquote(descr).ok_or_else(|| format!("descr {descr}, expected a quoted string"))?;
    let fortran_order = match field(header, "fortran_order")? {
        "True" => true,
        "False" => false,
        other => return Err(format!("fortran_order {other}, expected True or False")),
    };
    let shape = field(header, "shape")?;
    let dims = (shape.strip_prefix('(').and_then(|s| s.strip_suffix(')')))
        .ok_or_else(|| format!("shape {shape}, expected a tuple"))?;
    let shape = (dims.split(',').map(str::trim).filter(|d| !d.is_empty()))
        .map(|d| {
            d.parse()
                .map_err(|_| format!("shape dimension {d:?}, expected a count"))
        })
        .collect::<Result<_, String>>()?;
    Ok(Npy {
        descr,
        fortran_order,
        shape,
        data: &rest[start + len..],
    })
}

/// The value of `'key': value` in the header's dict literal, as written.
fn field<'h>(header: &'h str, key: &str) -> Result<&'h str, String> {
    let missing = || format!("the header has no {key:?}");
    let at = [format!("'{key}'"), format!("\"{key}\"")]
        .iter()
        .find_map(|k| header.find(k.as_str()).map(|i| i + k.len()))
        .ok_or_else(missing)?;
    let value = header[at..]
        .trim_start()
        .strip_prefix(':')
        .ok_or_else(missing)?
        .trim_start();
    let end = match value.chars().next() {
        Some('(') => value.find(')').map(|i| i + 1),
        Some(q @ ('\'' | '"')) => value[1..].find(q).map(|i| i + 2),
        _ => value.find([',', '}']),
    };
    Ok(value[..end.unwrap_or(value.len())].trim())
}

fn unquote(s: &str) -> Option<&str> {
    (s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .or_else(|| s.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
}

/// How one element of the file is decoded.
#[derive(Clone, Copy)]
enum Kind {
    Float,
    Signed,
    Unsigned,
}

/// The kind, width in bytes and whether the bytes are big-endian, of a type string.
fn element(descr: &str) -> Option<(Kind, usize, bool)> {
    let (order, code) = descr.split_at_checked(1)?;
    let big = match order {
        ">" => true,
        "<" | "|" | "=" => cfg!(target_endian = "big") && order == "=",
        _ => return None,
    };
    let (kind, width) = code.split_at_checked(1)?;
    let width: usize = width.parse().ok()?;
    let kind = match (kind, width) {
        ("f", 4 | 8) => Kind::Float,
        ("i", 1 | 2 | 4 | 8) => Kind::Signed,
        ("u", 1 | 2 | 4 | 8) => Kind::Unsigned,
        _ => return None,
    };
    Some((kind, width, big))
}

/// One element's bytes as the low bits of a u64.
fn bits(bytes: &[u8], big: bool) -> u64 {
    let mut le = [0u8; 8];
    le[..bytes.len()].copy_from_slice(bytes);
    if big {
        le[..bytes.len()].reverse();
    }
    u64::from_le_bytes(le)
}

/// Reads `path` when `accepts` its element kind, each element decoded by `value` from its kind,
/// its bits and its width in bits; any other element type is an error saying `expected`.
fn read<U>(
    path: &Path,
    expected: &str,
    accepts: fn(Kind) -> bool,
    value: fn(Kind, u64, u32) -> U,
) -> crate::error::Result<ArrayD<U>> {
    let at = path.display();
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::at(format_args!("{at}: cannot read the file"), e))?;
    // The reason, in words, is the source: `file: not a valid .npy file: reason`.
    let npy = parse(&bytes)
        .map_err(|why| CliError::at(format_args!("{at}: not a valid .npy file"), why))?;
    let (kind, width, big) = (element(npy.descr).filter(|&(kind, ..)| accepts(kind)))
        .ok_or_else(|| format!("{at}: '{}' array, expected {expected}", npy.descr))?;
    let bytes_needed = (npy.shape.iter())
        .try_fold(width, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            format!(
                "{at}: shape {:?} holds more elements than memory can",
                npy.shape
            )
        })?;
    let data = (npy.data.get(..bytes_needed)).ok_or_else(|| {
        format!("{at}: truncated: the data ends before the shape in the header says")
    })?;
    let values: Vec<U> = (data.chunks_exact(width))
        .map(|b| value(kind, bits(b, big), 8 * width as u32))
        .collect();
    let shape = IxDyn(&npy.shape).set_f(npy.fortran_order);
    Ok(ArrayD::from_shape_vec(shape, values).expect("one value per element of the shape"))
}

/// A float32 or float64 array as f64.
pub fn read_floats(path: &Path) -> crate::error::Result<ArrayD<f64>> {
    read(
        path,
        "float32 or float64",
        |kind| matches!(kind, Kind::Float),
        |_, raw, width| match width {
            32 => f64::from(f32::from_bits(raw as u32)),
            _ => f64::from_bits(raw),
        },
    )
}

/// An integer array of any width, signed or not, as i128.
pub fn read_integers(path: &Path) -> crate::error::Result<ArrayD<i128>> {
    integers(path, "integer labels")
}

/// Token ids: an integer array (int64 as `transformers` takes `input_ids`, though any width is
/// read), as i128.
pub fn read_token_ids(path: &Path) -> crate::error::Result<ArrayD<i128>> {
    integers(path, "int64 token ids")
}

/// An integer array as i128; any other element type is an error saying `expected`.
fn integers(path: &Path, expected: &str) -> crate::error::Result<ArrayD<i128>> {
    read(
        path,
        expected,
        |kind| !matches!(kind, Kind::Float),
        |kind, raw, width| match kind {
            // Sign-extended from the element's width.
            Kind::Signed => i128::from((raw << (64 - width)) as i64 >> (64 - width)),
            _ => i128::from(raw),
        },
    )
}

/// Integer labels `[n]`, matching `what` (named in the error).
pub(crate) fn load_labels(path: &Path, n: usize, what: &str) -> crate::error::Result<Vec<usize>> {
    let labels = read_integers(path)?;
    if labels.shape() != [n] {
        return Err(format!(
            "{}: shape {:?}, expected [{n}] to match {what}",
            path.display(),
            labels.shape(),
        )
        .into());
    }
    labels
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            usize::try_from(v).map_err(|_| {
                CliError::from(format!(
                    "{}: label {v} at index {i} is negative",
                    path.display()
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use ndarray::{Array2, ArrayD, IxDyn};
    use ndarray_npy::write_npy;

    use super::{read_floats, read_integers};
    use experiment::error_chain as chain;

    /// The shape, and the values in logical (C) order whatever the file's layout.
    fn flat<T: Copy>(array: ArrayD<T>) -> (Vec<usize>, Vec<T>) {
        (array.shape().to_vec(), array.iter().copied().collect())
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("uqformer-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// A version-1.0 file written by hand: `descr`, the shape, then `body` as it is.
    fn raw(name: &str, descr: &str, shape: &str, body: &[u8]) -> PathBuf {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend(body);
        let path = temp(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn floats_of_both_widths_and_orders_read_in_c_order() {
        let a = Array2::from_shape_vec((2, 3), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let f32_path = temp("a32.npy");
        write_npy(&f32_path, &a).unwrap();
        assert_eq!(
            flat(read_floats(&f32_path).unwrap()),
            (vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        );
        // The transpose is Fortran-contiguous and is written so; it reads back in C order.
        let t = a.mapv(f64::from).reversed_axes();
        let f64_path = temp("t64.npy");
        write_npy(&f64_path, &t).unwrap();
        assert_eq!(
            flat(read_floats(&f64_path).unwrap()),
            (vec![3, 2], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0])
        );
        let big = raw("big.npy", ">f8", "(1,)", &0.25f64.to_be_bytes());
        assert_eq!(flat(read_floats(&big).unwrap()), (vec![1], vec![0.25]));
    }

    #[test]
    fn integers_of_every_width_read_alike() {
        let values = [0i64, 3, 9];
        let check = |path: PathBuf| {
            assert_eq!(
                flat(read_integers(&path).unwrap()),
                (vec![3], vec![0, 3, 9])
            )
        };
        macro_rules! each {
            ($($t:ty),*) => {$(
                let path = temp(concat!("i-", stringify!($t), ".npy"));
                write_npy(&path, &ArrayD::from_shape_vec(IxDyn(&[3]), values.iter().map(|&v| v as $t).collect::<Vec<$t>>()).unwrap()).unwrap();
                check(path);
            )*};
        }
        each!(i8, i16, i32, i64, u8, u16, u32, u64);
        check(raw("be.npy", ">i2", "(3,)", &[0, 0, 0, 3, 0, 9]));
        let negative = raw("neg.npy", "|i1", "(1,)", &[0xff]);
        assert_eq!(flat(read_integers(&negative).unwrap()).1, [-1]);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let floats = temp("floats.npy");
        write_npy(&floats, &Array2::<f64>::zeros((2, 2))).unwrap();
        let e = chain(&read_integers(&floats).unwrap_err());
        assert!(
            e.contains("floats.npy") && e.contains("expected integer labels"),
            "{e}"
        );
        let ints = temp("ints.npy");
        write_npy(&ints, &Array2::<i32>::zeros((2, 2))).unwrap();
        let e = chain(&read_floats(&ints).unwrap_err());
        assert!(e.contains("expected float32 or float64"), "{e}");
        let short = raw("short.npy", "<f8", "(4,)", &[0; 12]);
        let e = chain(&read_floats(&short).unwrap_err());
        assert!(e.contains("short.npy: truncated"), "{e}");
        let e = chain(&read_floats(&temp("missing.npy")).unwrap_err());
        assert!(e.contains("missing.npy: cannot read the file: "), "{e}");
        assert_eq!(e.matches("missing.npy").count(), 1, "{e}");
        let junk = temp("junk.npy");
        std::fs::write(&junk, b"not numpy at all").unwrap();
        let e = chain(&read_floats(&junk).unwrap_err());
        // The reason is the source, after the file (named once).
        let expected = format!(
            "{}: not a valid .npy file: it does not start with numpy's magic string",
            junk.display()
        );
        assert_eq!(e, expected);
        let huge = raw("huge.npy", "<f8", "(4611686018427387904, 4)", &[0; 8]);
        let e = chain(&read_floats(&huge).unwrap_err());
        assert!(
            e.contains("huge.npy: shape") && e.contains("more elements"),
            "{e}"
        );
        let complex = raw("complex.npy", "<c16", "(1,)", &[0; 16]);
        let e = chain(&read_floats(&complex).unwrap_err());
        assert!(
            e.contains("'<c16' array, expected float32 or float64"),
            "{e}"
        );
    }

    #[test]
    fn version_2_headers_read_like_version_1() {
        // A 4-byte header length (numpy writes version 2 for headers over 65,535 bytes).
        let header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n";
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend((header.len() as u32).to_le_bytes());
        bytes.extend(header.as_bytes());
        [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .for_each(|v| bytes.extend(v.to_le_bytes()));
        let path = temp("v2.npy");
        std::fs::write(&path, bytes).unwrap();
        // Fortran order: the file holds the columns one after the other.
        assert_eq!(
            flat(read_floats(&path).unwrap()),
            (vec![2, 2], vec![1.0, 3.0, 2.0, 4.0])
        );
    }
}
