//! `.npy` files through `ndarray-npy`: float arrays (float32 or float64, either byte order, C or
//! Fortran order) as f64 arrays and integer arrays of any width as i128 arrays, with errors that
//! name the file and say what was expected.

use std::path::Path;

use ndarray::ArrayD;
use ndarray_npy::{ReadNpyError, ReadableElement, read_npy};

/// Reads `path` as elements of type `T`, converted by `f`; a file of another element type is
/// `WrongDescriptor`, so that the caller can try the next type.
fn read_as<T: ReadableElement + Clone, U>(
    path: &Path,
    f: fn(T) -> U,
) -> Result<ArrayD<U>, ReadNpyError> {
    read_npy::<_, ArrayD<T>>(path).map(|a| a.mapv(f))
}

/// Reads a file as one element type, converted to `U`.
type Reader<U> = fn(&Path) -> Result<ArrayD<U>, ReadNpyError>;

/// The first of `tries` that reads the file's element type.
fn first_type<U>(path: &Path, tries: &[Reader<U>], expected: &str) -> Result<ArrayD<U>, String> {
    let mut last = None;
    for read in tries {
        match read(path) {
            Ok(array) => return Ok(array),
            Err(ReadNpyError::WrongDescriptor(d)) => last = Some(d),
            Err(e) => return Err(describe(path, &e)),
        }
    }
    let found = last.map_or_else(String::new, |d| format!("{d} "));
    Err(format!(
        "{}: {found}array, expected {expected}",
        path.display()
    ))
}

fn describe(path: &Path, e: &ReadNpyError) -> String {
    match e {
        ReadNpyError::Io(e) => format!("{}: cannot read the file: {e}", path.display()),
        ReadNpyError::MissingData => format!(
            "{}: truncated: the data ends before the shape in the header says",
            path.display()
        ),
        e => format!("{}: not a valid .npy file: {e}", path.display()),
    }
}

/// A float32 or float64 array as f64.
pub fn read_floats(path: &Path) -> Result<ArrayD<f64>, String> {
    first_type(
        path,
        &[
            |p| read_as(p, |x: f64| x),
            |p| read_as(p, |x: f32| f64::from(x)),
        ],
        "float32 or float64",
    )
}

/// An integer array of any width, signed or not, as i128.
pub fn read_integers(path: &Path) -> Result<ArrayD<i128>, String> {
    first_type(
        path,
        &[
            |p| read_as(p, |x: i64| i128::from(x)),
            |p| read_as(p, |x: i32| i128::from(x)),
            |p| read_as(p, |x: i16| i128::from(x)),
            |p| read_as(p, |x: i8| i128::from(x)),
            |p| read_as(p, |x: u64| i128::from(x)),
            |p| read_as(p, |x: u32| i128::from(x)),
            |p| read_as(p, |x: u16| i128::from(x)),
            |p| read_as(p, |x: u8| i128::from(x)),
        ],
        "integer labels",
    )
}

/// Integer labels `[n]`, matching `what` (named in the error).
pub(crate) fn load_labels(path: &Path, n: usize, what: &str) -> Result<Vec<usize>, String> {
    let labels = read_integers(path)?;
    if labels.shape() != [n] {
        return Err(format!(
            "{}: shape {:?}, expected [{n}] to match {what}",
            path.display(),
            labels.shape(),
        ));
    }
    labels
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            usize::try_from(v)
                .map_err(|_| format!("{}: label {v} at index {i} is negative", path.display()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use ndarray::{Array2, ArrayD, IxDyn};
    use ndarray_npy::write_npy;

    use super::{read_floats, read_integers};

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
        let e = read_integers(&floats).unwrap_err();
        assert!(
            e.contains("floats.npy") && e.contains("expected integer labels"),
            "{e}"
        );
        let ints = temp("ints.npy");
        write_npy(&ints, &Array2::<i32>::zeros((2, 2))).unwrap();
        let e = read_floats(&ints).unwrap_err();
        assert!(e.contains("expected float32 or float64"), "{e}");
        let short = raw("short.npy", "<f8", "(4,)", &[0; 12]);
        let e = read_floats(&short).unwrap_err();
        assert!(e.contains("short.npy: truncated"), "{e}");
        let e = read_floats(&temp("missing.npy")).unwrap_err();
        assert!(e.contains("missing.npy: cannot read the file"), "{e}");
        let junk = temp("junk.npy");
        std::fs::write(&junk, b"not numpy at all").unwrap();
        let e = read_floats(&junk).unwrap_err();
        assert!(e.contains("junk.npy: not a valid .npy file"), "{e}");
    }
}
