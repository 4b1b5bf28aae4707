//! CIFAR binary batches: CIFAR-10 records are one label byte then 3072 pixel bytes; CIFAR-100
//! records are a coarse label byte, a fine label byte, then 3072 pixel bytes. Pixels are stored
//! channel-major (1024 red, 1024 green, 1024 blue, each 32x32 row-major), i.e. already `[C, H, W]`.
//!
//! [`load_cifar_dir`] reads the binary archives' extracted folders as their authors distribute
//! them: `cifar-10-batches-bin/` (`data_batch_1.bin` .. `data_batch_5.bin`, `test_batch.bin`,
//! class names in `batches.meta.txt`) and `cifar-100-binary/` (`train.bin`, `test.bin`,
//! `fine_label_names.txt`, `coarse_label_names.txt`).

use std::path::{Path, PathBuf};

use crate::dataset::{ImageDataset, Pixels, WithClasses};
use crate::error::{DataError, Result};
use crate::file::read_bytes;

const IMAGE_BYTES: usize = 3 * 32 * 32;

/// Which CIFAR variant a file holds, and for CIFAR-100 which label to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CifarKind {
    /// CIFAR-10: 10 classes.
    Cifar10,
    /// CIFAR-100 with its 100 fine labels (the usual choice).
    Cifar100Fine,
    /// CIFAR-100 with its 20 coarse (superclass) labels.
    Cifar100Coarse,
}

impl CifarKind {
    fn label_bytes(self) -> usize {
        match self {
            CifarKind::Cifar10 => 1,
            CifarKind::Cifar100Fine | CifarKind::Cifar100Coarse => 2,
        }
    }

    /// Offset of the kept label inside a record.
    fn label_offset(self) -> usize {
        match self {
            CifarKind::Cifar10 | CifarKind::Cifar100Coarse => 0,
            CifarKind::Cifar100Fine => 1,
        }
    }

    /// Number of classes of the kept label.
    pub fn num_classes(self) -> usize {
        match self {
            CifarKind::Cifar10 => 10,
            CifarKind::Cifar100Fine => 100,
            CifarKind::Cifar100Coarse => 20,
        }
    }
}

/// The part of a CIFAR folder to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CifarSplit {
    /// 50,000 images.
    Train,
    /// 10,000 images.
    Test,
}

impl CifarKind {
    /// The folder the authors' binary archive extracts to.
    pub fn folder_name(self) -> &'static str {
        match self {
            CifarKind::Cifar10 => "cifar-10-batches-bin",
            CifarKind::Cifar100Fine | CifarKind::Cifar100Coarse => "cifar-100-binary",
        }
    }

    fn files(self, split: CifarSplit) -> Vec<String> {
        match (self, split) {
            (CifarKind::Cifar10, CifarSplit::Train) => {
                (1..=5).map(|i| format!("data_batch_{i}.bin")).collect()
            }
            (CifarKind::Cifar10, CifarSplit::Test) => vec!["test_batch.bin".into()],
            (_, CifarSplit::Train) => vec!["train.bin".into()],
            (_, CifarSplit::Test) => vec!["test.bin".into()],
        }
    }

    fn names_file(self) -> &'static str {
        match self {
            CifarKind::Cifar10 => "batches.meta.txt",
            CifarKind::Cifar100Fine => "fine_label_names.txt",
            CifarKind::Cifar100Coarse => "coarse_label_names.txt",
        }
    }
}

/// Reads one split of an extracted CIFAR binary archive with its class names. `dir` is the
/// extracted folder (`cifar-10-batches-bin`, `cifar-100-binary`) or the folder holding it.
/// The dataset is named after the folder. Errors name the missing or malformed file.
pub fn load_cifar_dir(
    dir: &Path,
    kind: CifarKind,
    split: CifarSplit,
) -> Result<WithClasses<ImageDataset>> {
    let nested = dir.join(kind.folder_name());
    let dir = if nested.is_dir() {
        nested
    } else {
        dir.to_path_buf()
    };
    let files: Vec<PathBuf> = kind.files(split).iter().map(|f| dir.join(f)).collect();
    let name = dir.file_name().map_or_else(
        || kind.folder_name().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let set = load_cifar(&files, kind, &name)?;
    let names_path = dir.join(kind.names_file());
    let text = String::from_utf8(read_bytes(&names_path)?)
        .map_err(|e| DataError::caused(&names_path, "not UTF-8 text", e))?;
    let classes: Vec<String> = (text.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if classes.len() != kind.num_classes() {
        return Err(DataError::file(
            &names_path,
            format!(
                "{} class names; expected {} (one a line)",
                classes.len(),
                kind.num_classes()
            ),
        ));
    }
    Ok(WithClasses { set, classes })
}

/// Reads CIFAR binary files (raw or gzip) in order into one `[N, 3, 32, 32]` dataset.
pub fn load_cifar<P: AsRef<Path>>(
    files: &[P],
    kind: CifarKind,
    name: &str,
) -> Result<ImageDataset> {
    if files.is_empty() {
        return Err(DataError::invalid(format!(
            "no CIFAR files given for dataset {name}"
        )));
    }
    let record = kind.label_bytes() + IMAGE_BYTES;
    let classes = kind.num_classes();
    let mut pixels = Vec::new();
    let mut labels = Vec::new();
    for path in files {
        let path = path.as_ref();
        let bytes = read_bytes(path)?;
        if bytes.is_empty() || !bytes.len().is_multiple_of(record) {
            return Err(DataError::file(
                path,
                format!(
                    "size {} bytes is not a positive multiple of the {kind:?} record size {record}",
                    bytes.len()
                ),
            ));
        }
        for (i, rec) in bytes.chunks_exact(record).enumerate() {
            let label = rec[kind.label_offset()];
            if usize::from(label) >= classes {
                return Err(DataError::file(
                    path,
                    format!("record {i}: label {label} is not below the {classes} classes"),
                ));
            }
            labels.push(u32::from(label));
            pixels.extend_from_slice(&rec[kind.label_bytes()..]);
        }
    }
    Ok(ImageDataset {
        name: name.to_string(),
        pixels: Pixels::U8(pixels),
        labels,
        dims: [3, 32, 32],
        num_classes: classes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose pixel bytes are `fill` and whose label bytes are `labels`.
    fn record(labels: &[u8], fill: u8) -> Vec<u8> {
        let mut r = labels.to_vec();
        r.extend(std::iter::repeat_n(fill, IMAGE_BYTES));
        r
    }

    #[test]
    fn cifar10_reads_records_across_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.bin");
        std::fs::write(&a, [record(&[3], 7), record(&[9], 8)].concat()).unwrap();
        std::fs::write(&b, record(&[0], 9)).unwrap();
        let d = load_cifar(&[&a, &b], CifarKind::Cifar10, "c10").unwrap();
        assert_eq!(d.labels, vec![3, 9, 0]);
        assert_eq!(d.dims, [3, 32, 32]);
        assert_eq!(d.num_classes, 10);
        assert_eq!(d.image_f32(1), vec![8.0 / 255.0; IMAGE_BYTES]);
    }

    #[test]
    fn cifar100_picks_fine_or_coarse_labels() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("train.bin");
        // Coarse 4, fine 42; pixel bytes count 0, 1, 2, ... so channel order is checkable.
        let mut rec = vec![4, 42];
        rec.extend((0..IMAGE_BYTES).map(|i| (i % 251) as u8));
        std::fs::write(&p, &rec).unwrap();
        let fine = load_cifar(&[&p], CifarKind::Cifar100Fine, "c100").unwrap();
        let coarse = load_cifar(&[&p], CifarKind::Cifar100Coarse, "c100").unwrap();
        assert_eq!((fine.labels[0], fine.num_classes), (42, 100));
        assert_eq!((coarse.labels[0], coarse.num_classes), (4, 20));
        assert_eq!(fine.pixels, Pixels::U8(rec[2..].to_vec()));
    }

    #[test]
    fn size_not_a_multiple_of_the_record_is_an_error_naming_file_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("short.bin");
        std::fs::write(&p, &record(&[1], 0)[..3000]).unwrap();
        let err = load_cifar(&[&p], CifarKind::Cifar10, "c")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("short.bin") && err.contains("3000") && err.contains("3073"),
            "{err}"
        );
        // A CIFAR-10 file read as CIFAR-100 is off by one byte per record.
        let q = dir.path().join("c10.bin");
        std::fs::write(&q, record(&[1], 0)).unwrap();
        let err = load_cifar(&[&q], CifarKind::Cifar100Fine, "c")
            .unwrap_err()
            .to_string();
        assert!(err.contains("c10.bin") && err.contains("3074"), "{err}");
    }

    #[test]
    fn extracted_folders_read_with_their_class_names() {
        let root = tempfile::tempdir().unwrap();
        let c10 = root.path().join("cifar-10-batches-bin");
        std::fs::create_dir(&c10).unwrap();
        for i in 1..=5u8 {
            std::fs::write(c10.join(format!("data_batch_{i}.bin")), record(&[i], i)).unwrap();
        }
        std::fs::write(c10.join("test_batch.bin"), record(&[9], 0)).unwrap();
        let names = "airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n\n";
        std::fs::write(c10.join("batches.meta.txt"), names).unwrap();
        // The extracted folder itself, or the folder holding it.
        for dir in [c10.as_path(), root.path()] {
            let train = load_cifar_dir(dir, CifarKind::Cifar10, CifarSplit::Train).unwrap();
            assert_eq!(train.set.labels, vec![1, 2, 3, 4, 5]);
            assert_eq!(train.set.image_f32(4), vec![5.0 / 255.0; IMAGE_BYTES]);
            assert_eq!(
                (train.classes.len(), train.classes[9].as_str()),
                (10, "truck")
            );
            assert_eq!(train.set.name, "cifar-10-batches-bin");
        }
        let test = load_cifar_dir(&c10, CifarKind::Cifar10, CifarSplit::Test).unwrap();
        assert_eq!(test.set.labels, vec![9]);

        let c100 = root.path().join("cifar-100-binary");
        std::fs::create_dir(&c100).unwrap();
        std::fs::write(c100.join("test.bin"), record(&[3, 77], 1)).unwrap();
        let fine: Vec<String> = (0..100).map(|i| format!("fine{i}")).collect();
        std::fs::write(c100.join("fine_label_names.txt"), fine.join("\n")).unwrap();
        let test = load_cifar_dir(&c100, CifarKind::Cifar100Fine, CifarSplit::Test).unwrap();
        assert_eq!(
            (test.set.labels[0], test.classes[77].as_str()),
            (77, "fine77")
        );
        // Missing files are named: the train records, then the coarse names.
        let err = load_cifar_dir(&c100, CifarKind::Cifar100Fine, CifarSplit::Train).unwrap_err();
        assert_eq!(err.path, Some(c100.join("train.bin")));
        let err = load_cifar_dir(&c100, CifarKind::Cifar100Coarse, CifarSplit::Test).unwrap_err();
        assert_eq!(err.path, Some(c100.join("coarse_label_names.txt")));
        // A names file with the wrong count.
        std::fs::write(c10.join("batches.meta.txt"), "cat\ndog\n").unwrap();
        let err = load_cifar_dir(&c10, CifarKind::Cifar10, CifarSplit::Test)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("batches.meta.txt: 2 class names; expected 10"),
            "{err}"
        );
    }

    #[test]
    fn out_of_range_label_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.bin");
        std::fs::write(&p, [record(&[1], 0), record(&[10], 0)].concat()).unwrap();
        let err = load_cifar(&[&p], CifarKind::Cifar10, "c")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.bin") && err.contains("record 1") && err.contains("label 10"),
            "{err}"
        );
    }
}
